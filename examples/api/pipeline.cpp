// syncoll as a library, through the folder headers only: read a topology, synthesize an
// Allgather on it, lower the algorithm to a thread-block program, verify the program, simulate
// it, and print what came out. Run as `syncoll_api_example [TOPOLOGY.json]` (default: the DGX-1
// model in examples/topologies); ctest runs it on that file.
#include "lowering/lowering.h"
#include "model/model.h"
#include "simulator/simulator.h"
#include "synth/synth.h"
#include "verifier/verifier.h"

#include <cstdio>
#include <string>

namespace {

using namespace syncoll;

// Everything but printing happens here, so bad input comes back as Diagnostics.
Expected<int> run(const std::string &topology_file) {
  SYNCOLL_TRY(topology, read_topology_file(topology_file));
  std::printf("topology %s: %d ranks, %zu links\n", topology.name().c_str(), topology.num_ranks(),
              topology.links().size());

  // The fewest steps an Allgather with 2 chunks per rank needs here (rounds = steps + 1).
  synth::Target target;
  target.kind = CollectiveKind::Allgather;
  SYNCOLL_TRY(least, synth::least_steps(topology, target, /*chunks=*/2, /*rounds=*/std::nullopt,
                                        /*k=*/1, /*max_steps=*/8, synth::SynthOptions{}));
  if (!least.found) {
    std::printf("no algorithm found\n");
    return 1;
  }
  const Algorithm &algorithm = *least.found->algorithm;
  std::printf("synthesized: %d steps, %d rounds%s\n", algorithm.num_steps(),
              algorithm.total_rounds(), least.proven_least ? " (fewest steps, proven)" : "");

  SYNCOLL_TRY(collective, target.collective(topology.num_ranks(), 2));
  // A thread block per connection and lane, as `syncoll lower` does it.
  SYNCOLL_TRY(lowered, lowering::lower_by_connection(algorithm, topology, collective));
  if (!lowered.verified) {
    std::printf("verification failed:\n%s", lowered.verified.error().to_text().c_str());
    return 1;
  }
  const verifier::VerifiedProgram &verified = *lowered.verified;
  std::printf("lowered and verified:\n%s", verified.report().to_text().c_str());

  for (int64_t size : {int64_t(1) << 10, int64_t(1) << 30}) {
    simulator::ProgramSimOptions options;
    options.size_bytes = size;
    SYNCOLL_TRY(sim, simulator::simulate_program(verified.program(), topology, options));
    std::printf("simulated %10lld bytes: %12.2f us, bus bandwidth %7.2f GB/s\n",
                static_cast<long long>(size), double(sim.result.completion) / 1e6,
                sim.result.busbw_gbps);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const std::string file =
      argc > 1 ? argv[1] : std::string(SYNCOLL_SOURCE_DIR) + "/examples/topologies/dgx1.json";
  auto exit_code = run(file);
  if (!exit_code) {
    for (const auto &d : exit_code.error().items())
      std::fprintf(stderr, "%s\n", d.to_string().c_str());
    return 2;
  }
  return *exit_code;
}
