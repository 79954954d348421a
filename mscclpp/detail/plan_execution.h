// The one execution of an MSCCL++ plan that verify_plan.h's verdicts are read from (internal).
// A fair interleaving of the plan's thread blocks, each blocked operation retried until nothing
// moves, carrying chunk values for the postcondition and two vector clocks per thread block for
// the races: the data clock (what a thread block's writes are visible to) and the execution
// clock (what it has finished before). A signal orders both; a relaxed signal or wait orders
// execution only (docs/semantics.md, "MSCCL++ execution plans").
#pragma once

#include "model/invariant.h"
#include "mscclpp/plan.h"

#include <deque>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace syncoll::mscclpp::detail {

// A chunk's value: the input chunks summed into it (rank x 2^32 + chunk), sorted; none when
// nothing was ever written there.
using Value = std::optional<std::vector<uint64_t>>;
constexpr uint64_t kChunkStride = uint64_t(1) << 32;

inline Value sum(const Value &a, const Value &b) {
  if (!a || !b)
    return std::nullopt;
  std::vector<uint64_t> out;
  std::merge(a->begin(), a->end(), b->begin(), b->end(), std::back_inserter(out));
  return out;
}

inline std::string describe(const Value &v) {
  if (!v)
    return "nothing written";
  std::vector<std::string> parts;
  for (uint64_t c : *v)
    parts.push_back(fmt::format("GPU {} input chunk {}", c / kChunkStride, c % kChunkStride));
  return fmt::format("{}", fmt::join(parts, " + "));
}

using Clock = std::vector<int>;
inline void join(Clock &into, const Clock &from) {
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
  /// A write every access its execution follows sees: the user's before the kernel (stream
  /// order completes it), and NVLS's multimem stores (done at the switch when the thread block
  /// goes on; MSCCL++'s NVLS plans and kernels order them with relaxed signals only).
  bool seen_when_executed = false;
  int group_index = 0, group_size = 1;
  std::shared_ptr<const Clock> data, exec; ///< the thread block's clocks at the event
  std::string what;
  int op = -1;   ///< the executed operation (Executed), if any
  int step = -1; ///< its place in its thread block's steps (none for a GPU's user)
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
  int last_executed = -1; ///< its last executed operation (Executed), -1 before any
  std::string blocked;    ///< why it cannot go on, when it cannot
};

struct Signal {
  std::shared_ptr<const Clock> data, exec;
  bool relaxed = false;
  int op = -1; ///< the executed operation that sent it (Executed)
};

/// One operation as it was executed, for timing it (mscclpp/simulate_plan.h): the slices it
/// moved and the executed operations it waited for beyond its thread block's previous one (the
/// signal a wait took, the release a semaphore token came from, a barrier's other arrivals, the
/// packet writes a packet read waited for).
struct Executed {
  int tb = 0;
  const PlanOp *op = nullptr;
  std::vector<std::pair<int, PlanBuffer>> src_where, dst_where; ///< (GPU, buffer) per slice
  std::vector<int> src_sizes, dst_sizes;                        ///< chunks per slice
  std::vector<int> after;
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
            values_[loc] = std::vector<uint64_t>{uint64_t(g.id) * kChunkStride + uint64_t(k)};
          accesses_[loc].push_back(
              {int(launch(g.id)), 1, 1, input, false, false, input, 0, 1, clock, clock,
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
            {int(launch(g.id)), 2, 2, false, false, false, false, 0, 1, d, e,
             fmt::format("GPU {}'s user reading output chunk {} after its kernel", g.id, k)});
    }
  }

  void run() {
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t t = 0; t < tbs_.size(); ++t)
        while (tbs_[t].next < tbs_[t].steps.size() && step(int(t)))
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
  /// The executed release of each token above, in the same order (-1: an initial token).
  std::map<std::pair<int, int>, std::deque<int>> token_ops_;
  std::set<std::pair<int, int>> taken_initial_;
  std::vector<std::string> structure_;
  std::map<size_t, size_t> packet_writer_; ///< per scratch chunk: its last packet write's access
  std::vector<Executed> executed_;         ///< every operation, in the order it ran

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
  // The slices `s` names: its own, a peer's, or through a switch channel the same chunks of
  // the bound buffer on every GPU of the channel's group (NVLS multicast).
  std::vector<Slice> resolve(const Tb &t, const PlanOp &op, const BufferSlice &s, size_t i) {
    if (s.switch_channel) {
      std::vector<int> switches;
      for (const ThreadBlockChannels &c : t.tb->channels)
        if (c.kind == ChannelKind::Switch)
          switches.insert(switches.end(), c.ids.begin(), c.ids.end());
      int group = switches[size_t(*s.switch_channel)];
      for (const PlanChannel &c : plan_.gpus[size_t(t.rank)].channels) {
        if (c.kind != ChannelKind::Switch)
          continue;
        if (group < int(c.rank_groups.size())) {
          std::vector<Slice> members;
          for (int rank : c.rank_groups[size_t(group)])
            members.push_back({rank, *c.buffer, s.index, s.size});
          return members;
        }
        group -= int(c.rank_groups.size());
      }
      SYNCOLL_UNREACHABLE("the reader checked every switch channel reference");
    }
    if (s.local)
      return {Slice{t.rank, *s.local, s.index, s.size}};
    int remaining = *s.remote;
    for (const ThreadBlockRemoteBuffers &r : t.tb->remote_buffers)
      if (r.access == op.channel_kind) {
        if (remaining < int(r.ids.size())) {
          const PlanRemoteBuffer &rb =
              plan_.gpus[size_t(t.rank)].remote_buffers[size_t(r.ids[size_t(remaining)])];
          // Memory channels reach a peer's buffer by its pointer; a port channel's put goes
          // through the channel, which must lead to the buffer's GPU.
          if (op.channel_kind == ChannelKind::Port && !op.channels.empty()) {
            const auto ch =
                channel(t, op.channel_kind, op.channels[std::min(i, op.channels.size() - 1)]);
            if (ch && ch->second != rb.rank)
              structure_.push_back(fmt::format(
                  "GPU {} tb {} {}: reaches GPU {}'s buffer {} through a {} channel to GPU {}",
                  t.rank, t.tb->id, where(t), rb.rank, plan_buffer_name(rb.buffer),
                  channel_kind_name(op.channel_kind), ch->second));
          }
          return {Slice{rb.rank, rb.buffer, s.index, s.size}};
        }
        remaining -= int(r.ids.size());
      }
    SYNCOLL_UNREACHABLE("the reader checked every remote buffer reference");
  }

  std::string where(const Tb &t) const { return t.steps[t.next].where; }

  // Records the accesses of `s`'s chunks. A packet read (`packet`) is ordered after the write
  // of the packet it read, and after nothing else of its writer: a flag orders its own data.
  void access(int ti, const Slice &s, bool writes, int event, const PlanOp &op, bool pending,
              bool packet) {
    Tb &t = tbs_[size_t(ti)];
    auto data = std::make_shared<const Clock>(t.data);
    auto exec = std::make_shared<const Clock>(t.exec);
    for (int k = s.index; k < s.index + s.size; ++k) {
      const size_t loc = location(s.rank, s.buffer, k);
      if (packet) {
        const Access &w = accesses_[loc][packet_writer_.at(loc)];
        if (w.op >= 0)
          executed_.back().after.push_back(w.op);
        Clock after = t.data;
        after[size_t(w.tb)] = std::max(after[size_t(w.tb)], w.event);
        data = std::make_shared<const Clock>(after);
      }
      accesses_[loc].push_back(
          {ti, event, pending ? 0 : event, writes, pending, pending,
           writes && op.channel_kind == ChannelKind::Switch, op.group_index, op.group_size, data,
           exec,
           fmt::format("GPU {} tb {} {} ({}) {} GPU {}'s {} chunk {}", t.rank, t.tb->id, where(t),
                       op_traits(op.kind).name, writes ? "writes" : "reads", s.rank,
                       plan_buffer_name(s.buffer), k),
           int(executed_.size()) - 1, int(t.next)});
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

/// Whether access `a` (executed first) is ordered before `b`.
bool ordered(const Access &a, const Access &b);
/// Whether two accesses to one chunk touch the same part of it (thread-block groups split it).
bool overlap(const Access &a, const Access &b);

} // namespace syncoll::mscclpp::detail
