// A study's results, written three ways from the same outcomes: a long-format CSV (one row per
// point and metric), JSON (one object per point), and a self-contained HTML report with SVG plots
// (busbw and speedup against size per variant, a heat map over two machine axes, the winner per
// size, and every point that did not run with why). Equal outcomes give byte-identical files.
#pragma once

#include "study/evaluate.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::study {

struct Results {
  const Study *study = nullptr;
  const Plan *plan = nullptr;
  std::vector<Outcome> outcomes; ///< one per point of the plan

  /// The point's time over the baseline variant's at the same machine, collective and size;
  /// none unless both ran.
  std::optional<double> speedup(size_t point) const;
  /// The fastest variant at a machine, collective and size; none when no variant ran.
  std::optional<size_t> winner(size_t machine, CollectiveKind collective, int64_t size) const;
  /// The point of that machine, collective, variant and size.
  size_t point_of(size_t machine, CollectiveKind collective, size_t variant, int64_t size) const;
};

/// The machine with the preset's values where the study left them at zero.
[[nodiscard]] Machine resolved(const Machine &machine);
/// A machine in words: "4 x dgx_h100 (8 GPUs each, 8 NICs of 50 GB/s)", "ring (8 ranks, ...)".
[[nodiscard]] std::string machine_title(const Machine &machine);

[[nodiscard]] std::string results_csv(const Results &results);
[[nodiscard]] std::string results_json(const Results &results);
[[nodiscard]] std::string report_html(const Results &results);

} // namespace syncoll::study
