// A user's property test against the installed syncoll: every reference ring Allreduce of 2 to 8
// ranks and 1 to 4 channels verifies, and simulating it never beats the bandwidth bound
// 2 (n - 1) / n x size / a rank's
// sending rate. rapidcheck prints the seed and a shrunk counterexample when a
// case fails; the exit status is 0 only when every case passes.
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "testing/testing.h"
#include "verifier/verify.h"

#include <rapidcheck.h>

using namespace syncoll;

int main() {
  const bool ok = rc::check("a ring Allreduce verifies and respects the bandwidth bound", [] {
    const int n = *rc::gen::inRange(2, 9), channels = *rc::gen::inRange(1, 5);
    const Program program = testing::ring_allreduce_program(n, channels);
    RC_ASSERT(verifier::verify(program, {}).all_hold());
    const Topology ring = *make_library_topology("ring", {.n = n});
    simulator::ProgramSimOptions options;
    options.size_bytes = int64_t(64) << 20;
    const auto sim = simulator::simulate_program(program, ring, options);
    RC_ASSERT(sim && !sim->deadlocked);
    double out = 0; // bytes per ns a rank can send, over all of its links
    for (LinkId l : ring.out_links(RankId(0)))
      out += ring.link(l).bandwidth.value;
    const double bound_ns = 2.0 * (n - 1) / n * double(options.size_bytes) / out;
    RC_ASSERT(double(sim->result.completion) / 1e3 >= bound_ns * 0.999);
  });
  return ok ? 0 : 1;
}
