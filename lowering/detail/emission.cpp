// Pass 7, emission: the scheduled instruction DAG as a Program in the executor's conventions
// (nchunksperloop and the collective's spelling from model's collective table; scratch buffers
// packed by name; in place, every slot named by its home and the aliased buffer declared 0; a
// received value's source named in the peer's terms).
#include "lowering/detail/passes.h"
#include "model/collective_traits.h"

#include <algorithm>

namespace syncoll::lowering::detail {
namespace {

// Buffer references as the runtimes write them: named scratch buffers packed per rank in name
// order, and, in place, input and output slots named by their home slot (an in-place allreduce
// addresses only `i`, an allgather only `o`), the other buffer declared as 0 chunks.
class BufferLayout {
public:
  explicit BufferLayout(const DslProgram &p)
      : collective_(p.collective()), in_place_(p.options().in_place),
        size_(size_t(p.topology().num_ranks()), 0) {
    for (const auto &[key, size] : p.scratch_sizes()) {
      base_[key] = size_[size_t(key.first)];
      size_[size_t(key.first)] += size;
    }
  }
  BufferRef ref(RankId rank, const Buffer &b, int index) const {
    if (b.kind == BufferKind::Scratch) {
      auto it = base_.find({rank.value(), b.scratch});
      return BufferRef{BufferKind::Scratch, (it == base_.end() ? 0 : it->second) + index};
    }
    if (!in_place_)
      return BufferRef{b.kind, index};
    const AliasedSlot home = in_place_slot(collective_, rank, b.kind, index);
    return BufferRef{home.buffer, home.index};
  }
  int scratch_chunks(int rank) const { return size_[size_t(rank)]; }
  // Out of place, the collective's size; in place, 0 for the buffer that lives in the other.
  int declared_chunks(BufferKind b) const {
    const int size = buffer_chunks(collective_, b);
    return !in_place_ || in_place_home(collective_, b) == b ? size : 0;
  }

private:
  const CollectiveSpec &collective_;
  bool in_place_;
  std::map<std::pair<int, std::string>, int> base_;
  std::vector<int> size_;
};

} // namespace

Expected<Program> emit_program(const DslProgram &p, const LowerOptions &options,
                               const InstructionDag &dag, const ThreadBlockPlans &plans,
                               const Dependencies &deps) {
  const int P = p.topology().num_ranks();
  const BufferLayout layout(p);
  const CollectiveSpec &c = p.collective();
  ProgramDraft d;
  d.name = p.name();
  d.collective = std::string(collective_traits(c.kind()).executor_name);
  d.protocol = p.options().protocol;
  d.num_ranks = P;
  d.in_place = p.options().in_place;
  d.out_of_place = !p.options().in_place;
  d.min_bytes = options.min_bytes;
  d.max_bytes = options.max_bytes;
  d.chunks_per_loop = chunks_per_loop(c);
  int channels = 1;
  for (int r = 0; r < P; ++r) {
    RankProgram rp;
    rp.rank = RankId(r);
    rp.input_chunks = layout.declared_chunks(BufferKind::Input);
    rp.output_chunks = layout.declared_chunks(BufferKind::Output);
    rp.scratch_chunks = layout.scratch_chunks(r);
    const auto &rank_tbs = plans[size_t(r)];
    for (size_t t = 0; t < rank_tbs.size(); ++t) {
      const ThreadBlockPlan &tb = rank_tbs[t];
      channels = std::max(channels, tb.channel + 1);
      ThreadBlockBuilder b(TbId(int(t)), tb.send_peer, tb.recv_peer, ChannelId(tb.channel));
      for (int i : tb.steps) {
        const DagInstruction &in = dag.instructions[size_t(i)];
        const auto &w = deps.waits[size_t(i)];
        auto dep = [&](size_t k) {
          const auto &[ptb, pred] = w[k];
          return Dependency{TbId(ptb), StepIndex(deps.final_index[size_t(pred)])};
        };
        for (size_t k = 0; k + 1 < w.size(); ++k)
          b.step(OpType::Nop, {BufferKind::Input, -1}, {BufferKind::Input, -1}, 0, dep(k));
        // The source of a received value is the peer's memory: name it in the peer's terms.
        const RankId src_rank =
            in.op == OpType::Recv || in.op == OpType::RecvCopySend ? *in.recv_peer : in.rank;
        const RankId dst_rank = in.op == OpType::Send ? *in.send_peer : in.rank;
        b.step(in.op, layout.ref(src_rank, in.src_buffer, in.src_index),
               layout.ref(dst_rank, in.dst_buffer, in.dst_index), in.count,
               w.empty() ? std::nullopt : std::optional(dep(w.size() - 1)),
               deps.depended_on.contains(i));
      }
      rp.thread_blocks.push_back(b.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  d.num_channels = channels;
  return Program::create(std::move(d));
}

} // namespace syncoll::lowering::detail
