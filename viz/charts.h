// Charts written as SVG directly (no layout needed): a Gantt timeline of a simulation trace and
// a speedup-versus-size plot.
#pragma once

#include "simulator/result.h"

#include <string>
#include <vector>

namespace syncoll::viz {

/// One row per (rank, thread block or link) of the trace, bars at their simulated times, time
/// axis in microseconds.
std::string timeline_svg(const simulator::SimulationResult &result, const std::string &title);

struct Series {
  std::string name;
  std::vector<double> values; ///< one per size
};

/// Lines over sizes (log scale, labelled as nccl-tests prints sizes), a dashed line at 1.
std::string speedup_svg(const std::vector<std::int64_t> &sizes, const std::vector<Series> &series,
                        const std::string &title, const std::string &y_label);

} // namespace syncoll::viz
