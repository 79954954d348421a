// MSCCL++ execution plans verified with the verdicts of MSCCL-IR programs (verifier/report.h's
// properties): the plan's references (structure), deadlock freedom, race freedom and the named
// collective's postcondition, each holds, violated with a counterexample a person can read, or
// unknown with the reason. docs/semantics.md ("MSCCL++ execution plans") is the semantics
// checked: what each operation reads and writes, and what signal, wait, flush, barrier and
// semaphore order.
#pragma once

#include "mscclpp/plan.h"
#include "verifier/report.h"

#include <string>
#include <vector>

namespace syncoll::mscclpp {

/// An operation a counterexample names: its GPU, thread block and place ("op 3", "op 2.1" in a
/// pipeline's body); thread block -1 is the GPU's user, before or after its kernel.
struct PlanStepRef {
  int gpu = 0;
  int tb = -1;
  std::string op;
  friend bool operator==(const PlanStepRef &, const PlanStepRef &) = default;
};

struct PlanVerdict {
  verifier::Property property = verifier::Property::Structure;
  verifier::VerdictKind kind = verifier::VerdictKind::Holds;
  std::string summary;                     ///< one line
  std::vector<std::string> counterexample; ///< lines a person reads, in order
  /// The operations the counterexample names, for drawing it: the blocked ones of a deadlock,
  /// both sides of each race shown (`races` pairs them), the last writers of wrong output.
  std::vector<PlanStepRef> steps;
  std::vector<std::pair<size_t, size_t>> races; ///< indices into steps
};

struct PlanReport {
  std::vector<PlanVerdict> verdicts; ///< structure, deadlock, races, postcondition
  /// What the verdicts cover: the plan's message-size window, its protocol and aliasing, and
  /// how pipelines were run.
  std::string coverage;
  bool all_hold() const;
  const PlanVerdict &verdict(verifier::Property property) const;
  std::string to_text() const;
};

/// Runs the plan's thread blocks under docs/semantics.md's MSCCL++ rules, chunk by chunk, and
/// decides every property. A pipeline's body runs once over its chunks (its iterations repeat
/// the same synchronization on disjoint units). Packets (LL) are read once their flags say they
/// arrived; NVLS (switch channels) loads and stores the same chunks of every GPU of its group.
[[nodiscard]] PlanReport verify_plan(const ExecutionPlan &plan);

} // namespace syncoll::mscclpp
