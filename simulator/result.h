// What a simulation reports: completion time, algorithm and bus bandwidth, per-link bytes and
// utilization, per-rank idle time, and optionally a timeline as Chrome-trace JSON (opens in
// Perfetto).
#pragma once

#include "model/collective.h"
#include "model/topology.h"
#include "simulator/event_queue.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace syncoll::simulator {

/// One interval on the timeline: a transfer on a link, or a step of a thread block.
struct TraceSpan {
  std::string name;
  int process = 0; ///< rank
  int thread = 0;  ///< link index or thread block id
  std::string thread_name;
  Picoseconds start = 0;
  Picoseconds duration = 0;
};

struct LinkReport {
  RankId src;
  RankId dst;
  int64_t bytes = 0;
  double utilization = 0; ///< busy time / completion time
};

struct SimulationResult {
  Picoseconds completion = 0;
  int64_t size_bytes = 0; ///< the collective's size as nccl-tests counts it
  double algbw_gbps = 0;  ///< size / time
  double busbw_gbps = 0;  ///< algbw x the collective's bus factor (nccl-tests' definition)
  std::vector<LinkReport> links;
  std::vector<Picoseconds> rank_idle;
  uint64_t events = 0; ///< simulation work: the events processed
  /// Of a program's run: the ranks whose thread blocks ran, the others read off them by symmetry
  /// (simulator/rank_symmetry.h); 0 for other runs.
  int simulated_ranks = 0;
  std::vector<TraceSpan> trace;

  int64_t total_link_bytes() const;
};

/// Chrome trace event format: complete ("X") events in microseconds, one process per rank.
nlohmann::ordered_json to_chrome_trace(const SimulationResult &result);

} // namespace syncoll::simulator
