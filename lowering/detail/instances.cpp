// Pass 8, instances (GC3 section 5.3, msccl-tools' interleaved replication): instance i of input
// or output chunk k is chunk k * N + i, so each instance is the same collective on every N-th
// chunk; scratch gets one block per instance, channels and thread blocks are offset per
// instance, and a step of several chunks becomes one step per chunk (its chunks are no longer
// adjacent).
#include "lowering/detail/passes.h"

#include <fmt/format.h>

namespace syncoll::lowering::detail {
namespace {

// Where step `dep.step` of a thread block ends up once multi-chunk steps are split.
int depended_final(const Program &one, RankId rank, const Dependency &dep) {
  const ThreadBlock &tb = one.rank(rank).thread_blocks[dep.tb.index()];
  int at = 0;
  for (int k = 0; k <= dep.step.value(); ++k) {
    const Instruction &in = tb.steps[size_t(k)];
    at += in.op == OpType::Nop ? 1 : in.count;
  }
  return at - 1;
}

ThreadBlock replicate_thread_block(const Program &one, const RankProgram &rp, const ThreadBlock &tb,
                                   int instance, int instances, int channels_per_instance) {
  const int i = instance, N = instances;
  const int T = int(rp.thread_blocks.size());
  const int S = rp.scratch_chunks;
  ThreadBlockBuilder b(TbId(i * T + tb.id.value()), tb.send_peer, tb.recv_peer,
                       ChannelId(i * channels_per_instance + tb.channel.value()));
  for (const Instruction &in : tb.steps) {
    auto map = [&](BufferRef r, int j) {
      if (r.offset < 0)
        return r;
      if (r.buffer == BufferKind::Scratch)
        return BufferRef{r.buffer, i * S + r.offset + j};
      return BufferRef{r.buffer, (r.offset + j) * N + i};
    };
    std::optional<Dependency> dep;
    if (in.dependency)
      dep = Dependency{TbId(i * T + in.dependency->tb.value()),
                       StepIndex(depended_final(one, rp.rank, *in.dependency))};
    if (in.op == OpType::Nop) {
      b.step(OpType::Nop, in.src, in.dst, 0, dep, in.has_dep);
      continue;
    }
    for (int j = 0; j < in.count; ++j)
      b.step(in.op, map(in.src, j), map(in.dst, j), 1, j == 0 ? dep : std::nullopt,
             in.has_dep && j == in.count - 1);
  }
  return b.take();
}

} // namespace

Expected<std::pair<Program, CollectiveSpec>> replicate(const Program &one, const CollectiveSpec &c,
                                                       int N) {
  if (c.kind() == CollectiveKind::Custom)
    return fail({}, "instances need a standard collective (a custom one has no N-times-finer "
                    "form)");
  SYNCOLL_TRY(scaled,
              make_collective(c.kind(), c.num_ranks(), c.chunk_factor() * N,
                              c.root() ? std::optional<int>(c.root()->value()) : std::nullopt));
  ProgramDraft d = one.draft();
  const int channels_per_instance = d.num_channels;
  d.chunks_per_loop *= N;
  d.num_channels *= N;
  if (d.num_channels > kMaxChannelIndex)
    return fail(
        {}, fmt::format("{} instances need {} channels; the runtime has 32", N, d.num_channels));
  for (RankProgram &rp : d.ranks) {
    const RankProgram original = rp;
    rp.input_chunks *= N;
    rp.output_chunks *= N;
    rp.scratch_chunks *= N;
    rp.thread_blocks.clear();
    for (int i = 0; i < N; ++i)
      for (const ThreadBlock &tb : original.thread_blocks)
        rp.thread_blocks.push_back(
            replicate_thread_block(one, original, tb, i, N, channels_per_instance));
  }
  SYNCOLL_TRY(program, Program::create(std::move(d)));
  return std::make_pair(std::move(program), std::move(scaled));
}

} // namespace syncoll::lowering::detail
