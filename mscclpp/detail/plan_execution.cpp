#include "mscclpp/detail/plan_execution.h"

#include <algorithm>

namespace syncoll::mscclpp::detail {

bool Execution::step(int ti) {
  Tb &t = tbs_[size_t(ti)];
  const PlanOp &op = *t.steps[t.next].op;
  const OpTraits &traits = op_traits(op.kind);
  // A packet operation waits for the packets it reads (its sources in the GPU's scratch; a put
  // or copy of packets reads plain data) to have arrived: their flags say so.
  const bool reads_packets =
      traits.packets && op.kind != OpKind::PutPackets && op.kind != OpKind::CopyPackets;
  if (reads_packets)
    for (const BufferSlice &s : op.src)
      if (s.local == PlanBuffer::Scratch)
        for (int k = s.index; k < s.index + s.size; ++k)
          if (!packet_writer_.count(location(t.rank, PlanBuffer::Scratch, k))) {
            t.blocked = fmt::format("{} ({}) waits for packets in GPU {}'s s chunk {}: none "
                                    "written",
                                    where(t), traits.name, t.rank, k);
            return false;
          }
  // Blocking operations first: nothing happens until they can go on.
  if (op.kind == OpKind::Wait || op.kind == OpKind::RelaxedWait) {
    // A channel named twice waits for two signals.
    std::map<int, int> needed;
    for (int c : op.channels) {
      const auto ch = channel(t, op.channel_kind, c);
      const int k = ch ? ch->first : -1;
      const auto &got = inbound_[{t.rank, op.channel_kind, k}];
      if (int(got.size()) < t.waits_done[{op.channel_kind, k}] + ++needed[k]) {
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
    // Each arrival is an executed barrier that waited for every other one's arrival.
    std::vector<int> arrivals;
    for (int a : arrived)
      arrivals.push_back(tbs_[size_t(a)].last_executed);
    for (int a : arrived) {
      Executed e;
      e.tb = a;
      e.op = tbs_[size_t(a)].steps[tbs_[size_t(a)].next].op;
      for (int other : arrivals)
        if (other >= 0)
          e.after.push_back(other);
      tbs_[size_t(a)].last_executed = int(executed_.size());
      executed_.push_back(std::move(e));
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
  const int executed = int(executed_.size());
  executed_.push_back({ti, &op, {}, {}, {}, {}, {}});
  t.last_executed = executed;
  if (op.kind == OpKind::Wait || op.kind == OpKind::RelaxedWait) {
    for (int c : op.channels) {
      const auto ch = channel(t, op.channel_kind, c);
      const int k = ch ? ch->first : -1;
      const Signal &s =
          inbound_[{t.rank, op.channel_kind, k}][size_t(t.waits_done[{op.channel_kind, k}]++)];
      executed_[size_t(executed)].after.push_back(s.op);
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
      auto &ops = token_ops_[{t.rank, s}];
      if (tokens.empty() && taken_initial_.insert({t.rank, s}).second)
        for (int k = 0; k < plan_.gpus[size_t(t.rank)].semaphores[size_t(s)]; ++k) {
          tokens.emplace_back();
          ops.push_back(-1);
        }
      if (op.kind == OpKind::SemRelease) {
        tokens.emplace_back(t.data, t.exec);
        ops.push_back(executed);
      } else {
        SYNCOLL_INVARIANT(!tokens.empty(), "an acquire goes on only with a token");
        if (!tokens.front().first.empty()) {
          join(t.data, tokens.front().first);
          join(t.exec, tokens.front().second);
        }
        if (ops.front() >= 0)
          executed_[size_t(executed)].after.push_back(ops.front());
        tokens.pop_front();
        ops.pop_front();
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
        for (const Slice &s : resolve(t, op, slice, slice.remote ? remote++ : 0))
          out->push_back(s);
    }
    for (const auto &[slices, where, sizes] :
         {std::tuple{&src, &executed_[size_t(executed)].src_where,
                     &executed_[size_t(executed)].src_sizes},
          std::tuple{&dst, &executed_[size_t(executed)].dst_where,
                     &executed_[size_t(executed)].dst_sizes}})
      for (const Slice &slice : *slices) {
        where->emplace_back(slice.rank, slice.buffer);
        sizes->push_back(slice.size);
      }
    const bool reduces = traits.reduces;
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
      access(ti, src[i], false, event, op, port_put && op.kind != OpKind::PutWithSignalAndFlush,
             reads_packets && src[i].buffer == PlanBuffer::Scratch && src[i].rank == t.rank);
    for (size_t i = 0; i < dst.size(); ++i) {
      const std::vector<Value> v = !reduces && src.size() == dst.size() ? read(src[i]) : result;
      if (int(v.size()) != dst[i].size) {
        structure_.push_back(fmt::format("GPU {} tb {} {} ({}): moves {} chunk(s) into {}", t.rank,
                                         t.tb->id, where(t), traits.name, v.size(), dst[i].size));
        continue;
      }
      for (int k = 0; k < dst[i].size; ++k)
        values_[location(dst[i].rank, dst[i].buffer, dst[i].index + k)] = v[size_t(k)];
      access(ti, dst[i], true, event, op, false, false);
      if (traits.packets && dst[i].buffer == PlanBuffer::Scratch)
        for (int k = dst[i].index; k < dst[i].index + dst[i].size; ++k) {
          const size_t loc = location(dst[i].rank, PlanBuffer::Scratch, k);
          packet_writer_[loc] = accesses_[loc].size() - 1;
        }
    }
  }
  // Signals last: they carry what the operation did.
  if (traits.signals) {
    auto data = std::make_shared<const Clock>(t.data);
    auto exec = std::make_shared<const Clock>(t.exec);
    for (int c : op.channels) {
      const auto ch = channel(t, op.channel_kind, c);
      if (!ch)
        continue;
      if (const auto k = partner(t.rank, op.channel_kind, ch->first, ch->second))
        inbound_[{ch->second, op.channel_kind, *k}].push_back(
            {data, exec, op.kind == OpKind::RelaxedSignal, executed});
    }
  }
  ++t.next;
  return true;
}

// A write must be visible (data clock), a read finished (execution clock; a port put's source
// read only once flushed).
bool ordered(const Access &a, const Access &b) {
  if (a.writes && !a.seen_when_executed)
    return (*b.data)[size_t(a.tb)] >= a.event;
  return !a.pending && a.complete > 0 && (*b.exec)[size_t(a.tb)] >= a.complete;
}

bool overlap(const Access &a, const Access &b) {
  return a.group_size != b.group_size || a.group_index == b.group_index;
}

} // namespace syncoll::mscclpp::detail
