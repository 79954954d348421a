// Ready laws for property tests: each takes one case and says whether the law holds on it, and
// when not, why, in words a person can read (the verifier's counterexample, the slots that differ,
// the bound that was beaten). A rapidcheck property asserts one with `testing::require(law)`;
// `syncoll check` runs them over a family of programs.
#pragma once

#include "lowering/dsl.h"
#include "model/collective.h"
#include "model/program.h"
#include "model/topology.h"
#include "verifier/verify.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace syncoll::testing {

enum class LawOutcome { Holds, Broken, Unknown };

/// What a law says about one case. Unknown (a verifier limit was reached) is neither success nor
/// failure.
struct LawVerdict {
  LawOutcome outcome = LawOutcome::Holds;
  std::string law;            ///< the law's name, as `syncoll check --laws` spells it
  std::string counterexample; ///< why it is broken or unknown; empty when it holds
  bool holds() const { return outcome == LawOutcome::Holds; }
  bool broken() const { return outcome == LawOutcome::Broken; }
};

/// Inside a rapidcheck property: fails the case with the counterexample unless the law holds
/// (an unknown verdict discards the case).
void require(const LawVerdict &verdict);

/// "verifies": every property the verifier checks holds (structure, resources, deadlock and race
/// freedom, the postcondition) for `collective`, over the program's whole size window.
[[nodiscard]] LawVerdict verifies(const Program &program, const CollectiveSpec &collective);

/// "lowers and verifies": the compiler lowers the DSL program (every pass, then the verifier) to a
/// program every property of which holds. A DSL program the compiler refuses breaks the law too.
[[nodiscard]] LawVerdict lowers_and_verifies(const lowering::DslProgram &program);

/// "agrees": the timed simulator and the verifier's executor, written apart, agree on the same
/// program: both finish or both deadlock, and when the program is race free the simulator's
/// symbolic output equals the verifier's in every slot. Checked out of place and in place, with
/// small messages (one transfer per step, one iteration) and large ones (split, two iterations).
/// The program runs on `topology`, which must link every pair of ranks it talks between.
[[nodiscard]] LawVerdict simulator_agrees_with_verifier(const Program &program,
                                                        const Topology &topology,
                                                        const CollectiveSpec &collective);

/// The cost model's bandwidth lower bound for `size_bytes` (the runtime's nBytes): the most any
/// rank must receive over everything that enters it, max over ranks r of
/// needed(r) x chunk bytes / (sum of r's incoming link bandwidths), where needed(r) counts the
/// chunks r must end with that it cannot make from what it starts with. In picoseconds.
[[nodiscard]] double receive_bound_ps(const Program &program, const Topology &topology,
                                      const CollectiveSpec &collective, int64_t size_bytes);

/// "bound": the simulated time of `size_bytes` (the runtime's nBytes) is at least receive_bound_ps;
/// a program that deadlocks in the simulator breaks the law too.
[[nodiscard]] LawVerdict simulated_time_respects_bound(const Program &program,
                                                       const Topology &topology,
                                                       const CollectiveSpec &collective,
                                                       int64_t size_bytes);

/// "cpu": the program verifies, and the CPU executor, run with seeded i32 data of `size_bytes`
/// (the call's size as nccl-tests counts it: the larger buffer of one rank), finishes and writes in
/// every output slot what the host reference computes.
[[nodiscard]] LawVerdict cpu_executor_matches_reference(const Program &program,
                                                        const CollectiveSpec &collective,
                                                        int64_t size_bytes, uint64_t seed);

} // namespace syncoll::testing
