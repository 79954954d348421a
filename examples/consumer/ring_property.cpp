// A user's property tests against the installed syncoll. The first is the ten-line property the
// package is for: every program syncoll::testing generates (reference programs and generated
// algorithms through the compiler) verifies, the simulator agrees with the verifier, and no
// simulated time beats the cost model's receive bound. The second checks a user's own family, a
// ring Allreduce of 2..8 ranks and 1..4 channels, the same way. rapidcheck prints the seed and a
// shrunk counterexample when a case fails; the exit status is 0 only when every case passes.
#include "model/collective_traits.h"
#include "model/topology_library.h"
#include "testing/testing.h"

#include <rapidcheck.h>

using namespace syncoll;

int main() {
  const bool generated = rc::check("generated programs keep the laws", [] {
    const testing::FamilyCase c = *testing::gen_verified_program();
    const int64_t size =
        testing::case_size_bytes(*rc::gen::inRange(10, 24), c.program, c.collective);
    testing::require(testing::verifies(c.program, c.collective));
    testing::require(testing::simulator_agrees_with_verifier(c.program, c.topology, c.collective));
    testing::require(
        testing::simulated_time_respects_bound(c.program, c.topology, c.collective, size));
  });
  const bool ring = rc::check("my ring Allreduce keeps the laws", [] {
    const Program p =
        testing::ring_allreduce_program(*rc::gen::inRange(2, 9), *rc::gen::inRange(1, 5));
    const CollectiveSpec c = *collective_for_program(p, std::nullopt);
    const Topology t = *make_library_topology("ring", {.n = p.num_ranks()});
    testing::require(testing::verifies(p, c));
    testing::require(testing::simulated_time_respects_bound(p, t, c, int64_t(64) << 20));
    testing::require(
        testing::cpu_executor_matches_reference(p, c, int64_t(p.chunks_per_loop()) << 12, 1));
  });
  return generated && ring ? 0 : 1;
}
