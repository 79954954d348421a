// Evaluating a study's points: the machine built as the study changes it, then each variant
// simulated there (NCCL's choice or a forced algorithm; a composed plan, lowered and verified;
// a program from a file, verified). A point that cannot run is a result too, never dropped.
#pragma once

#include "study/points.h"

#include <string>
#include <vector>

namespace syncoll::study {

enum class OutcomeStatus {
  Ok,
  NotVerified,   ///< the variant's program breaks a property: the verdict is the note
  NotApplicable, ///< the variant has nothing for this machine or collective (the note says why)
};

struct Outcome {
  OutcomeStatus status = OutcomeStatus::Ok;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  double busiest_link = 0; ///< the busiest link's utilization, 0 to 1 (none for closed forms)
  /// NCCL's choice as NCCL_DEBUG=INFO prints it, the plan that won, or why the point did not run.
  std::string note;
  /// Synth: the solver's wall-clock seconds for the frontier (the one metric that differs
  /// between two fresh runs; a cached result keeps it).
  double synthesis_s = 0;

  friend bool operator==(const Outcome &, const Outcome &) = default;
};

std::string_view outcome_status_name(OutcomeStatus status);
std::optional<OutcomeStatus> parse_outcome_status(std::string_view name);

/// One outcome per point of the group, in the group's order.
[[nodiscard]] std::vector<Outcome> evaluate(const Study &study, const Plan &plan,
                                            const Group &group);

} // namespace syncoll::study
