// `syncoll compose`: a collective written as multicasts, reductions and fences (a standard one by
// name, or a composition file), factorized for a machine's hierarchy, lowered, verified and
// simulated; with --search, HiCCL's parameters tried on the simulator and the fastest plan set
// beside NCCL's own choice on the same machine.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "compose/composition_json.h"
#include "compose/plan_dot.h"
#include "compose/search.h"
#include "lowering/compile.h"
#include "nccl/version.h"
#include "simulator/program_sim.h"

#include <fmt/format.h>
#include <memory>
#include <sstream>

namespace syncoll::cli {
namespace {

struct ComposeArgs {
  std::string collective;
  std::string file;
  std::string system;
  TopologyOptions machine; ///< --nodes, --gpus, --nics, --nic-bandwidth
  std::optional<int> chunk_factor;
  std::optional<int> root;
  std::string factors;
  std::string transports;
  int stripes = 1;
  int ring_nodes = 1;
  int pipeline = 1;
  bool search = false;
  std::string size = "1MiB";
  std::string output;
  std::string format = "xml";
  std::string dot;
};

std::string describe(const compose::Hierarchy &h) {
  std::string factors;
  for (int f : h.factors)
    factors += (factors.empty() ? "" : "x") + std::to_string(f);
  std::string transports;
  for (compose::Transport t : h.transports)
    transports += (transports.empty() ? "" : ",") + std::string(compose::transport_name(t));
  return fmt::format("factors {} stripes {} ring {} pipeline {}{}", factors, h.stripes,
                     h.ring_nodes, h.pipeline,
                     transports.empty() ? "" : " transports " + transports);
}

// The plan's parameters: --factors, or nodes x GPUs on several nodes, and the rest as given.
Expected<compose::Hierarchy> hierarchy_of(const ComposeArgs &a,
                                          const simulator::SystemModel &system) {
  compose::Hierarchy h;
  if (!a.factors.empty()) {
    const auto factors = parse_int_list(a.factors, ',');
    if (!factors)
      return fail({}, fmt::format("--factors '{}': expected group counts such as 4,8", a.factors));
    h.factors = *factors;
  } else if (system.nodes > 1) {
    h.factors = {system.nodes, system.gpus_per_node};
  }
  if (!a.transports.empty()) {
    std::stringstream in(a.transports);
    for (std::string name; std::getline(in, name, ',');) {
      const auto t = compose::parse_transport(name);
      if (!t)
        return fail({}, fmt::format("--transports '{}': unknown transport '{}' (known: auto, p2p, "
                                    "net)",
                                    a.transports, name));
      h.transports.push_back(*t);
    }
  }
  h.stripes = a.stripes;
  h.ring_nodes = a.ring_nodes;
  h.pipeline = a.pipeline;
  return compose::checked(h, system.topology.num_ranks());
}

struct Input {
  compose::Composition composition;
  CollectiveSpec collective;
};

Expected<Input> composition_input(const ComposeArgs &a, int ranks) {
  if (a.collective.empty() == a.file.empty())
    return fail({}, "give either a collective (-c) or a composition file (--file)");
  if (!a.file.empty()) {
    SYNCOLL_TRY(c, compose::read_composition_file(a.file));
    if (c.num_ranks() != ranks)
      return fail({a.file}, fmt::format("the composition has {} ranks and the machine {}",
                                        c.num_ranks(), ranks));
    SYNCOLL_TRY(spec, c.specification("custom"));
    return Input{std::move(c), std::move(spec)};
  }
  SYNCOLL_TRY(kind, standard_collective_kind(a.collective));
  const int factor = a.chunk_factor.value_or(kind == CollectiveKind::Allreduce ? ranks : 1);
  std::optional<int> root = a.root;
  if (collective_traits(kind).rooted && !root)
    root = 0;
  SYNCOLL_TRY(spec, make_collective(kind, ranks, factor, root));
  SYNCOLL_TRY(c, compose::Composition::standard(kind, ranks, factor, root));
  return Input{std::move(c), std::move(spec)};
}

// The plan of `h` factorized, lowered, verified and simulated on the machine as every command
// runs programs there (SystemModel::program_topology); the program's XML and the plan's drawing
// written when asked. The time printed is the written program's.
Expected<int> run_plan(const ComposeArgs &a, const Input &input, const compose::Hierarchy &h,
                       const simulator::SystemModel &system, int64_t bytes) {
  SYNCOLL_TRY(plan, compose::factorize(input.composition, input.collective, h, system.topology));
  const int ranks = system.topology.num_ranks();
  std::map<int, int> per_level;
  for (const compose::Hop &hop : plan.hops)
    ++per_level[hop.level];
  std::string levels;
  for (const auto &[level, n] : per_level)
    levels += fmt::format("{}{} {}", levels.empty() ? "" : ", ", n,
                          level < 0 ? "local copies" : fmt::format("hops at level {}", level));
  fmt::print("plan: {}; {} wavefront steps; {}\n", describe(h), plan.steps, levels);
  if (!a.dot.empty())
    SYNCOLL_CHECK(write_output(a.dot, compose::plan_to_dot(plan, h, ranks)));
  SYNCOLL_TRY(lowered, lowering::lower(plan.program));
  if (!lowered.verified) {
    fmt::print("{}", lowered.verified.error().to_text());
    fmt::print("the plan does not verify: not simulated, not written\n");
    return int(kCheckFailed);
  }
  simulator::ProgramSimOptions o;
  o.size_bytes = bytes;
  o.model = system.interpreted();
  SYNCOLL_TRY(sim, simulator::simulate_program(lowered.program,
                                               simulator::with_fair_ports(plan.topology), o));
  // A plan whose transports leave links unused runs on the machine less those links: simulate
  // on the --system routes over all of them.
  const bool whole_machine = plan.topology.links().size() == system.topology.links().size();
  // A plan written for MSCCL++ is another program than the one timed here: say which ran.
  fmt::print("verified; simulated {:.1f} us, busbw {:.1f} GB/s{}{}\n",
             double(sim.result.completion) / 1e6, sim.result.busbw_gbps,
             whole_machine ? "" : " (on the machine less the links its transports leave unused)",
             a.format == "mscclpp"
                 ? " as an MSCCL-IR program (`syncoll simulate` times the MSCCL++ "
                   "plan written)"
                 : "");
  return write_verified_program(*lowered.verified, system.topology, a.output, a.format);
}

Expected<int> run_compose(const ComposeArgs &a) {
  SYNCOLL_TRY(built, build_system(a.system, a.machine));
  const simulator::SystemModel &system = built.model;
  const int ranks = system.topology.num_ranks();
  SYNCOLL_TRY(sizes, parse_size_range(a.size));
  if (sizes.size() != 1)
    return fail({}, fmt::format("--size '{}': compose times one size", a.size));
  const int64_t bytes = sizes.front();
  SYNCOLL_TRY(input, composition_input(a, ranks));
  // Every parameter is checked and the plan built before anything is printed: bad input is one
  // line and nothing else.
  std::optional<compose::Hierarchy> hierarchy;
  if (!a.search) {
    SYNCOLL_TRY(h, hierarchy_of(a, system));
    SYNCOLL_CHECK(compose::factorize(input.composition, input.collective, h, system.topology));
    hierarchy = std::move(h);
  }
  const std::optional<int> root =
      input.collective.root() ? std::optional(input.collective.root()->value()) : std::nullopt;
  fmt::print("{}{} on {} x {} ({} ranks), {} B\n", a.file.empty() ? a.collective : a.file,
             root ? fmt::format(" from root {}", *root) : "", system.nodes, built.label(), ranks,
             bytes);
  if (!a.search)
    return run_plan(a, input, *hierarchy, system, bytes);

  const int nics = system.preset->nics_per_node;
  SYNCOLL_TRY(results,
              compose::search(input.composition, input.collective, system, {bytes},
                              compose::candidates(system.nodes, system.gpus_per_node, nics)));
  const compose::Search &found = results.front();
  fmt::print("{:<44} {:>12}  {}\n", "plan", "time (us)", "verdict");
  for (const compose::Tried &t : found.tried)
    fmt::print("{:<44} {:>12}  {}\n", describe(t.hierarchy),
               t.us ? fmt::format("{:.1f}", *t.us) : "-", t.verdict);
  if (!found.best) {
    fmt::print("no plan verified\n");
    return int(kCheckFailed);
  }
  const compose::Tried &best = found.tried[*found.best];
  fmt::print("best: {}: {:.1f} us\n", describe(best.hierarchy), *best.us);
  if (found.nccl_us)
    fmt::print("NCCL's choice: {} (the tuner's estimate; NCCL {}); simulated {:.1f} us; the "
               "composed plan is {:.2f}x NCCL's speed\n",
               found.nccl_info, nccl::nccl_version_name(nccl::kNewestNcclVersion), *found.nccl_us,
               *found.nccl_us / *best.us);
  else if (!found.nccl_info.empty())
    fmt::print("NCCL: {}\n", found.nccl_info);
  if (a.output.empty() && a.dot.empty())
    return int(kSuccess);
  // The best plan again, to write the very program timed above.
  return run_plan(a, input, best.hierarchy, system, bytes);
}

} // namespace

void add_compose_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<ComposeArgs>();
  CLI::App *cmd = app.add_subcommand(
      "compose", "a collective as multicasts, reductions and fences, factorized for a machine's "
                 "hierarchy, verified and simulated (--search: try HiCCL's parameters)");
  cmd->add_option("-c,--collective", args->collective, "a standard collective by name");
  cmd->add_option("--file", args->file, "a composition file (JSON; docs/formats.md)");
  cmd->add_option("--system", args->system, "the machine: a system preset (syncoll topo systems)")
      ->required();
  cmd->add_option("--nodes", args->machine.params.nodes, "nodes of the preset (default 1)");
  args->machine.add_fabric_to(*cmd);
  cmd->add_option("--nics", args->machine.params.nics, "NICs per node (default: the preset's)");
  cmd->add_option("--nic-bandwidth", args->machine.params.nic_bandwidth_gbps,
                  "one NIC's line rate, GB/s (default: the preset's)");
  add_renamed_option(*cmd, "--nic-gbps", "--nic-bandwidth",
                     args->machine.params.nic_bandwidth_gbps);
  cmd->add_option("--gpus", args->machine.params.gpus,
                  "GPUs per node (default: all of the preset's)");
  cmd->add_option("-C,--chunk-factor", args->chunk_factor,
                  "chunks per rank buffer (default: the rank count for allreduce, else 1)");
  cmd->add_option("--root", args->root, "root of rooted collectives (default 0)")
      ->check(at_least(0));
  cmd->add_option("--factors", args->factors,
                  "group counts per level, outermost first (default: nodes,gpus)");
  cmd->add_option("--transports", args->transports,
                  "per level, outermost first: auto, p2p (the GPUs' own link inside a node) or net "
                  "(through the NICs)");
  cmd->add_option("--stripes", args->stripes, "parts sent across the top level by different GPUs");
  cmd->add_option("--ring-nodes", args->ring_nodes,
                  "top-level groups chained as a ring (1: a tree)");
  cmd->add_option("--pipeline", args->pipeline, "pieces each stripe is cut into");
  cmd->add_flag("--search", args->search, "try the candidate plans and keep the fastest");
  cmd->add_option("-s,--size,--sizes", args->size, "one size, as nccl-tests counts it")
      ->capture_default_str();
  cmd->add_option("--format", args->format,
                  "what -o writes: xml (MSCCL-IR, the default) or mscclpp (an MSCCL++ execution "
                  "plan, written only when it verifies too)")
      ->check(CLI::IsMember({"xml", "mscclpp"}));
  cmd->add_option("-o,--output", args->output, "write the verified program's XML (or plan) here")
      ->check(writable_file());
  cmd->add_option("--dot", args->dot, "write the plan drawn by level (DOT) here")
      ->check(writable_file());
  cmd->callback([&result, args] { result.exit_code = exit_code_or_bad_input(run_compose(*args)); });
}

} // namespace syncoll::cli
