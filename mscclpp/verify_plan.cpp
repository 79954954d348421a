// One execution of a plan's thread blocks (a fair interleaving, each blocked operation retried
// until nothing moves), carrying chunk values for the postcondition and two vector clocks per
// thread block for the races: the data clock (what a thread block's writes are visible to) and
// the execution clock (what it has finished before). A signal orders both; a relaxed signal or
// wait orders execution only (docs/semantics.md, "MSCCL++ execution plans").
#include "mscclpp/verify_plan.h"

#include "model/invariant.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace syncoll::mscclpp {
namespace {

using verifier::Property;
using verifier::VerdictKind;

// A chunk's value: the input chunks summed into it (rank x 65536 + chunk), sorted; none when
// nothing was ever written there.
using Value = std::optional<std::vector<uint32_t>>;
constexpr uint32_t kChunkStride = 1 << 16;

Value sum(const Value &a, const Value &b) {
  if (!a || !b)
    return std::nullopt;
  std::vector<uint32_t> out;
  std::merge(a->begin(), a->end(), b->begin(), b->end(), std::back_inserter(out));
  return out;
}

std::string describe(const Value &v) {
  if (!v)
    return "nothing written";
  std::vector<std::string> parts;
  for (uint32_t c : *v)
    parts.push_back(fmt::format("GPU {} input chunk {}", c / kChunkStride, c % kChunkStride));
  return fmt::format("{}", fmt::join(parts, " + "));
}

using Clock = std::vector<int>;
void join(Clock &into, const Clock &from) {
  for (size_t i = 0; i < into.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

struct Access {
  int tb = 0;       ///< global thread block
  int event = 0;    ///< its event number (1-based)
  int complete = 0; ///< a port put's source read: the flush that ends it (0: none yet)
  bool writes = false;
  bool pending = false;  ///< a port put's source read no flush has ended yet
  bool by_proxy = false; ///< a port put's source read (ended by a flush)
  int group_index = 0, group_size = 1;
  std::shared_ptr<const Clock> data, exec; ///< the thread block's clocks at the event
  std::string what;
};

// One thread block's operations in order, pipelines' bodies inlined once.
struct Step {
  const PlanOp *op = nullptr;
  std::string where; ///< "op 3" or "op 2.1" (a pipeline's body)
};

struct Tb {
  int rank = 0;
  const PlanThreadBlock *tb = nullptr;
  std::vector<Step> steps;
  size_t next = 0;
  Clock data, exec;
  std::map<std::pair<ChannelKind, int>, int> waits_done; ///< per channel of the GPU
  std::vector<size_t> pending_reads;                     ///< accesses of port puts to flush
  bool at_barrier = false;
  std::string blocked; ///< why it cannot go on, when it cannot
};

struct Signal {
  std::shared_ptr<const Clock> data, exec;
  bool relaxed = false;
};

class Execution {
public:
  explicit Execution(const ExecutionPlan &plan) : plan_(plan) {
    int base = 0;
    for (const PlanGpu &g : plan.gpus) {
      bases_.push_back(base);
      base += g.input_chunks + g.output_chunks + g.scratch_chunks;
    }
    values_.assign(size_t(base), std::nullopt);
    accesses_.resize(size_t(base));
    for (const PlanGpu &g : plan.gpus)
      for (const PlanThreadBlock &tb : g.threadblocks) {
        Tb t;
        t.rank = g.id;
        t.tb = &tb;
        for (size_t k = 0; k < tb.ops.size(); ++k) {
          t.steps.push_back({&tb.ops[k], fmt::format("op {}", k)});
          for (size_t j = 0; j < tb.ops[k].ops.size(); ++j)
            t.steps.push_back({&tb.ops[k].ops[j], fmt::format("op {}.{}", k, j)});
        }
        tbs_.push_back(std::move(t));
      }
    // Clock components: the thread blocks, then each GPU's launch (one event before all of its
    // thread blocks: the user's writes of its input, the last reads of its buffers).
    const size_t components = tbs_.size() + plan.gpus.size();
    for (Tb &t : tbs_) {
      t.data = t.exec = Clock(components, 0);
      t.data[launch(t.rank)] = t.exec[launch(t.rank)] = 1;
    }
    for (const PlanGpu &g : plan.gpus) {
      semaphores_.push_back(g.semaphores);
      Clock at(components, 0);
      at[launch(g.id)] = 1;
      auto clock = std::make_shared<const Clock>(at);
      // With a double scratch buffer, calls alternate halves: the call before last, which
      // used this half, is ordered before this one by the last call's own synchronization.
      for (PlanBuffer b : {PlanBuffer::Input, PlanBuffer::Output, PlanBuffer::Scratch})
        for (int k = 0; k < (b == PlanBuffer::Scratch && plan.double_scratch ? 0 : g.chunks(b));
             ++k) {
          const size_t loc = location(g.id, b, k);
          const bool input = b == PlanBuffer::Input;
          if (input)
            values_[loc] = std::vector<uint32_t>{uint32_t(g.id) * kChunkStride + uint32_t(k)};
          accesses_[loc].push_back(
              {int(launch(g.id)), 1, 1, input, false, false, 0, 1, clock, clock,
               fmt::format("GPU {}'s {} before its kernel ({} {} chunk {})", g.id,
                           input ? "user writing its input" : "last use of its buffers",
                           input ? "writes" : "reads", plan_buffer_name(b), k)});
        }
    }
  }

  size_t launch(int rank) const { return tbs_.size() + size_t(rank); }

  // Each GPU's kernel ends once all its thread blocks have: the user reads its output then,
  // and every write into it must be visible by then.
  void finish() {
    for (const PlanGpu &g : plan_.gpus) {
      Clock data(tbs_.size() + plan_.gpus.size(), 0), exec = data;
      data[launch(g.id)] = exec[launch(g.id)] = 1;
      for (const Tb &t : tbs_)
        if (t.rank == g.id) {
          join(data, t.data);
          join(exec, t.exec);
        }
      auto d = std::make_shared<const Clock>(data);
      auto e = std::make_shared<const Clock>(exec);
      for (int k = 0; k < g.output_chunks; ++k)
        accesses_[location(g.id, PlanBuffer::Output, k)].push_back(
            {int(launch(g.id)), 2, 2, false, false, false, 0, 1, d, e,
             fmt::format("GPU {}'s user reading output chunk {} after its kernel", g.id, k)});
    }
  }

  void run() {
    for (bool moved = true; moved && unmodelled_.empty();) {
      moved = false;
      for (size_t t = 0; t < tbs_.size() && unmodelled_.empty(); ++t)
        while (tbs_[t].next < tbs_[t].steps.size() && unmodelled_.empty() && step(int(t)))
          moved = true;
    }
  }

  const ExecutionPlan &plan_;
  std::vector<int> bases_;
  std::vector<Value> values_;
  std::vector<std::vector<Access>> accesses_;
  std::vector<Tb> tbs_;
  std::vector<std::vector<int>> semaphores_;
  std::map<std::tuple<int, ChannelKind, int>, std::vector<Signal>> inbound_;
  std::map<std::pair<int, int>, std::vector<int>> barriers_; ///< (rank, id): arrived tbs
  /// (rank, semaphore): its tokens not yet taken, each with the clocks its release carried
  /// (data, execution; empty for an initial token).
  std::map<std::pair<int, int>, std::deque<std::pair<Clock, Clock>>> semaphore_tokens_;
  std::set<std::pair<int, int>> taken_initial_;
  std::vector<std::string> structure_;
  std::string unmodelled_;

  // The physical chunk of a GPU's buffer: in place, the input and output share memory as
  // MSCCL++'s executor is called (Allgather: input = output chunk rank; ReduceScatter: output =
  // input chunk rank; the others: input = output).
  size_t location(int rank, PlanBuffer buffer, int chunk) const {
    const PlanGpu &g = plan_.gpus[size_t(rank)];
    if (plan_.in_place) {
      if (plan_.collective == CollectiveKind::ReduceScatter && buffer == PlanBuffer::Output)
        return location_raw(rank, PlanBuffer::Input, rank * g.output_chunks + chunk);
      if (plan_.collective == CollectiveKind::Allgather && buffer == PlanBuffer::Input)
        return location_raw(rank, PlanBuffer::Output, rank * g.input_chunks + chunk);
      if (plan_.collective != CollectiveKind::ReduceScatter &&
          plan_.collective != CollectiveKind::Allgather && buffer == PlanBuffer::Input)
        return location_raw(rank, PlanBuffer::Output, chunk);
    }
    return location_raw(rank, buffer, chunk);
  }
  size_t location_raw(int rank, PlanBuffer buffer, int chunk) const {
    const PlanGpu &g = plan_.gpus[size_t(rank)];
    const int offset = buffer == PlanBuffer::Input    ? 0
                       : buffer == PlanBuffer::Output ? g.input_chunks
                                                      : g.input_chunks + g.output_chunks;
    const int limit = g.chunks(buffer);
    SYNCOLL_INVARIANT(chunk >= 0, "a chunk index is not negative");
    // An in-place alias past its buffer is a structural issue found before execution.
    return size_t(bases_[size_t(rank)] + offset + std::min(chunk, std::max(0, limit - 1)));
  }

  // The GPU's channel of `kind` that a thread block's channel `index` is, and its peer.
  std::optional<std::pair<int, int>> channel(const Tb &t, ChannelKind kind, int index) const {
    for (const ThreadBlockChannels &c : t.tb->channels)
      if (c.kind == kind) {
        if (index < int(c.ids.size())) {
          const int gpu_channel = c.ids[size_t(index)];
          const auto peer = plan_.gpus[size_t(t.rank)].channel_peer(kind, gpu_channel);
          if (!peer)
            return std::nullopt;
          return std::pair{gpu_channel, *peer};
        }
        index -= int(c.ids.size());
      }
    return std::nullopt;
  }

  // The peer's channel that GPU `rank`'s channel `k` (to `peer`) is paired with: the m-th
  // channel from one to the other pairs with the m-th back.
  std::optional<int> partner(int rank, ChannelKind kind, int k, int peer) const {
    const PlanGpu &g = plan_.gpus[size_t(rank)];
    int m = 0;
    for (int j = 0; j < k; ++j)
      m += g.channel_peer(kind, j) == peer ? 1 : 0;
    const PlanGpu &p = plan_.gpus[size_t(peer)];
    for (int j = 0, seen = 0; j < p.channel_count(kind); ++j)
      if (p.channel_peer(kind, j) == rank && seen++ == m)
        return j;
    return std::nullopt;
  }

  struct Slice {
    int rank = 0;
    PlanBuffer buffer = PlanBuffer::Input;
    int index = 0, size = 1;
  };
  std::optional<Slice> resolve(const Tb &t, const PlanOp &op, const BufferSlice &s, size_t i) {
    if (s.switch_channel) {
      unmodelled_ = "NVLS (switch channels)";
      return std::nullopt;
    }
    if (s.local)
      return Slice{t.rank, *s.local, s.index, s.size};
    int remaining = *s.remote;
    for (const ThreadBlockRemoteBuffers &r : t.tb->remote_buffers)
      if (r.access == op.channel_kind) {
        if (remaining < int(r.ids.size())) {
          const PlanRemoteBuffer &rb =
              plan_.gpus[size_t(t.rank)].remote_buffers[size_t(r.ids[size_t(remaining)])];
          if (!op.channels.empty()) {
            const auto ch =
                channel(t, op.channel_kind, op.channels[std::min(i, op.channels.size() - 1)]);
            if (ch && ch->second != rb.rank)
              structure_.push_back(fmt::format(
                  "GPU {} tb {} {}: reaches GPU {}'s buffer {} through a {} channel to GPU {}",
                  t.rank, t.tb->id, where(t), rb.rank, plan_buffer_name(rb.buffer),
                  channel_kind_name(op.channel_kind), ch->second));
          }
          return Slice{rb.rank, rb.buffer, s.index, s.size};
        }
        remaining -= int(r.ids.size());
      }
    SYNCOLL_UNREACHABLE("the reader checked every remote buffer reference");
  }

  std::string where(const Tb &t) const { return t.steps[t.next].where; }

  void access(int ti, const Slice &s, bool writes, int event, const PlanOp &op, bool pending) {
    Tb &t = tbs_[size_t(ti)];
    auto data = std::make_shared<const Clock>(t.data);
    auto exec = std::make_shared<const Clock>(t.exec);
    for (int k = s.index; k < s.index + s.size; ++k) {
      const size_t loc = location(s.rank, s.buffer, k);
      accesses_[loc].push_back(
          {ti, event, pending ? 0 : event, writes, pending, pending, op.group_index, op.group_size,
           data, exec,
           fmt::format("GPU {} tb {} {} ({}) {} GPU {}'s {} chunk {}", t.rank, t.tb->id, where(t),
                       op_traits(op.kind).name, writes ? "writes" : "reads", s.rank,
                       plan_buffer_name(s.buffer), k)});
      if (pending)
        t.pending_reads.push_back(loc * 1'000'000 + (accesses_[loc].size() - 1));
    }
  }

  std::vector<Value> read(const Slice &s) const {
    std::vector<Value> out;
    for (int k = s.index; k < s.index + s.size; ++k)
      out.push_back(values_[location(s.rank, s.buffer, k)]);
    return out;
  }

  bool step(int ti);
};

bool Execution::step(int ti) {
  Tb &t = tbs_[size_t(ti)];
  const PlanOp &op = *t.steps[t.next].op;
  const OpTraits &traits = op_traits(op.kind);
  if (traits.packets) {
    unmodelled_ = fmt::format("packet operations (LL: '{}')", traits.name);
    return false;
  }
  // Blocking operations first: nothing happens until they can go on.
  if (op.kind == OpKind::Wait || op.kind == OpKind::RelaxedWait) {
    for (int c : op.channels) {
      const auto ch = channel(t, op.channel_kind, c);
      const int k = ch ? ch->first : -1;
      const auto &got = inbound_[{t.rank, op.channel_kind, k}];
      if (int(got.size()) <= t.waits_done[{op.channel_kind, k}]) {
        t.blocked =
            fmt::format("{} ({}) on {} channel {} from GPU {}: signalled {} time(s), "
                        "this is wait {}",
                        where(t), traits.name, channel_kind_name(op.channel_kind), c,
                        ch ? ch->second : -1, got.size(), t.waits_done[{op.channel_kind, k}] + 1);
        return false;
      }
    }
  }
  if (op.kind == OpKind::SemAcquire)
    for (int s : op.semaphores)
      if (semaphores_[size_t(t.rank)][size_t(s)] <= 0) {
        t.blocked = fmt::format("{} (sem_acquire) on semaphore {}: never released", where(t), s);
        return false;
      }
  if (op.kind == OpKind::Barrier) {
    auto &arrived = barriers_[{t.rank, op.barrier_id.value_or(0)}];
    if (!t.at_barrier) {
      t.at_barrier = true;
      arrived.push_back(ti);
    }
    const int needed =
        op.barrier_threadblocks.value_or(int(plan_.gpus[size_t(t.rank)].threadblocks.size()));
    if (int(arrived.size()) < needed) {
      t.blocked = fmt::format("{} (barrier {}): {} of {} thread blocks arrived", where(t),
                              op.barrier_id.value_or(0), arrived.size(), needed);
      return false;
    }
    Clock data(tbs_[size_t(ti)].data.size(), 0), exec = data;
    for (int a : arrived) {
      join(data, tbs_[size_t(a)].data);
      join(exec, tbs_[size_t(a)].exec);
    }
    for (int a : arrived) {
      tbs_[size_t(a)].data = data;
      tbs_[size_t(a)].exec = exec;
      tbs_[size_t(a)].at_barrier = false;
      tbs_[size_t(a)].blocked.clear();
      ++tbs_[size_t(a)].data[size_t(a)];
      ++tbs_[size_t(a)].exec[size_t(a)];
      ++tbs_[size_t(a)].next;
    }
    arrived.clear();
    return true;
  }
  t.blocked.clear();
  // The operation happens: its own event, then what it takes from others.
  const int event = ++t.data[size_t(ti)];
  t.exec[size_t(ti)] = event;
  if (op.kind == OpKind::Wait || op.kind == OpKind::RelaxedWait) {
    for (int c : op.channels) {
      const auto ch = channel(t, op.channel_kind, c);
      const int k = ch ? ch->first : -1;
      const Signal &s =
          inbound_[{t.rank, op.channel_kind, k}][size_t(t.waits_done[{op.channel_kind, k}]++)];
      join(t.exec, *s.exec);
      if (!s.relaxed && op.kind == OpKind::Wait)
        join(t.data, *s.data);
    }
  } else if (op.kind == OpKind::SemAcquire || op.kind == OpKind::SemRelease) {
    for (int s : op.semaphores)
      semaphores_[size_t(t.rank)][size_t(s)] += op.kind == OpKind::SemAcquire ? -1 : 1;
    // A release publishes what came before it and the acquire that takes its token sees it
    // (a semaphore's fences), tokens taken in the order given; the initial ones carry nothing.
    for (int s : op.semaphores) {
      auto &tokens = semaphore_tokens_[{t.rank, s}];
      if (tokens.empty() && taken_initial_.insert({t.rank, s}).second)
        for (int k = 0; k < plan_.gpus[size_t(t.rank)].semaphores[size_t(s)]; ++k)
          tokens.emplace_back();
      if (op.kind == OpKind::SemRelease) {
        tokens.emplace_back(t.data, t.exec);
      } else {
        SYNCOLL_INVARIANT(!tokens.empty(), "an acquire goes on only with a token");
        if (!tokens.front().first.empty()) {
          join(t.data, tokens.front().first);
          join(t.exec, tokens.front().second);
        }
        tokens.pop_front();
      }
    }
  } else if (op.kind == OpKind::Flush) {
    for (size_t code : t.pending_reads) {
      Access &a = accesses_[code / 1'000'000][code % 1'000'000];
      a.complete = event;
      a.pending = false;
    }
    t.pending_reads.clear();
  }
  // Data: the sources' values combined into every destination.
  if (!op.src.empty() || !op.dst.empty()) {
    std::vector<Slice> src, dst;
    // A list's k-th peer's slice goes through the operation's k-th channel.
    for (const auto &[slices, out] : {std::pair{&op.src, &src}, std::pair{&op.dst, &dst}}) {
      size_t remote = 0;
      for (const BufferSlice &slice : *slices)
        if (auto s = resolve(t, op, slice, slice.remote ? remote++ : 0))
          out->push_back(*s);
    }
    if (!unmodelled_.empty())
      return false;
    const bool reduces = op.kind == OpKind::Reduce || op.kind == OpKind::ReduceSend ||
                         op.kind == OpKind::ReadReduce || op.kind == OpKind::ReadReduceSend;
    const bool port_put = op.channel_kind == ChannelKind::Port;
    std::vector<Value> result;
    for (const Slice &s : src) {
      std::vector<Value> v = read(s);
      if (result.empty())
        result = std::move(v);
      else if (reduces && v.size() == result.size())
        for (size_t k = 0; k < v.size(); ++k)
          result[k] = sum(result[k], v[k]);
      if (!reduces && src.size() > 1 && dst.size() == src.size())
        break; // slice i goes to destination i below
    }
    for (size_t i = 0; i < src.size(); ++i)
      access(ti, src[i], false, event, op, port_put && op.kind != OpKind::PutWithSignalAndFlush);
    for (size_t i = 0; i < dst.size(); ++i) {
      const std::vector<Value> v = !reduces && src.size() == dst.size() ? read(src[i]) : result;
      if (int(v.size()) != dst[i].size) {
        structure_.push_back(fmt::format("GPU {} tb {} {} ({}): moves {} chunk(s) into {}", t.rank,
                                         t.tb->id, where(t), traits.name, v.size(), dst[i].size));
        continue;
      }
      for (int k = 0; k < dst[i].size; ++k)
        values_[location(dst[i].rank, dst[i].buffer, dst[i].index + k)] = v[size_t(k)];
      access(ti, dst[i], true, event, op, false);
    }
  }
  // Signals last: they carry what the operation did.
  if (op.kind == OpKind::Signal || op.kind == OpKind::RelaxedSignal ||
      op.kind == OpKind::PutWithSignal || op.kind == OpKind::PutWithSignalAndFlush) {
    auto data = std::make_shared<const Clock>(t.data);
    auto exec = std::make_shared<const Clock>(t.exec);
    for (int c : op.channels) {
      const auto ch = channel(t, op.channel_kind, c);
      if (!ch)
        continue;
      if (const auto k = partner(t.rank, op.channel_kind, ch->first, ch->second))
        inbound_[{ch->second, op.channel_kind, *k}].push_back(
            {data, exec, op.kind == OpKind::RelaxedSignal});
    }
  }
  ++t.next;
  return true;
}

// Whether access `a` is ordered before `b`: a write must be visible (data clock), a read
// finished (execution clock; a port put's source read only once flushed).
bool ordered(const Access &a, const Access &b) {
  if (a.writes)
    return (*b.data)[size_t(a.tb)] >= a.event;
  return !a.pending && a.complete > 0 && (*b.exec)[size_t(a.tb)] >= a.complete;
}

bool overlap(const Access &a, const Access &b) {
  return a.group_size != b.group_size || a.group_index == b.group_index;
}

} // namespace

bool PlanReport::all_hold() const {
  return std::all_of(verdicts.begin(), verdicts.end(),
                     [](const PlanVerdict &v) { return v.kind == VerdictKind::Holds; });
}

const PlanVerdict &PlanReport::verdict(Property property) const {
  for (const PlanVerdict &v : verdicts)
    if (v.property == property)
      return v;
  SYNCOLL_UNREACHABLE("a plan report has every property's verdict");
}

std::string PlanReport::to_text() const {
  std::string out;
  for (const PlanVerdict &v : verdicts)
    out += fmt::format("{:<17} {}\n", std::string(verifier::property_name(v.property)) + ":",
                       v.summary);
  out += "covers: " + coverage + "\n";
  for (const PlanVerdict &v : verdicts)
    if (!v.counterexample.empty()) {
      out += fmt::format("\n{} counterexample:\n", verifier::property_name(v.property));
      for (const std::string &line : v.counterexample)
        out += "  " + line + "\n";
    }
  return out;
}

namespace {

// What output chunk `k` of GPU `rank` must hold once the collective is done (Broadcast from
// GPU 0, as MSCCL++'s DSL writes it).
Value expected(const ExecutionPlan &plan, int rank, int k) {
  const int n = int(plan.gpus.size());
  const PlanGpu &g = plan.gpus[size_t(rank)];
  auto chunk = [](int q, int j) { return uint32_t(q) * kChunkStride + uint32_t(j); };
  std::vector<uint32_t> v;
  switch (plan.collective) {
  case CollectiveKind::Allgather:
    v.push_back(chunk(k / g.input_chunks, k % g.input_chunks));
    break;
  case CollectiveKind::Allreduce:
    for (int q = 0; q < n; ++q)
      v.push_back(chunk(q, k));
    break;
  case CollectiveKind::ReduceScatter:
    for (int q = 0; q < n; ++q)
      v.push_back(chunk(q, rank * g.output_chunks + k));
    break;
  case CollectiveKind::Broadcast:
    v.push_back(chunk(0, k));
    break;
  case CollectiveKind::Alltoall: {
    const int m = g.output_chunks / n;
    v.push_back(chunk(k / m, rank * m + k % m));
    break;
  }
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
  case CollectiveKind::Reduce:
  case CollectiveKind::AllToNext:
  case CollectiveKind::Custom:
    SYNCOLL_UNREACHABLE("the reader takes MSCCL++'s five collectives only");
  }
  std::sort(v.begin(), v.end());
  return v;
}

// The chunk counts the collective needs of every GPU, or what breaks them.
std::vector<std::string> shape_issues(const ExecutionPlan &plan) {
  std::vector<std::string> out;
  const int n = int(plan.gpus.size());
  for (const PlanGpu &g : plan.gpus) {
    const int in = g.input_chunks, o = g.output_chunks;
    std::string need;
    switch (plan.collective) {
    case CollectiveKind::Allgather:
      if (o != n * in)
        need = fmt::format("{} output chunks ({} GPUs x {} input chunks)", n * in, n, in);
      break;
    case CollectiveKind::ReduceScatter:
      if (in != n * o)
        need = fmt::format("{} input chunks ({} GPUs x {} output chunks)", n * o, n, o);
      break;
    case CollectiveKind::Alltoall:
      if (in != o || o % n != 0)
        need = fmt::format("as many input as output chunks, a multiple of {} GPUs", n);
      break;
    case CollectiveKind::Allreduce:
    case CollectiveKind::Broadcast:
      if (in != o)
        need = "as many input as output chunks";
      break;
    case CollectiveKind::Gather:
    case CollectiveKind::Scatter:
    case CollectiveKind::Reduce:
    case CollectiveKind::AllToNext:
    case CollectiveKind::Custom:
      SYNCOLL_UNREACHABLE("the reader takes MSCCL++'s five collectives only");
    }
    if (!need.empty())
      out.push_back(fmt::format("GPU {} has {} input and {} output chunks; {} needs {}", g.id, in,
                                o, collective_kind_name(plan.collective), need));
  }
  return out;
}

PlanVerdict unknown(Property p, const std::string &why) {
  return {p, VerdictKind::Unknown, "unknown: " + why, {}};
}

} // namespace

PlanReport verify_plan(const ExecutionPlan &plan) {
  PlanReport report;
  report.coverage = fmt::format(
      "{} on {} GPUs, protocol {}, {} ({}); message sizes {} to {} B (the plan's window), each "
      "chunk 1 / chunks of a GPU's buffer; a pipeline's body run once over its chunks",
      collective_kind_name(plan.collective), plan.gpus.size(), plan.packets ? "LL" : "Simple",
      plan.in_place ? "in place" : "out of place",
      plan.in_place ? "input and output share memory as the executor is called" : "separate",
      plan.min_message_bytes,
      plan.max_message_bytes == UINT64_MAX ? std::string("any")
                                           : std::to_string(plan.max_message_bytes));
  std::vector<std::string> structure = shape_issues(plan);
  if (!structure.empty()) {
    report.verdicts.push_back({Property::Structure, VerdictKind::Violated,
                               fmt::format("violated: {} issue(s)", structure.size()), structure});
    for (Property p : {Property::DeadlockFreedom, Property::RaceFreedom, Property::Postcondition})
      report.verdicts.push_back(unknown(p, "the buffers do not fit the collective"));
    return report;
  }
  Execution ex(plan);
  ex.run();
  if (ex.unmodelled_.empty() && std::all_of(ex.tbs_.begin(), ex.tbs_.end(),
                                            [](const Tb &t) { return t.next == t.steps.size(); }))
    ex.finish();
  if (ex.structure_.empty())
    report.verdicts.push_back({Property::Structure, VerdictKind::Holds, "holds", {}});
  else
    report.verdicts.push_back({Property::Structure, VerdictKind::Violated,
                               fmt::format("violated: {} issue(s)", ex.structure_.size()),
                               ex.structure_});
  if (!ex.unmodelled_.empty()) {
    for (Property p : {Property::DeadlockFreedom, Property::RaceFreedom, Property::Postcondition})
      report.verdicts.push_back(unknown(p, fmt::format("the plan uses {}, which the verifier "
                                                       "does not model yet",
                                                       ex.unmodelled_)));
    return report;
  }
  // Deadlock: a thread block that cannot finish, and where every other one got to.
  std::vector<std::string> stuck;
  for (const Tb &t : ex.tbs_)
    if (t.next < t.steps.size())
      stuck.push_back(fmt::format("GPU {} tb {} blocked at {}", t.rank, t.tb->id, t.blocked));
  if (!stuck.empty()) {
    std::vector<std::string> lines = stuck;
    for (const Tb &t : ex.tbs_)
      if (t.next == t.steps.size())
        lines.push_back(fmt::format("GPU {} tb {} finished", t.rank, t.tb->id));
    report.verdicts.push_back(
        {Property::DeadlockFreedom, VerdictKind::Violated,
         fmt::format("violated: {} thread block(s) never finish", stuck.size()), lines});
    report.verdicts.push_back(unknown(Property::RaceFreedom, "the plan deadlocks"));
    report.verdicts.push_back(
        {Property::Postcondition, VerdictKind::Violated, "violated: the plan never finishes", {}});
    return report;
  }
  report.verdicts.push_back({Property::DeadlockFreedom, VerdictKind::Holds, "holds", {}});
  // Races: two accesses to one chunk, one a write, neither ordered before the other.
  std::vector<std::string> races;
  size_t count = 0;
  for (const std::vector<Access> &at : ex.accesses_)
    for (size_t i = 0; i < at.size(); ++i)
      for (size_t j = i + 1; j < at.size(); ++j) {
        const Access &a = at[i], &b = at[j];
        if (!(a.writes || b.writes) || !overlap(a, b) || ordered(a, b))
          continue;
        if (++count <= 5)
          races.push_back(fmt::format(
              "{} and {}: {}", a.what, b.what,
              a.by_proxy ? "the proxy may still be reading the put's source (no flush between)"
              : a.writes
                  ? "no signal and wait (or barrier, semaphore) makes the write visible first"
                  : "nothing orders the read before the write"));
      }
  if (count == 0)
    report.verdicts.push_back({Property::RaceFreedom, VerdictKind::Holds, "holds", {}});
  else
    report.verdicts.push_back({Property::RaceFreedom, VerdictKind::Violated,
                               fmt::format("violated: {} racing pair(s){}", count,
                                           count > 5 ? ", the first 5 shown" : ""),
                               races});
  // Postcondition: every output chunk what the collective puts there.
  std::vector<std::string> wrong;
  size_t wrong_count = 0;
  for (const PlanGpu &g : plan.gpus)
    for (int k = 0; k < g.output_chunks; ++k) {
      const Value want = expected(plan, g.id, k);
      const Value &got = ex.values_[ex.location(g.id, PlanBuffer::Output, k)];
      if (got == want)
        continue;
      if (++wrong_count <= 5)
        wrong.push_back(fmt::format("GPU {} output chunk {}: expected {}, found {}", g.id, k,
                                    describe(want), describe(got)));
    }
  if (wrong_count == 0)
    report.verdicts.push_back(
        {Property::Postcondition,
         VerdictKind::Holds,
         count == 0 ? "holds" : "holds on the interleaving run (the plan races)",
         {}});
  else
    report.verdicts.push_back({Property::Postcondition, VerdictKind::Violated,
                               fmt::format("violated: {} output chunk(s) wrong{}", wrong_count,
                                           wrong_count > 5 ? ", the first 5 shown" : ""),
                               wrong});
  return report;
}

} // namespace syncoll::mscclpp
