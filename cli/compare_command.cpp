// `syncoll compare LOG --system S`: an nccl-tests run (its text log, NCCL_DEBUG=INFO lines and
// all, or its -J JSON) held against NCCL's choice simulated on the system, size by size.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/collective_traits.h"
#include "nccl/nccl_tests.h"
#include "nccl/run.h"
#include "nccl/tuning.h"
#include "nccl/version.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>

namespace syncoll::cli {
namespace {

struct CompareArgs {
  std::string log;
  std::string system;
  TopologyOptions topology; ///< --nodes, --gpus, --nics, --nic-bandwidth, --fabric
  std::string collective;
  std::string nccl_version;
};

// Algorithm and protocol names as NCCL's INFO lines print them ("NVLSTree", "Simple") against
// the model's ("NVLSTREE").
bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string signed_percent(double ratio) {
  return fmt::format("{:+.1f}%", 100 * (ratio - 1));
}

// The NCCL release whose choice is simulated: --nccl-version's, else the one the log ran (or
// the modelled release nearest it), else the newest modelled; and where it came from.
struct Release {
  nccl::NcclVersion version = nccl::kNewestNcclVersion;
  std::string origin = "the newest modelled: the log names none";
};
Expected<Release> release_for(const CompareArgs &a, const nccl::MeasuredLog &log) {
  if (!a.nccl_version.empty()) {
    const auto found = nccl::find_nccl_version(a.nccl_version);
    if (!found)
      return fail({}, fmt::format("--nccl-version: '{}' is not an NCCL release the model knows "
                                  "({})",
                                  a.nccl_version, nccl::known_nccl_versions()));
    return Release{*found, "--nccl-version"};
  }
  const auto ran =
      log.nccl_version_code ? nccl::nccl_version_of_code(*log.nccl_version_code) : std::nullopt;
  if (!ran)
    return Release{};
  const nccl::NcclVersion nearest = nccl::nearest_modelled_release(*ran);
  return Release{nearest, nearest == *ran ? std::string("the log's")
                                          : fmt::format("the modelled release nearest the "
                                                        "log's {}",
                                                        nccl::nccl_version_name(*ran))};
}

// The machine's shape where the command line gives neither --nodes nor --gpus: a node per host
// the log's device lines name (its GPUs split evenly among them), or one node of the log's GPUs;
// where the preset's node spans several hosts of the log's size (an NVL72 rack of 18 trays of
// 4), as many of those nodes as the log's GPUs fill.
struct LogShape {
  TopologyOptions options;
  std::string origin; ///< for the heading: " (2 nodes of 8 GPUs, as the log's hosts)"
};
Expected<LogShape> machine_of_log(const CompareArgs &a, const nccl::MeasuredLog &log) {
  LogShape shape{a.topology, {}};
  if (a.topology.params.nodes || a.topology.params.gpus || !log.ranks)
    return shape;
  SYNCOLL_TRY(preset, build_system(a.system, a.topology));
  const int node_gpus = preset.model.gpus_per_node;
  if (!log.hosts && preset.model.topology.num_ranks() == *log.ranks)
    return shape;
  const int hosts = log.hosts.value_or(1);
  if (*log.ranks % hosts != 0)
    return shape; // the mismatch is reported with the hosts
  const int per_host = *log.ranks / hosts;
  if (per_host == preset.preset->gpus_per_host && *log.ranks % node_gpus == 0) {
    const int nodes = *log.ranks / node_gpus;
    shape.options.params.nodes = nodes;
    shape.origin =
        fmt::format(" ({} node{} of {} GPUs: the log's {} hosts of {}, {} to a node)", nodes,
                    nodes > 1 ? "s" : "", node_gpus, hosts, per_host, node_gpus / per_host);
    return shape;
  }
  if (hosts == 1 && per_host == node_gpus)
    return shape; // the preset's own node
  if (hosts > 1)
    shape.options.params.nodes = hosts;
  if (per_host != node_gpus)
    shape.options.params.gpus = per_host;
  shape.origin = fmt::format(" ({} node{} of {} GPUs, as the log's {})", hosts,
                             hosts > 1 ? "s" : "", per_host, log.hosts ? "hosts" : "devices");
  return shape;
}

Expected<void> run_compare(CompareArgs &a) {
  SYNCOLL_TRY(text, read_text_file(a.log));
  SYNCOLL_TRY(log, nccl::read_nccl_tests_log(text, a.log));
  std::optional<CollectiveKind> kind = log.kind;
  if (!a.collective.empty()) {
    SYNCOLL_TRY(given, standard_collective_kind(a.collective));
    kind = given;
  }
  if (!kind)
    return fail({a.log, 1, 1}, "the log does not name its collective (no \"Collective test "
                               "starting\" line or experiment_name); give -c");
  SYNCOLL_TRY(release, release_for(a, log));
  SYNCOLL_TRY(shape, machine_of_log(a, log));
  SYNCOLL_TRY(built, build_system(a.system, shape.options));
  const simulator::SystemModel &system = built.model;
  const int ranks = system.topology.num_ranks();
  if (log.ranks && *log.ranks != ranks)
    return fail(
        {a.log, 1, 1},
        fmt::format("the log ran on {} GPUs{} and the system has {} (give --nodes and "
                    "--gpus to match)",
                    *log.ranks,
                    log.hosts ? fmt::format(" of {} host{}", *log.hosts, *log.hosts > 1 ? "s" : "")
                              : "",
                    ranks));
  SYNCOLL_TRY(machine, nccl::nccl_machine(system));
  nccl::NcclRunOptions options;
  options.version = release.version;
  fmt::print("compare {} ({}{}) with NCCL's choice (NCCL {}, {}) on {}{}, system {}\n", a.log,
             collective_traits(*kind).nccl_tests_binary,
             log.ranks ? fmt::format(", {} GPUs", *log.ranks) : "",
             nccl::nccl_version_name(release.version), release.origin, system.topology.name(),
             shape.origin, built.label());
  fmt::print("{:>10} {:>12} {:>12} {:>8} {:>11} {:>11}  {:<14} {}\n", "size", "measured us",
             "simulated us", "error", "meas busbw", "sim busbw", "NCCL measured", "NCCL simulated");
  double log_sum = 0;
  int counted = 0;
  // NCCL's choice where the log's INFO lines name it: sizes named, and those the model differs at.
  int named = 0;
  std::vector<std::string> differ;
  std::optional<std::pair<double, int64_t>> worst; // ratio, size
  for (const nccl::MeasuredRow &row : log.rows) {
    SYNCOLL_TRY(run, nccl::simulate_nccl(*kind, row.size, system, machine, options));
    const double simulated_us = double(run.result.completion) / 1e6;
    const std::string simulated_choice =
        fmt::format("{}/{}", nccl::nccl_algorithm_name(run.choice.algorithm),
                    protocol_traits(run.choice.protocol).name);
    const std::string measured_choice =
        row.algorithm.empty() ? "-" : fmt::format("{}/{}", row.algorithm, row.protocol);
    if (!row.algorithm.empty()) {
      ++named;
      if (!same_name(row.algorithm, nccl::nccl_algorithm_name(run.choice.algorithm)) ||
          !same_name(row.protocol, protocol_traits(run.choice.protocol).name))
        differ.push_back(format_size(row.size));
    }
    std::string error = "-";
    if (row.time_us > 0 && simulated_us > 0) {
      const double ratio = simulated_us / row.time_us;
      error = signed_percent(ratio);
      log_sum += std::abs(std::log(ratio));
      ++counted;
      if (!worst || std::abs(std::log(ratio)) > std::abs(std::log(worst->first)))
        worst = {ratio, row.size};
    }
    fmt::print("{:>10} {:>12.2f} {:>12.2f} {:>8} {:>11.2f} {:>11.2f}  {:<14} {}\n",
               format_size(row.size), row.time_us, simulated_us, error, row.busbw_gbps,
               run.result.busbw_gbps, measured_choice, simulated_choice);
  }
  if (counted > 0)
    fmt::print("{} sizes: geomean error {:.1f}% (exp of the mean |ln(simulated / measured)|), "
               "worst {} at {}\n",
               counted, 100 * (std::exp(log_sum / counted) - 1), signed_percent(worst->first),
               format_size(worst->second));
  if (named > 0)
    fmt::print("NCCL's choice: the model's is the log's at {} of the {} sizes its INFO lines "
               "name{}\n",
               named - int(differ.size()), named,
               differ.empty() ? std::string()
                              : fmt::format(" (not at {})", fmt::join(differ, ", ")));
  return {};
}

} // namespace

void add_compare_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App *cmd = app.add_subcommand(
      "compare", "hold an nccl-tests log (its text, NCCL_DEBUG=INFO lines and all, or its -J "
                 "JSON) against NCCL's choice simulated on a system, size by size");
  cmd->add_option("log", args->log, "nccl-tests output: text or JSON")->required();
  args->topology.add_system_to(
      *cmd, args->system,
      "the calibrated machine the log ran on (syncoll topo list), or an NCCL topology dump "
      "of one's node");
  cmd->add_option("-c,--collective", args->collective,
                  "the collective, where the log does not name its program");
  cmd->add_option("--nccl-version", args->nccl_version,
                  "the NCCL release whose choice is simulated (default: the one the log names, "
                  "or the modelled release nearest it; else the newest modelled)");
  cmd->callback([&result, args] {
    auto ok = run_compare(*args);
    if (!ok) {
      print_diagnostics(ok.error());
      result.exit_code = kBadInput;
      return;
    }
    result.exit_code = kSuccess;
  });
}

} // namespace syncoll::cli
