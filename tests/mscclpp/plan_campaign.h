// The mutation campaign over MSCCL++ plans: faults injected into correct plans (the corpus, the
// examples, and plans lowered from verified MSCCL-IR programs), each mutant that renames a
// chunk, buffer or channel written to JSON and read back (the reader may refuse it), then judged by
// the verifier (verify_plan) and by the independent oracle (plan_oracle.h). A mutant the oracle
// sees misbehave must be flagged.
#pragma once

#include "mscclpp/plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace syncoll::testing {

struct PlanSubject {
  std::string name;
  mscclpp::ExecutionPlan plan;
};

/// The correct plans mutated: every plan of `source_dir`'s tests/data/mscclpp and
/// examples/mscclpp, the mutation campaign's MSCCL-IR programs lowered to plans, and the
/// hierarchical DSL examples lowered across two nodes (port channels).
[[nodiscard]] std::vector<PlanSubject> plan_subjects(const std::string &source_dir);

struct PlanMutant {
  std::string fault; ///< "drop signal", "relax wait", "wrong chunk", ...
  std::string where;
  mscclpp::ExecutionPlan plan;
  /// Whether it renames a chunk, buffer or channel: then it is written to JSON and read back,
  /// and the reader may refuse it (the other faults keep every reference the reader checked).
  bool renames = false;
};

/// Every mutant of every fault kind for one plan.
[[nodiscard]] std::vector<PlanMutant> plan_mutants(const mscclpp::ExecutionPlan &plan);

struct PlanCampaignRow {
  std::string plan;
  std::string fault;
  int mutants = 0;
  int rejected_by_reader = 0;
  int caught_by_verifier = 0;
  int behaviour_changing = 0; ///< by the oracle, among the mutants the reader takes
  int missed = 0;             ///< behaviour-changing but not flagged: must be 0
  int equivalent = 0;         ///< the oracle saw nothing and the verifier agreed
  int flagged_unseen = 0;     ///< flagged, though the oracle's schedules saw nothing
  std::vector<std::string> missed_examples;
  std::vector<std::string> unseen_examples; ///< with the verifier's first flagged verdict
};

struct PlanCampaignResult {
  std::vector<PlanCampaignRow> rows;
  std::vector<std::string> correct_plan_failures; ///< must be empty
};

/// Judges every `stride`-th mutant of every subject (all of them at 1); `schedules` random
/// schedules per plan, from `seed`.
[[nodiscard]] PlanCampaignResult run_plan_campaign(const std::vector<PlanSubject> &subjects,
                                                   int schedules, uint64_t seed, int stride = 1);

} // namespace syncoll::testing
