// `syncoll demo`: the end-to-end tour. At this stage it shows the DGX-1 model and checks two
// Allgather schedules on it with the independent checker; synthesis, lowering, verification and
// simulation join as their layers land (issue 8).
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/algorithm.h"
#include "model/collective.h"
#include "model/topology_library.h"

#include <fmt/format.h>

namespace syncoll::cli {
namespace {

// Ring Allgather along a Hamiltonian cycle of single and double NVLinks: in step s every rank
// forwards the chunk it received in step s-1 (seed sccl 2.3). P-1 steps of one round each.
Algorithm ring_allgather(const std::vector<int> &ring) {
  const int P = static_cast<int>(ring.size());
  Algorithm a;
  a.name = "dgx1-ring-allgather";
  a.target = {"allgather", P, 1, std::nullopt, "dgx1"};
  for (int s = 0; s < P - 1; ++s) {
    AlgorithmStep step;
    for (int i = 0; i < P; ++i) {
      int owner = ring[size_t((i - s + P) % P)];
      step.sends.push_back({ChunkId(owner), RankId(ring[size_t(i)]),
                            RankId(ring[size_t((i + 1) % P)]), SendOp::Copy});
    }
    a.steps.push_back(std::move(step));
  }
  return a;
}

void report(const Algorithm &a, const AlgorithmCheck &check) {
  fmt::print("  {}: {} steps, {} rounds, {} sends -> {}\n", a.name, a.num_steps(), a.total_rounds(),
             a.num_sends(), check.holds() ? "holds" : "violated");
  for (const auto &v : check.violations)
    fmt::print("      {}\n", v.message);
}

} // namespace

void add_demo_command(CLI::App &app, RunResult &result) {
  CLI::App *demo = app.add_subcommand("demo", "a short tour on the DGX-1 model");
  demo->callback([&result] {
    const Topology t = dgx1();
    fmt::print("== topology {}: {} ranks, {} directed links\n", t.name(), t.num_ranks(),
               t.links().size());
    for (int s = 0; s < t.num_ranks(); ++s) {
      std::string row;
      for (int d = 0; d < t.num_ranks(); ++d)
        row += fmt::format("{:>2}", s == d ? 0 : t.capacity(RankId(s), RankId(d)));
      fmt::print("  rank {}:{}\n", s, row);
    }
    auto allgather = make_collective(CollectiveKind::Allgather, t.num_ranks(), 1);
    const Algorithm good = ring_allgather({0, 1, 3, 2, 6, 7, 5, 4});
    fmt::print("== checking Allgather schedules (chunk factor 1) against the DGX-1 model\n");
    AlgorithmCheck good_check = check_algorithm(good, t, *allgather);
    report(good, good_check);
    // A ring through pairs without NVLink (0->6 and 4->1): the checker must refuse it, naming
    // the missing links and the chunks that never arrive.
    Algorithm bad = ring_allgather({0, 6, 7, 5, 4, 1, 3, 2});
    bad.name = "broken-ring-allgather";
    AlgorithmCheck bad_check = check_algorithm(bad, t, *allgather);
    report(bad, bad_check);
    bool as_expected = good_check.holds() && !bad_check.holds();
    fmt::print("== demo {}\n", as_expected ? "finished: the valid ring holds, the broken one is "
                                             "caught"
                                           : "FAILED");
    result.exit_code = as_expected ? kSuccess : kCheckFailed;
  });
}

} // namespace syncoll::cli
