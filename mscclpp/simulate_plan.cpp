#include "mscclpp/simulate_plan.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "mscclpp/detail/plan_execution.h"
#include "simulator/link_booking.h"
#include "simulator/network.h"

#include <algorithm>
#include <fmt/format.h>
#include <queue>

namespace syncoll::mscclpp {
namespace {

using simulator::Picoseconds;
using simulator::to_ps;

// The timing of one executed operation: when it may start, when it ends, and when what it sent
// lands (a signal's arrival, a port put's data).
struct Timed {
  Picoseconds ready = 0, end = 0, lands = 0;
};

class Timing {
public:
  Timing(const Topology &topology, const simulator::CostModel &model, int64_t chunk_bytes,
         const detail::Execution &ex)
      : model_(model), chunk_bytes_(chunk_bytes), ex_(ex),
        network_(topology, model.efficiency[simulator::CostModel::index(Protocol::Simple)]),
        port_data_(ex.tbs_.size(), 0) {}

  Expected<Picoseconds> run() {
    const std::vector<detail::Executed> &ops = ex_.executed_;
    timed_.assign(ops.size(), {});
    // Each operation waits for its thread block's previous one and what it took from others.
    std::vector<std::vector<int>> next(ops.size());
    std::vector<int> waiting(ops.size(), 0);
    std::vector<int> previous(ex_.tbs_.size(), -1);
    for (size_t i = 0; i < ops.size(); ++i) {
      std::vector<int> preds = ops[i].after;
      if (previous[size_t(ops[i].tb)] >= 0)
        preds.push_back(previous[size_t(ops[i].tb)]);
      previous[size_t(ops[i].tb)] = int(i);
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      waiting[i] = int(preds.size());
      for (int p : preds)
        next[size_t(p)].push_back(int(i));
    }
    // First come first served: operations start in the order they become ready.
    using Entry = std::pair<Picoseconds, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (size_t i = 0; i < ops.size(); ++i)
      if (waiting[i] == 0)
        ready.emplace(model_.launch, int(i));
    Picoseconds last = model_.launch;
    while (!ready.empty()) {
      const auto [at, i] = ready.top();
      ready.pop();
      SYNCOLL_TRY(end, time_op(size_t(i), at));
      last = std::max({last, end, timed_[size_t(i)].lands});
      for (int n : next[size_t(i)]) {
        // A wait is ready when the signal lands; anything else when its predecessor ends.
        Timed &t = timed_[size_t(n)];
        t.ready =
            std::max(t.ready, std::max(timed_[size_t(i)].end, lands_for(size_t(i), size_t(n))));
        if (--waiting[size_t(n)] == 0)
          ready.emplace(std::max(t.ready, model_.launch), n);
      }
    }
    return last;
  }

private:
  const simulator::CostModel &model_;
  int64_t chunk_bytes_;
  const detail::Execution &ex_;
  simulator::Network network_;
  std::vector<Timed> timed_;
  std::vector<Picoseconds> port_data_; ///< per thread block: when its posted port puts land

  int rank_of(size_t i) const { return ex_.tbs_[size_t(ex_.executed_[i].tb)].rank; }

  // What operation `to` takes from `from` lands: a signal's arrival (through its route to the
  // waiting GPU), a packet's data, else nothing beyond `from`'s end.
  Picoseconds lands_for(size_t from, size_t to) {
    if (!op_traits(ex_.executed_[from].op->kind).signals || rank_of(from) == rank_of(to))
      return timed_[from].end;
    return timed_[from].lands + latency(rank_of(from), rank_of(to));
  }

  Picoseconds latency(int a, int b) {
    Picoseconds sum = model_.message_latency[simulator::CostModel::index(Protocol::Simple)];
    for (LinkId l : network_.route(RankId(a), RankId(b)))
      sum += to_ps(network_.topology().link(l).alpha);
    return sum;
  }

  // Books `bytes` from `a` to `b` hop by hop from `at` (cut-through): when it lands.
  Expected<Picoseconds> transfer(int a, int b, int64_t bytes, Picoseconds at) {
    if (a == b)
      return copy_time(bytes, at);
    const auto route = network_.route(RankId(a), RankId(b));
    if (route.empty())
      return fail(
          {}, fmt::format("GPU {} cannot reach GPU {} on '{}'", a, b, network_.topology().name()));
    Picoseconds hop_ready = at, lands = at;
    for (LinkId l : route) {
      const simulator::TransferTimes t = network_.reserve(l, bytes, hop_ready);
      hop_ready = t.start + to_ps(network_.topology().link(l).alpha);
      lands = t.arrival;
    }
    return lands;
  }

  Picoseconds copy_time(int64_t bytes, Picoseconds at) const {
    const double rate = model_.thread_block_gbps[simulator::CostModel::index(Protocol::Simple)];
    return at + (rate > 0 ? simulator::transfer_ps(bytes, rate) : 0);
  }

  Expected<Picoseconds> time_op(size_t i, Picoseconds at) {
    const detail::Executed &e = ex_.executed_[i];
    const PlanOp &op = *e.op;
    const OpTraits &traits = op_traits(op.kind);
    const int rank = rank_of(i);
    Timed &t = timed_[i];
    Picoseconds now = at + model_.step_overhead;
    const int64_t scale = traits.packets ? 2 : 1;
    auto bytes = [&](int chunks) { return int64_t(chunks) * chunk_bytes_ * scale; };
    const bool port = op.channel_kind == ChannelKind::Port;
    Picoseconds lands = now;
    if (op.channel_kind == ChannelKind::Switch) {
      // NVLS: the chunk crosses the GPU's switch port once, to the first other member.
      for (size_t k = 0; k < e.dst_where.size(); ++k)
        if (e.dst_where[k].first != rank) {
          SYNCOLL_TRY(end, transfer(rank, e.dst_where[k].first, bytes(e.dst_sizes[k]), now));
          now = end;
          break;
        }
    } else {
      // Remote sources are read here; then remote destinations written, one after another
      // through GPU threads, all at once through the proxy.
      for (size_t k = 0; k < e.src_where.size(); ++k)
        if (e.src_where[k].first != rank) {
          SYNCOLL_TRY(end, transfer(e.src_where[k].first, rank, bytes(e.src_sizes[k]), now));
          now = end;
        }
      const bool reduces = traits.reduces && e.src_where.size() > 1;
      bool local = false;
      for (size_t k = 0; k < e.dst_where.size(); ++k)
        local = local || e.dst_where[k].first == rank;
      if (local && !e.dst_sizes.empty())
        now = copy_time(bytes(e.dst_sizes.front()) * (reduces ? int64_t(e.src_where.size()) : 1),
                        now);
      const Picoseconds posted = now;
      for (size_t k = 0; k < e.dst_where.size(); ++k)
        if (e.dst_where[k].first != rank) {
          SYNCOLL_TRY(end, transfer(rank, e.dst_where[k].first, bytes(e.dst_sizes[k]),
                                    port ? posted : now));
          if (port)
            port_data_[size_t(e.tb)] = std::max(port_data_[size_t(e.tb)], end);
          else
            now = end;
          lands = std::max(lands, end);
        }
    }
    t.end = now;
    // A signal lands after the data this thread block put before it (FIFO through the proxy).
    t.lands = std::max(now, port ? port_data_[size_t(e.tb)] : lands);
    return t.end;
  }
};

} // namespace

Expected<PlanSimulation> simulate_plan(const ExecutionPlan &plan, const Topology &topology,
                                       int64_t size_bytes, const simulator::CostModel &model) {
  if (topology.num_ranks() != int(plan.gpus.size()))
    return fail({}, fmt::format("the plan runs on {} GPUs and '{}' has {} ranks", plan.gpus.size(),
                                topology.name(), topology.num_ranks()));
  const PlanGpu &g = plan.gpus.front();
  const int chunks =
      plan.collective == CollectiveKind::Allgather ? g.output_chunks : g.input_chunks;
  const int64_t chunk_bytes = size_bytes / std::max(1, chunks);
  detail::Execution ex(plan);
  ex.run();
  PlanSimulation out;
  out.deadlocked = std::any_of(ex.tbs_.begin(), ex.tbs_.end(),
                               [](const detail::Tb &t) { return t.next < t.steps.size(); });
  Timing timing(topology, model, chunk_bytes, ex);
  SYNCOLL_TRY(completion, timing.run());
  out.result.completion = completion;
  out.result.size_bytes = size_bytes;
  if (completion > 0) {
    out.result.algbw_gbps = double(size_bytes) / (double(completion) / 1000.0);
    out.result.busbw_gbps =
        out.result.algbw_gbps * bus_bandwidth_factor(plan.collective, int(plan.gpus.size()));
  }
  return out;
}

} // namespace syncoll::mscclpp
