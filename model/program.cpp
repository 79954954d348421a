#include "model/program.h"

#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "model/topology.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace syncoll {
namespace {

constexpr bool in_op_order() {
  for (size_t i = 0; i < std::size(detail::kOpTraits); ++i)
    if (detail::kOpTraits[i].op != OpType(i))
      return false;
  return true;
}
static_assert(std::size(detail::kOpTraits) == size_t(OpType::Nop) + 1, "one row per step type");
static_assert(in_op_order(), "the step type table is out of OpType order");

} // namespace

namespace {

// The strides that make `next` the step after `step`, when the two differ in nothing else.
std::optional<StepRun> pair_run(const Instruction &step, const Instruction &next) {
  if (step.op != next.op || step.src.buffer != next.src.buffer ||
      step.dst.buffer != next.dst.buffer || step.count != next.count ||
      step.has_dep != next.has_dep || step.dependency.has_value() != next.dependency.has_value() ||
      (step.dependency && step.dependency->tb != next.dependency->tb) ||
      int64_t(next.declared_index) != int64_t(step.declared_index) + 1)
    return std::nullopt;
  const auto diff = [](int a, int b) -> std::optional<int> {
    const int64_t d = int64_t(b) - int64_t(a);
    if (d < INT32_MIN || d > INT32_MAX)
      return std::nullopt;
    return int(d);
  };
  const auto src = diff(step.src.offset, next.src.offset);
  const auto dst = diff(step.dst.offset, next.dst.offset);
  const auto dep = step.dependency
                       ? diff(step.dependency->step.value(), next.dependency->step.value())
                       : std::optional(0);
  if (!src || !dst || !dep)
    return std::nullopt;
  return StepRun{step, *src, *dst, *dep, 2};
}

// Whether `next` is step `run.length` of the run, computed without overflow.
bool extends(const StepRun &run, const Instruction &next) {
  const int64_t i = run.length;
  const auto at = [i](int base, int stride) { return int64_t(base) + i * stride; };
  const Instruction &f = run.first;
  return next.op == f.op && next.src.buffer == f.src.buffer && next.dst.buffer == f.dst.buffer &&
         next.count == f.count && next.has_dep == f.has_dep &&
         next.dependency.has_value() == f.dependency.has_value() &&
         (!f.dependency || (next.dependency->tb == f.dependency->tb &&
                            next.dependency->step.value() ==
                                at(f.dependency->step.value(), run.dependency_stride))) &&
         next.src.offset == at(f.src.offset, run.src_stride) &&
         next.dst.offset == at(f.dst.offset, run.dst_stride) &&
         next.declared_index == at(f.declared_index, 1);
}

} // namespace

StepList::StepList(std::span<const Instruction> steps) {
  for (const Instruction &in : steps)
    push_back(in);
}

Instruction StepList::operator[](size_t k) const {
  SYNCOLL_INVARIANT(k < size_, "step index past the thread block's steps");
  if (runs_.size() == size_)
    return runs_[k].first;
  const size_t r =
      size_t(std::upper_bound(begins_.begin(), begins_.end(), k) - begins_.begin()) - 1;
  return runs_[r].at(int(k - begins_[r]));
}

void StepList::push_back(const Instruction &step) {
  SYNCOLL_INVARIANT(size_ < size_t(INT32_MAX), "a thread block of more than 2^31 steps");
  if (!runs_.empty()) {
    StepRun &last = runs_.back();
    if (last.length >= 2 && extends(last, step)) {
      ++last.length;
      ++size_;
      return;
    }
    if (last.length == 1)
      if (auto pair = pair_run(last.first, step)) {
        last = *pair;
        ++size_;
        return;
      }
  }
  begins_.push_back(size_);
  runs_.push_back({step, 0, 0, 0, 1});
  ++size_;
}

void StepList::append(StepRun run, int length) {
  if (!run.first.dependency)
    run.dependency_stride = 0;
  // Step by step until the last run has the new run's strides; the rest extends it at once. This
  // builds the same runs as pushing every step.
  for (int i = 0; i < length; ++i) {
    push_back(run.at(i));
    const StepRun &last = runs_.back();
    if (i + 1 < length && last.length >= 2 && last.src_stride == run.src_stride &&
        last.dst_stride == run.dst_stride && last.dependency_stride == run.dependency_stride) {
      SYNCOLL_INVARIANT(size_ + size_t(length - 1 - i) < size_t(INT32_MAX),
                        "a thread block of more than 2^31 steps");
      runs_.back().length += length - 1 - i;
      size_ += size_t(length - 1 - i);
      return;
    }
  }
}

ThreadBlockBuilder::ThreadBlockBuilder(TbId id, std::optional<RankId> send_peer,
                                       std::optional<RankId> recv_peer, ChannelId channel) {
  tb_.id = id;
  tb_.send_peer = send_peer;
  tb_.recv_peer = recv_peer;
  tb_.channel = channel;
}

int ThreadBlockBuilder::step(OpType op, BufferRef src, BufferRef dst, int count,
                             std::optional<Dependency> dependency, bool has_dep) {
  Instruction in;
  in.op = op;
  in.src = src;
  in.dst = dst;
  in.count = count;
  in.dependency = dependency;
  in.has_dep = has_dep;
  in.declared_index = static_cast<int>(tb_.steps.size());
  tb_.steps.push_back(in);
  return in.declared_index;
}

void ThreadBlockBuilder::steps(OpType op, BufferRef src, int src_stride, BufferRef dst,
                               int dst_stride, int length, int count) {
  Instruction in;
  in.op = op;
  in.src = src;
  in.dst = dst;
  in.count = count;
  in.declared_index = static_cast<int>(tb_.steps.size());
  tb_.steps.append({in, src_stride, dst_stride, 0, length}, length);
}

int RankProgram::chunks(BufferKind buffer) const {
  switch (buffer) {
  case BufferKind::Input:
    return input_chunks;
  case BufferKind::Output:
    return output_chunks;
  case BufferKind::Scratch:
    return scratch_chunks;
  }
  SYNCOLL_UNREACHABLE("unknown buffer");
}

std::string_view protocol_name(Protocol p) {
  return protocol_traits(p).name;
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (const ProtocolTraits &t : all_protocol_traits())
    if (t.name == name)
      return t.protocol;
  return std::nullopt;
}

std::span<const OpTraits> all_op_traits() {
  return detail::kOpTraits;
}

std::string_view op_type_name(OpType op) {
  return op_traits(op).name;
}

std::optional<OpType> parse_op_type(std::string_view name) {
  for (const auto &o : detail::kOpTraits)
    if (o.name == name)
      return o.op;
  return std::nullopt;
}

std::string_view buffer_kind_name(BufferKind b) {
  switch (b) {
  case BufferKind::Input:
    return "i";
  case BufferKind::Output:
    return "o";
  case BufferKind::Scratch:
    return "s";
  }
  SYNCOLL_UNREACHABLE("buffer without a name");
}

std::optional<BufferKind> parse_buffer_kind(std::string_view name) {
  if (name == "i")
    return BufferKind::Input;
  if (name == "o")
    return BufferKind::Output;
  if (name == "s")
    return BufferKind::Scratch;
  return std::nullopt;
}

std::optional<CollectiveNameReading> parse_ir_collective_name(std::string_view name) {
  static constexpr std::string_view kExecutor[] = {
      "allreduce", "allgather", "reducescatter", "alltoall", "reduce",   "broadcast",
      "send",      "recv",      "gather",        "scatter",  "alltoallv"};
  for (auto n : kExecutor)
    if (n == name)
      return CollectiveNameReading{std::string(n), false};
  if (name == "reduce_scatter")
    return CollectiveNameReading{"reducescatter", true};
  if (name == "custom")
    return CollectiveNameReading{"custom", true};
  return std::nullopt;
}

namespace {

// Where a step's checks report: its rank, thread block and the thread block's pointer.
struct StepContext {
  int me;
  const ThreadBlock &tb;
  const RankProgram &rank;
  const std::string &tb_pointer;
};

// The rules on step `k` alone, and the executor's rule on chains of nop dependencies (`pending`:
// a nop before this step carried a dependency).
void check_step(const Instruction &in, size_t k, const StepContext &at, bool &pending,
                Diagnostics &diag) {
  // Built only for an error: a well-formed program of millions of steps formats nothing.
  const auto sat = [&] { return fmt::format("{}/steps/{}", at.tb_pointer, k); };
  const auto where = [&] {
    return fmt::format("rank {} tb {} step {}", at.me, at.tb.id.value(), k);
  };
  if (in.declared_index < 0)
    diag.error_at(sat() + "/s",
                  fmt::format("{}: s {} must not be negative", where(), in.declared_index));
  if (in.count < 0)
    diag.error_at(sat() + "/cnt",
                  fmt::format("{}: cnt {} must not be negative", where(), in.count));
  if (op_sends(in.op) && !at.tb.send_peer)
    diag.error_at(sat() + "/type",
                  fmt::format("{}: '{}' sends, but the thread block has no send peer", where(),
                              op_type_name(in.op)));
  if (op_receives(in.op) && !at.tb.recv_peer)
    diag.error_at(sat() + "/type",
                  fmt::format("{}: '{}' receives, but the thread block has no recv peer", where(),
                              op_type_name(in.op)));
  for (auto [ref, checked, buf_attr, off_attr] :
       {std::tuple{in.src, op_traits(in.op).parser_checks_src, "srcbuf", "srcoff"},
        std::tuple{in.dst, op_traits(in.op).parser_checks_dst, "dstbuf", "dstoff"}}) {
    if (ref.offset < -1)
      diag.error_at(sat() + "/" + off_attr,
                    fmt::format("{}: {} {} must be at least -1", where(), off_attr, ref.offset));
    else if (checked && ref.offset >= at.rank.chunks(ref.buffer))
      diag.error_at(sat() + "/" + off_attr,
                    fmt::format("{}: {} {} is past the end of buffer '{}' ({} chunks)", where(),
                                off_attr, ref.offset, buffer_kind_name(ref.buffer),
                                at.rank.chunks(ref.buffer)));
    else if (checked && ref.offset < 0)
      diag.error_at(sat() + "/" + off_attr, fmt::format("{}: '{}' needs a {} of at least 0",
                                                        where(), op_type_name(in.op), off_attr));
    (void)buf_attr;
  }
  if (in.dependency) {
    if (in.dependency->tb.value() < 0)
      diag.error_at(sat() + "/depid", fmt::format("{}: depid {} must be at least -1", where(),
                                                  in.dependency->tb.value()));
    if (in.dependency->step.value() < 0)
      diag.error_at(sat() + "/deps", fmt::format("{}: deps {} must be at least 0 when depid "
                                                 "is set",
                                                 where(), in.dependency->step.value()));
  }
  // The executor folds a nop's dependency into the next real step and rejects a chain of
  // them that ends on a step without its own dependency (docs/semantics.md, "Dependencies").
  if (in.op == OpType::Nop) {
    pending = pending || in.dependency.has_value();
  } else {
    if (pending && !in.dependency)
      diag.error_at(sat() + "/depid",
                    fmt::format("{}: a chain of nop dependencies must end on a step with "
                                "its own depid, as the executor requires",
                                where()));
    pending = false;
  }
}

} // namespace

Expected<Program> Program::create(ProgramDraft d) {
  Diagnostics diag;
  if (!parse_ir_collective_name(d.collective))
    diag.error_at("/coll", fmt::format("unknown collective '{}'", d.collective));
  if (d.num_ranks < 1 || d.num_ranks > kMaxRanks)
    return fail_at("/ngpus",
                   fmt::format("ngpus {} is out of range [1, {}]", d.num_ranks, kMaxRanks));
  if (d.num_channels < 1)
    diag.error_at("/nchannels", fmt::format("nchannels {} must be at least 1", d.num_channels));
  if (d.chunks_per_loop < 1)
    diag.error_at("/nchunksperloop",
                  fmt::format("nchunksperloop {} must be at least 1", d.chunks_per_loop));
  if (d.min_bytes < 0)
    diag.error_at("/minBytes", "minBytes must not be negative");
  if (d.max_bytes < 0)
    diag.error_at("/maxBytes", "maxBytes must not be negative");
  if (d.num_threads && (*d.num_threads <= 0 || *d.num_threads % 32 != 0))
    diag.error_at("/nthreads",
                  fmt::format("nthreads {} must be a positive multiple of 32", *d.num_threads));
  if (d.ranks.size() != size_t(d.num_ranks))
    diag.error_at("/gpus", fmt::format("ngpus is {} but the program has {} gpu elements",
                                       d.num_ranks, d.ranks.size()));
  std::set<int> seen_ranks;
  for (size_t g = 0; g < d.ranks.size(); ++g) {
    const RankProgram &rp = d.ranks[g];
    const std::string gat = fmt::format("/gpus/{}", g);
    const int me = rp.rank.value();
    if (me < 0 || me >= d.num_ranks) {
      diag.error_at(gat + "/id", fmt::format("gpu id {} is out of range [0, {})", me, d.num_ranks));
      continue;
    }
    if (!seen_ranks.insert(me).second)
      diag.error_at(gat + "/id", fmt::format("gpu id {} appears twice", me));
    for (auto [size, attr] :
         {std::pair{rp.input_chunks, "i_chunks"}, std::pair{rp.output_chunks, "o_chunks"},
          std::pair{rp.scratch_chunks, "s_chunks"}})
      if (size < 0)
        diag.error_at(gat + "/" + attr, fmt::format("{} {} must not be negative", attr, size));
    std::set<int> tb_ids;
    for (size_t t = 0; t < rp.thread_blocks.size(); ++t) {
      const ThreadBlock &tb = rp.thread_blocks[t];
      const std::string tat = fmt::format("{}/tbs/{}", gat, t);
      if (tb.id.value() < 0)
        diag.error_at(tat + "/id",
                      fmt::format("rank {}: tb id {} must not be negative", me, tb.id.value()));
      else if (!tb_ids.insert(tb.id.value()).second)
        diag.error_at(tat + "/id",
                      fmt::format("rank {}: tb id {} appears twice", me, tb.id.value()));
      for (auto [peer, attr] : {std::pair{tb.send_peer, "send"}, std::pair{tb.recv_peer, "recv"}}) {
        if (!peer)
          continue;
        if (peer->value() < 0 || peer->value() >= d.num_ranks)
          diag.error_at(tat + "/" + attr,
                        fmt::format("rank {} tb {}: {} peer {} is out of range [-1, {})", me,
                                    tb.id.value(), attr, peer->value(), d.num_ranks));
        else if (peer->value() == me)
          diag.error_at(tat + "/" + attr, fmt::format("rank {} tb {}: {} peer is the rank itself",
                                                      me, tb.id.value(), attr));
      }
      if (tb.channel.value() < 0)
        diag.error_at(tat + "/chan", fmt::format("rank {} tb {}: channel {} must not be negative",
                                                 me, tb.id.value(), tb.channel.value()));
      // Every rule on a step is monotone along a run (its offsets and dependency step are
      // linear): a run whose first and last steps pass passes; one that fails is checked step by
      // step, for the first bad step's position.
      bool pending_nop_dependency = false;
      for (size_t r = 0; r < tb.steps.runs().size(); ++r) {
        const StepRun &run = tb.steps.runs()[r];
        const size_t begin = tb.steps.run_begin(r);
        StepContext at{me, tb, rp, tat};
        Diagnostics probe;
        bool pending = pending_nop_dependency;
        check_step(run.first, begin, at, pending, probe);
        if (run.length > 1)
          check_step(run.at(run.length - 1), begin + size_t(run.length) - 1, at, pending, probe);
        if (!probe.has_errors()) {
          pending_nop_dependency = pending;
          continue;
        }
        for (int i = 0; i < run.length; ++i)
          check_step(run.at(i), begin + size_t(i), at, pending_nop_dependency, diag);
      }
    }
    if (!tb_ids.empty() && (*tb_ids.begin() != 0 || *tb_ids.rbegin() + 1 != int(tb_ids.size())))
      diag.error_at(gat, fmt::format("rank {}: tb ids must be contiguous from 0; found {} ids "
                                     "ranging {}..{}",
                                     me, tb_ids.size(), *tb_ids.begin(), *tb_ids.rbegin()));
  }
  if (diag.has_errors())
    return tl::unexpected(diag);

  Program p;
  p.d_ = std::move(d);
  std::sort(p.d_.ranks.begin(), p.d_.ranks.end(),
            [](const RankProgram &a, const RankProgram &b) { return a.rank < b.rank; });
  for (auto &rp : p.d_.ranks)
    std::sort(rp.thread_blocks.begin(), rp.thread_blocks.end(),
              [](const ThreadBlock &a, const ThreadBlock &b) { return a.id < b.id; });
  return p;
}

const RankProgram &Program::rank(RankId r) const {
  SYNCOLL_INVARIANT(r.value() >= 0 && r.index() < d_.ranks.size(), "rank out of range");
  return d_.ranks[r.index()];
}

} // namespace syncoll
