// `syncoll tune --system S`: NCCL's own choice and the fastest of what NCCL can run on the
// machine, simulated size by size, written as the tuner tables NCCL's example plugin (and
// syncoll's, tuner_plugin/) and NCCLX read.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/collective_traits.h"
#include "model/text.h"
#include "nccl/run.h"
#include "nccl/tuner_table.h"
#include "nccl/version.h"

#include <fmt/format.h>
#include <memory>

namespace syncoll::cli {
namespace {

struct TuneArgs {
  std::string system;
  TopologyOptions topology; ///< --nodes, --gpus, --nics, --nic-bandwidth, --fabric
  std::vector<std::string> collectives;
  std::string sizes = "1KiB..4GiB";
  std::string nccl_version;
  bool collnet = false;
  bool no_nvls = false;
  std::string tuner_csv;
  std::string ncclx_csv;
};

Expected<std::vector<CollectiveKind>> tuned_kinds(const std::vector<std::string> &names) {
  std::vector<CollectiveKind> kinds;
  if (names.empty()) {
    for (const CollectiveTraits &row : all_collective_traits())
      if (row.nccl_tuned)
        kinds.push_back(row.kind);
    return kinds;
  }
  for (const std::string &name : names) {
    SYNCOLL_TRY(kind, standard_collective_kind(name));
    if (!nccl::nccl_tunes(kind))
      return fail({}, fmt::format("-c: NCCL asks its tuner about broadcast, reduce, allgather, "
                                  "reducescatter and allreduce only, not '{}'",
                                  name));
    kinds.push_back(kind);
  }
  return kinds;
}

std::string choice_name(const nccl::NcclEstimate &e) {
  return fmt::format("{}/{}/{}", nccl::nccl_algorithm_name(e.algorithm),
                     protocol_traits(e.protocol).name, e.channels);
}

Expected<void> run_tune(TuneArgs &a) {
  SYNCOLL_TRY(kinds, tuned_kinds(a.collectives));
  nccl::TunerSweep sweep;
  sweep.kinds = kinds;
  SYNCOLL_TRY(sizes, parse_size_range(a.sizes));
  sweep.sizes = sizes;
  if (!a.nccl_version.empty()) {
    const auto found = nccl::find_nccl_version(a.nccl_version);
    if (!found)
      return fail({}, fmt::format("--nccl-version: '{}' is not an NCCL release the model knows",
                                  a.nccl_version));
    sweep.options.version = *found;
  }
  sweep.options.collnet = a.collnet;
  sweep.options.nvls = !a.no_nvls;
  SYNCOLL_TRY(built, build_system(a.system, a.topology));
  const simulator::SystemModel &system = built.model;
  SYNCOLL_TRY(machine, nccl::nccl_machine(system));
  std::size_t last_percent = 0;
  SYNCOLL_TRY(table,
              nccl::tune_nccl(system, machine, sweep, [&](std::size_t done, std::size_t total) {
                const std::size_t percent = 100 * done / total;
                if (percent / 10 != last_percent / 10 || done == total)
                  fmt::print(stderr, "syncoll tune: {} of {} sizes ({}%)\n", done, total, percent);
                last_percent = percent;
              }));
  const std::string machine_line =
      fmt::format("{} ({} node{}, {} GPUs), NCCL {}{}{}", built.label(), system.nodes,
                  system.nodes == 1 ? "" : "s", system.topology.num_ranks(),
                  nccl::nccl_version_name(sweep.options.version), a.no_nvls ? ", NVLS off" : "",
                  a.collnet ? ", CollNet on" : "");
  fmt::print("tune {}: NCCL's choice and the fastest it can run, simulated\n", machine_line);
  fmt::print("{:<14} {:>10}  {:<26} {:>12}  {:<26} {:>12} {:>8}\n", "collective", "size",
             "NCCL's choice", "NCCL us", "fastest", "fastest us", "speedup");
  for (const nccl::TunerPoint &p : table.points)
    fmt::print("{:<14} {:>10}  {:<26} {:>12.2f}  {:<26} {:>12.2f} {:>7.2f}x\n",
               collective_traits(p.kind).name, format_size(p.bytes), choice_name(p.nccl), p.nccl_us,
               choice_name(p.fastest), p.fastest_us,
               p.fastest_us > 0 ? p.nccl_us / p.fastest_us : 1.0);
  fmt::print("{} bands over {} collectives\n", table.rows.size(), kinds.size());
  const std::string source =
      fmt::format("syncoll tune --system {}: {}\nswept {} (a size stands for those halfway to its "
                  "neighbours); the fastest simulated of what NCCL can run",
                  a.system, machine_line, a.sizes);
  if (!a.tuner_csv.empty()) {
    SYNCOLL_CHECK(write_output(a.tuner_csv, nccl::write_nccl_tuner_csv(table, source)));
  }
  if (!a.ncclx_csv.empty()) {
    SYNCOLL_CHECK(write_output(a.ncclx_csv, nccl::write_ncclx_tuner_csv(table, source)));
  }
  return {};
}

} // namespace

void add_tune_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App *cmd = app.add_subcommand(
      "tune", "simulate every algorithm and protocol NCCL can run on a system, size by size, "
              "and write the fastest as NCCL's and NCCLX's tuner tables");
  args->topology.add_system_to(
      *cmd, args->system,
      "the calibrated machine (syncoll topo list), or an NCCL topology dump of one's node");
  cmd->add_option("-c,--collective", args->collectives,
                  "collectives to tune (default: the five NCCL asks its tuner about)")
      ->delimiter(',');
  cmd->add_option("-s,--sizes", args->sizes,
                  "sizes as nccl-tests counts them (NCCL's nBytes), a sweep A..B doubling or a "
                  "list of these (1MiB,64MiB,1GiB..8GiB); the "
                  "smallest stands for every size below it, the largest for every size above")
      ->capture_default_str();
  cmd->add_option("--nccl-version", args->nccl_version,
                  "the NCCL release whose algorithms are candidates (default: the newest)");
  cmd->add_flag("--collnet", args->collnet,
                "as NCCL_COLLNET_ENABLE=1: CollNet Direct and Chain are candidates too");
  cmd->add_flag("--no-nvls", args->no_nvls, "as NCCL_NVLS_ENABLE=0: no NVLS candidates");
  cmd->add_option("--nccl-tuner-csv", args->tuner_csv,
                  "write the table for NCCL's example tuner plugin and syncoll's "
                  "(NCCL_TUNER_CONFIG_FILE)")
      ->check(writable_file());
  cmd->add_option("--ncclx-tuner-csv", args->ncclx_csv,
                  "write the table for NCCLX's tuner (NCCLX_TUNER_CONFIG_FILE)")
      ->check(writable_file());
  cmd->callback([&result, args] {
    auto ok = run_tune(*args);
    if (!ok) {
      print_diagnostics(ok.error());
      result.exit_code = kBadInput;
      return;
    }
    result.exit_code = kSuccess;
  });
}

} // namespace syncoll::cli
