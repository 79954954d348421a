// `syncoll algo check`.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/algorithm.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {

void add_algo_commands(CLI::App &app, RunResult &result) {
  CLI::App *algo = app.add_subcommand("algo", "work with algorithm JSON files");
  algo->require_subcommand(1);

  struct CheckArgs {
    std::string file;
    TopologyOptions topology;
    std::string collective;
    std::optional<int> chunk_factor;
    std::optional<int> root;
  };
  auto args = std::make_shared<CheckArgs>();
  CLI::App *check = algo->add_subcommand(
      "check", "check an algorithm against a topology and a collective: sources hold what they "
               "send, links and bandwidth relations are respected in every step, and the "
               "postcondition holds");
  check->add_option("algorithm", args->file, "algorithm JSON file")->required();
  args->topology.add_to(*check, /*positional=*/false, /*required=*/false);
  check->add_option("-c,--collective", args->collective,
                    "collective name or custom collective JSON (default: the file's)");
  check->add_option("-C,--chunk-factor", args->chunk_factor,
                    "chunks per rank buffer (default: the file's)");
  check->add_option("--root", args->root, "root rank of rooted collectives (default: the file's)")
      ->check(at_least(0));
  check->callback([&result, args] {
    auto fail_with = [&](const Diagnostics &d) {
      print_diagnostics(d);
      result.exit_code = kBadInput;
    };
    auto input = read_algorithm_input(args->file, args->topology, args->collective,
                                      args->chunk_factor, args->root);
    if (!input)
      return fail_with(input.error());
    const Algorithm &algorithm = input->algorithm;
    const Topology &topology = input->topology;
    const CollectiveSpec &collective = input->collective;
    AlgorithmCheck report = check_algorithm(algorithm, topology, collective);
    fmt::print("algorithm '{}': {} steps, {} rounds, {} sends; {} on {} ({} ranks, chunk factor "
               "{})\n",
               algorithm.name, algorithm.num_steps(), algorithm.total_rounds(),
               algorithm.num_sends(), collective.name(), topology.name(), topology.num_ranks(),
               collective.chunk_factor());
    if (report.holds()) {
      fmt::print("check: holds (sources hold their chunks, bandwidth respected in every step, "
                 "postcondition met)\n");
      result.exit_code = kSuccess;
      return;
    }
    fmt::print("check: violated, {} problem(s):\n", report.violations.size());
    for (const auto &v : report.violations)
      fmt::print("  {}\n", v.message);
    result.exit_code = kCheckFailed;
  });
}

} // namespace syncoll::cli
