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
  check->add_option("--root", args->root, "root rank of rooted collectives (default: the file's)");
  check->callback([&result, args] {
    auto fail_with = [&](const Diagnostics &d) {
      print_diagnostics(d);
      result.exit_code = kBadInput;
    };
    auto algorithm = read_algorithm_file(args->file);
    if (!algorithm)
      return fail_with(algorithm.error());
    if (args->topology.spec.empty())
      args->topology.spec = algorithm->target.topology;
    if (args->topology.spec.empty())
      return fail_with(Diagnostics({Severity::Error,
                                    {args->file, 0, 0},
                                    "names no topology; give one with --topology",
                                    {}}));
    auto topology = resolve_topology(args->topology);
    if (!topology)
      return fail_with(topology.error());
    std::string coll = args->collective.empty() ? algorithm->target.collective : args->collective;
    if (coll.empty())
      return fail_with(Diagnostics({Severity::Error,
                                    {args->file, 0, 0},
                                    "names no collective; give one with --collective",
                                    {}}));
    auto root = args->root ? args->root : algorithm->target.root;
    auto collective =
        resolve_collective(coll, topology->num_ranks(),
                           args->chunk_factor.value_or(algorithm->target.chunk_factor), root);
    if (!collective)
      return fail_with(collective.error());
    AlgorithmCheck report = check_algorithm(*algorithm, *topology, *collective);
    fmt::print("algorithm '{}': {} steps, {} rounds, {} sends; {} on {} ({} ranks, chunk factor "
               "{})\n",
               algorithm->name, algorithm->num_steps(), algorithm->total_rounds(),
               algorithm->num_sends(), collective->name(), topology->name(), topology->num_ranks(),
               collective->chunk_factor());
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
