#include "simulator/algorithm_sim.h"

#include "model/collective_traits.h"
#include "simulator/network.h"

#include <algorithm>
#include <fmt/format.h>

namespace syncoll::simulator {
namespace {

enum EventKind : uint32_t { kSendReady = 0, kArrival = 1 };

struct FlatSend {
  Send send;
  int step = 0;
  std::span<const LinkId> route;
};

// Busy intervals per rank, merged, to get its idle time.
std::vector<Picoseconds> idle_times(int ranks, std::vector<std::vector<TransferTimes>> busy,
                                    Picoseconds completion) {
  std::vector<Picoseconds> idle(size_t(ranks), completion);
  for (size_t r = 0; r < busy.size(); ++r) {
    auto &spans = busy[r];
    std::sort(spans.begin(), spans.end(),
              [](const TransferTimes &a, const TransferTimes &b) { return a.start < b.start; });
    Picoseconds covered = 0, end = -1;
    for (const auto &s : spans) {
      if (s.start > end) {
        covered += s.arrival - s.start;
        end = s.arrival;
      } else if (s.arrival > end) {
        covered += s.arrival - end;
        end = s.arrival;
      }
    }
    idle[r] = completion - std::min(covered, completion);
  }
  return idle;
}

std::vector<LinkReport> link_reports(const Topology &topology, const Network &network,
                                     Picoseconds completion) {
  std::vector<LinkReport> out;
  for (size_t l = 0; l < topology.links().size(); ++l) {
    const auto &u = network.usage()[l];
    out.push_back({topology.links()[l].src, topology.links()[l].dst, u.bytes,
                   completion > 0 ? double(u.busy) / double(completion) : 0.0});
  }
  return out;
}

// When the last combine of a step ends: a rank combines what reducing sends brought into one of
// its chunks in arrival order, one at a time. `scratch` is reused across steps.
Picoseconds last_combine(const std::vector<Send> &sends, const std::vector<Picoseconds> &arrivals,
                         Picoseconds combine,
                         std::vector<std::pair<uint64_t, Picoseconds>> &scratch) {
  scratch.clear();
  for (size_t i = 0; i < sends.size(); ++i)
    if (sends[i].op == SendOp::Reduce)
      scratch.emplace_back(uint64_t(sends[i].dst.value()) << 32 | uint32_t(sends[i].chunk.value()),
                           arrivals[i]);
  std::sort(scratch.begin(), scratch.end());
  Picoseconds last = 0, free_at = 0;
  for (size_t i = 0; i < scratch.size(); ++i) {
    if (i == 0 || scratch[i].first != scratch[i - 1].first)
      free_at = 0;
    free_at = std::max(free_at, scratch[i].second) + combine;
    last = std::max(last, free_at);
  }
  return last;
}

// The step-synchronous engine; `trace` and `busy` are filled when given. A step that repeats the
// one before (the source says so) after a step that left the network idle takes that step's time
// and adds its link usage again, without being simulated: the network is then in the same state
// as when the step it repeats started.
Expected<SimulationResult> run_steps(const StepSource &source, const Topology &topology,
                                     int64_t chunk_bytes, double efficiency, Switching switching,
                                     const ExecutorCosts &costs, std::vector<TraceSpan> *trace,
                                     std::vector<std::vector<TransferTimes>> *busy) {
  Network network(topology, efficiency);
  std::vector<Send> sends;
  std::vector<Delivery> delivered;
  SimulationResult result;
  Picoseconds step_start = costs.launch;
  uint64_t transfers = 0;
  std::vector<Picoseconds> arrivals;
  std::vector<std::pair<uint64_t, Picoseconds>> combines; // (rank, chunk) key, arrival
  const bool may_repeat = trace == nullptr && busy == nullptr;
  Picoseconds last_duration = 0;
  bool last_left_idle = false;
  std::vector<LinkUsage> before, last_usage;
  int64_t repeats = 0; // of the last simulated step, not yet added to the link usage
  for (int s = 0; s < source.num_steps(); ++s) {
    if (may_repeat && s > 0 && last_left_idle && source.repeats_previous(s)) {
      step_start += last_duration;
      ++repeats;
      continue;
    }
    if (repeats > 0)
      network.add_usage(last_usage, repeats);
    repeats = 0;
    // What a repetition needs is measured only for a step the next one may repeat.
    const bool measure = may_repeat && s + 1 < source.num_steps() && source.repeats_previous(s + 1);
    if (measure)
      before = network.usage();
    const Picoseconds began = step_start, started = began + costs.step_overhead;
    source.sends(s, sends);
    arrivals.assign(sends.size(), started);
    auto record = [&](const Send &send, LinkId link, TransferTimes t) {
      if (busy)
        (*busy)[send.src.index()].push_back(t);
      if (trace)
        trace->push_back({fmt::format("chunk {}", send.chunk.value()), send.src.value(),
                          link.value(),
                          fmt::format("link {}->{}", send.src.value(), send.dst.value()), t.start,
                          t.arrival - t.start});
    };
    // The step ends with its last arrival.
    Picoseconds step_end = started;
    for (size_t i = 0; i < sends.size(); ++i) {
      const Send &send = sends[i];
      const std::span<const LinkId> route = network.route(send.src, send.dst);
      if (route.empty())
        return fail({}, fmt::format("step {}: rank {} cannot reach rank {} for chunk {}", s + 1,
                                    send.src.value(), send.dst.value(), send.chunk.value()));
      const auto t = network.start(route, chunk_bytes, started, switching, uint32_t(i));
      if (!t)
        continue; // multi-hop or fair-shared: its times come from the network below
      ++transfers;
      step_end = std::max(step_end, t->arrival);
      arrivals[i] = t->arrival;
      record(send, route.front(), *t);
    }
    delivered.clear();
    network.advance(kNever, delivered);
    for (const Delivery &d : delivered) {
      if (!d.arrived)
        continue; // the step waits for arrivals only
      step_end = std::max(step_end, d.times.arrival);
      arrivals[d.tag] = d.times.arrival;
      const Send &send = sends[d.tag];
      record(send, network.route(send.src, send.dst).front(), d.times);
    }
    if (costs.combine > 0)
      step_end = std::max(step_end, last_combine(sends, arrivals, costs.combine, combines));
    step_start = step_end;
    last_left_idle = false;
    if (measure) {
      last_duration = step_end - began;
      last_left_idle = network.idle_by(step_end);
      last_usage = network.usage();
      for (size_t l = 0; l < last_usage.size(); ++l) {
        last_usage[l].bytes -= before[l].bytes;
        last_usage[l].busy -= before[l].busy;
      }
    }
  }
  if (repeats > 0)
    network.add_usage(last_usage, repeats);
  result.completion = step_start;
  result.events = transfers + network.fluid_events();
  result.links = link_reports(topology, network, result.completion);
  return result;
}

} // namespace

Expected<SimulationResult> simulate_steps(const StepSource &source, const Topology &topology,
                                          int64_t chunk_bytes, double efficiency,
                                          Switching switching) {
  return run_steps(source, topology, chunk_bytes, efficiency, switching, {}, nullptr, nullptr);
}

Expected<SimulationResult> simulate_algorithm(const Algorithm &algorithm, const Topology &topology,
                                              const CollectiveSpec &collective, int64_t size_bytes,
                                              const AlgorithmSimOptions &options) {
  if (size_bytes <= 0)
    return fail({}, fmt::format("size must be positive, got {}", size_bytes));
  if (topology.num_ranks() != collective.num_ranks())
    return fail({}, fmt::format("topology has {} ranks, collective {}", topology.num_ranks(),
                                collective.num_ranks()));
  const int64_t chunk_bytes =
      (size_bytes + collective.input_chunks() - 1) / std::max(1, collective.input_chunks());
  std::vector<FlatSend> sends;
  for (int s = 0; s < algorithm.num_steps(); ++s)
    for (const Send &send : algorithm.steps[size_t(s)].sends) {
      if (send.chunk.value() >= collective.num_chunks() ||
          send.src.value() >= topology.num_ranks() || send.dst.value() >= topology.num_ranks())
        return fail({}, fmt::format("step {}: send {}:{}->{} is out of range", s + 1,
                                    send.chunk.value(), send.src.value(), send.dst.value()));
      sends.push_back({send, s, {}});
    }

  Network network(topology, options.efficiency);
  for (FlatSend &fs : sends) {
    fs.route = network.route(fs.send.src, fs.send.dst);
    if (fs.route.empty())
      return fail({}, fmt::format("step {}: rank {} cannot reach rank {} for chunk {}", fs.step + 1,
                                  fs.send.src.value(), fs.send.dst.value(), fs.send.chunk.value()));
  }
  SimulationResult result;
  std::vector<std::vector<TransferTimes>> busy(size_t(topology.num_ranks()));
  auto record = [&](const FlatSend &fs, TransferTimes t) {
    busy[fs.send.src.index()].push_back(t);
    if (options.trace)
      result.trace.push_back({fmt::format("chunk {}", fs.send.chunk.value()), fs.send.src.value(),
                              fs.route.front().value(),
                              fmt::format("link {}->{}", fs.send.src.value(), fs.send.dst.value()),
                              t.start, t.arrival - t.start});
  };

  if (options.timing == AlgorithmTiming::StepSynchronous) {
    // The same engine as a streamed schedule: the steps of the algorithm, one at a time.
    class AlgorithmSteps final : public StepSource {
    public:
      explicit AlgorithmSteps(const Algorithm &a) : a_(a) {}
      int num_steps() const override { return a_.num_steps(); }
      void sends(int step, std::vector<Send> &out) const override {
        out = a_.steps[size_t(step)].sends;
      }

    private:
      const Algorithm &a_;
    };
    auto streamed =
        run_steps(AlgorithmSteps(algorithm), topology, chunk_bytes, options.efficiency,
                  options.switching, options.costs, options.trace ? &result.trace : nullptr, &busy);
    if (!streamed)
      return tl::unexpected(streamed.error());
    result.completion = streamed->completion;
    result.events = streamed->events;
    result.links = std::move(streamed->links);
  } else {
    // A send waits for every earlier send that delivers its chunk to its source.
    const size_t P = size_t(topology.num_ranks());
    std::vector<std::vector<size_t>> into(size_t(collective.num_chunks()) * P);
    for (size_t i = 0; i < sends.size(); ++i)
      into[sends[i].send.chunk.index() * P + sends[i].send.dst.index()].push_back(i);
    std::vector<int> waiting(sends.size(), 0);
    std::vector<std::vector<size_t>> successors(sends.size());
    for (size_t i = 0; i < sends.size(); ++i)
      for (size_t j : into[sends[i].send.chunk.index() * P + sends[i].send.src.index()])
        if (sends[j].step < sends[i].step) {
          successors[j].push_back(i);
          ++waiting[i];
        }
    EventQueue queue;
    queue.reserve(2 * sends.size() + 1);
    std::vector<Picoseconds> ready_at(sends.size(), 0);
    const ExecutorCosts &costs = options.costs;
    // Combines into one chunk of one rank take turns: when each (rank, chunk) is free again.
    std::vector<Picoseconds> combine_free(size_t(collective.num_chunks()) * P, 0);
    for (size_t i = 0; i < sends.size(); ++i)
      if (waiting[i] == 0)
        queue.push(costs.launch + costs.step_overhead, kSendReady, uint32_t(i));
    std::vector<TransferTimes> times(sends.size());
    std::vector<Delivery> delivered;
    for (;;) {
      const Picoseconds queued = queue.empty() ? kNever : queue.top().time;
      if (network.next_event() <= queued && network.next_event() != kNever) {
        // Network-run transfers first: a link they free is there for sends ready now.
        delivered.clear();
        network.advance(network.next_event(), delivered);
        for (const Delivery &d : delivered) {
          if (!d.arrived)
            continue; // a send depends on arrivals only
          times[d.tag] = d.times;
          record(sends[d.tag], d.times);
          queue.push(d.times.arrival, kArrival, d.tag);
        }
        continue;
      }
      if (queue.empty())
        break;
      const Event e = queue.pop();
      if (e.kind == kSendReady) {
        const auto t =
            network.start(sends[e.target].route, chunk_bytes, e.time, options.switching, e.target);
        if (!t)
          continue;
        times[e.target] = *t;
        record(sends[e.target], *t);
        queue.push(t->arrival, kArrival, e.target);
      } else {
        Picoseconds held = e.time; // when the chunk is usable at its destination
        const Send &send = sends[e.target].send;
        if (send.op == SendOp::Reduce && costs.combine > 0) {
          Picoseconds &free_at = combine_free[send.chunk.index() * P + send.dst.index()];
          free_at = std::max(free_at, e.time) + costs.combine;
          held = free_at;
        }
        result.completion = std::max(result.completion, held);
        for (size_t i : successors[e.target]) {
          ready_at[i] = std::max(ready_at[i], held);
          if (--waiting[i] == 0)
            queue.push(ready_at[i] + costs.step_overhead, kSendReady, uint32_t(i));
        }
      }
    }
    result.events = queue.events_processed() + network.fluid_events();
    result.links = link_reports(topology, network, result.completion);
  }

  result.size_bytes = nccl_tests_size(collective, size_bytes);
  if (result.completion > 0) {
    result.algbw_gbps = double(result.size_bytes) / (double(result.completion) / 1000.0);
    result.busbw_gbps =
        result.algbw_gbps * bus_bandwidth_factor(collective.kind(), collective.num_ranks());
  }
  result.rank_idle = idle_times(topology.num_ranks(), std::move(busy), result.completion);
  return result;
}

} // namespace syncoll::simulator
