// `syncoll simulate`'s NCCL runs (simulate_nccl.h).
#include "cli/simulate_nccl.h"

#include "model/collective_traits.h"
#include "nccl/algorithms.h"
#include "nccl/graph_xml.h"
#include "nccl/preset.h"
#include "nccl/run.h"
#include "nccl/steps.h"
#include "nccl/topo_xml.h"
#include "simulator/system_model.h"

#include <fmt/format.h>
#include <functional>
#include <iostream>
#include <memory>

namespace syncoll::cli::simulate {

// The NCCL algorithm a --baseline name forces; none for `nccl` (NCCL's own choice).
std::optional<nccl::NcclAlgorithm> forced_algorithm(const std::string &baseline) {
  if (baseline == "nccl-ring")
    return nccl::NcclAlgorithm::Ring;
  if (baseline == "nccl-tree")
    return nccl::NcclAlgorithm::Tree;
  if (baseline == "nccl-nvls")
    return nccl::NcclAlgorithm::Nvls;
  if (baseline == "nccl-nvlstree")
    return nccl::NcclAlgorithm::NvlsTree;
  if (baseline == "nccl-pat")
    return nccl::NcclAlgorithm::Pat;
  if (baseline == "nccl-collnet-direct")
    return nccl::NcclAlgorithm::CollNetDirect;
  if (baseline == "nccl-collnet-chain")
    return nccl::NcclAlgorithm::CollNetChain;
  return std::nullopt;
}

namespace {
// The fastest of the algorithms NCCL could run at `size` other than its choice, each forced
// with the tuner's protocol for it under the run's own settings (an algorithm NCCL_NVLS_ENABLE=0
// turns off is none to force), when it simulates more than 1% faster than the choice: the
// tuner and the simulator disagree (docs/cost-model.md says what that means).
Expected<std::string> faster_forced_algorithm(CollectiveKind kind, int64_t size,
                                              const simulator::SystemModel &system,
                                              const nccl::NcclMachine &machine,
                                              nccl::NcclRunOptions options,
                                              const nccl::NcclRun &choice) {
  constexpr double kMargin = 0.99;
  std::optional<nccl::NcclRun> fastest;
  for (nccl::NcclAlgorithm algorithm :
       {nccl::NcclAlgorithm::Ring, nccl::NcclAlgorithm::Tree, nccl::NcclAlgorithm::Nvls,
        nccl::NcclAlgorithm::NvlsTree, nccl::NcclAlgorithm::Pat, nccl::NcclAlgorithm::CollNetDirect,
        nccl::NcclAlgorithm::CollNetChain, nccl::NcclAlgorithm::P2p}) {
    if (algorithm == choice.choice.algorithm)
      continue;
    options.algorithm = algorithm;
    options.trace = false;
    auto forced = nccl::simulate_nccl(kind, size, system, machine, options);
    if (!forced) // NCCL has no such algorithm for this call
      continue;
    if (!fastest || forced->result.completion < fastest->result.completion)
      fastest = std::move(*forced);
  }
  if (!fastest || double(fastest->result.completion) >= kMargin * double(choice.result.completion))
    return std::string();
  return fmt::format(
      "at {} NCCL_ALGO={} ({}) simulates {:.2f}x faster than NCCL's choice ({:.1f} vs {:.1f} us; "
      "docs/cost-model.md, \"When a forced algorithm beats NCCL's choice\")",
      format_size(size), nccl::nccl_algorithm_name(fastest->choice.algorithm),
      protocol_traits(fastest->choice.protocol).name,
      double(choice.result.completion) / double(fastest->result.completion),
      double(fastest->result.completion) / 1e6, double(choice.result.completion) / 1e6);
}

} // namespace

Expected<Subject> baseline_subject(const SimulateArgs &a, const Topology &topology,
                                   std::optional<Protocol> protocol) {
  if (a.collective.empty())
    return fail({}, "--baseline needs --collective");
  SYNCOLL_TRY(kind, standard_collective_kind(a.collective));
  const auto forced = forced_algorithm(a.baseline);
  if (!forced || !nccl::nccl_runs_on_topology(*forced))
    return fail({}, fmt::format("--baseline {} needs a machine: give --system", a.baseline));
  if (*forced == nccl::NcclAlgorithm::Tree && a.streamed)
    return fail({}, "--streamed runs NCCL's ring: the tree as a step-synchronous schedule is "
                    "not NCCL's tree program (up to 2.6x apart on a 4-node fat tree); drop "
                    "--streamed");
  if (a.root && *a.root >= topology.num_ranks())
    return fail({}, fmt::format("--root {}: '{}' has ranks 0 to {}", *a.root, topology.name(),
                                topology.num_ranks() - 1));
  // NCCL's tree on a plain topology is a tree over the links (nccl_topology_trees), not a graph
  // file's chains: the ring graph options would change nothing but its channel count.
  if (*forced == nccl::NcclAlgorithm::Tree)
    for (const auto &[given, option] :
         {std::pair{!a.nccl_graph.empty(), "--nccl-graph"},
          std::pair{!a.write_nccl_graph.empty(), "--write-nccl-graph"},
          std::pair{a.syncoll_rings, "--syncoll-rings"}})
      if (given)
        return fail({}, fmt::format("{}: on a topology (-t) NCCL's tree runs over the links, "
                                    "not a graph file's chains; give --baseline nccl-ring, or a "
                                    "--system, whose tree graph the file holds",
                                    option));
  // A rank's CUDA device in NCCL's graph file: the dump's `dev` for a topology read from
  // NCCL's dump, the rank itself for any other.
  std::vector<int> dev_of_rank(size_t(topology.num_ranks()));
  for (size_t r = 0; r < dev_of_rank.size(); ++r)
    dev_of_rank[r] = int(r);
  // What NCCL's search knows of a dumped machine beyond its links (its AMD sockets).
  nccl::NcclSearchHost host;
  if (nccl::names_nccl_topology_file(a.topology.spec)) {
    SYNCOLL_TRY(machine, nccl::read_nccl_topology_file(a.topology.spec));
    for (size_t r = 0; r < machine.gpus.size() && r < dev_of_rank.size(); ++r)
      dev_of_rank[r] = machine.gpus[r].dev;
    host = nccl::nccl_search_host(machine);
  }
  if (a.syncoll_rings) {
    if (!a.nccl_graph.empty())
      return fail({}, "--syncoll-rings and --nccl-graph both choose the rings: give one");
    if (host.amd_sockets.empty())
      return fail({}, fmt::format("--syncoll-rings: on '{}' syncoll's ring search finds what "
                                  "NCCL's does (NCCL's is narrower only where its rings cross "
                                  "AMD sockets of a topology dump)",
                                  topology.name()));
    host.amd_sockets.clear();
  }
  std::optional<nccl::NcclRingGraph> given;
  if (!a.nccl_graph.empty()) {
    SYNCOLL_TRY(text, read_text_file(a.nccl_graph));
    SYNCOLL_TRY(file, nccl::read_nccl_graph_xml(text, a.nccl_graph));
    if (!file.ring)
      return fail(file.where, "no ring graph (a <graph> with pattern=\"4\"): on a topology (-t) "
                              "NCCL's ring runs the file's rings");
    nccl::GraphRings read = nccl::rings_of_graph(*file.ring, topology, dev_of_rank);
    if (read.broken)
      return Subject{std::nullopt, std::nullopt, "", std::nullopt, *read.broken};
    given = std::move(read.graph);
  }
  SYNCOLL_TRY(rings, nccl::nccl_topology_rings(topology, kind, a.channels,
                                               RankId(a.root.value_or(0)), given, host));
  if (!a.write_nccl_graph.empty())
    SYNCOLL_CHECK(write_output(a.write_nccl_graph, nccl::ring_graph_xml(rings.graph, dev_of_rank)));
  if (a.streamed && *forced == nccl::NcclAlgorithm::Ring) {
    SYNCOLL_TRY(steps, nccl::NcclRingSteps::create(kind, rings.rings));
    return Subject{std::nullopt, std::nullopt,
                   fmt::format("NCCL ring {}, streamed step-synchronous ({} channel(s))",
                               collective_kind_name(kind), rings.rings.size()),
                   StreamedRing{std::move(steps), kind}};
  }
  SYNCOLL_TRY(p, nccl::nccl_topology_program(*forced, kind, topology, rings,
                                             protocol.value_or(Protocol::Simple)));
  if (*forced == nccl::NcclAlgorithm::Tree)
    return Subject{std::move(p), std::nullopt,
                   fmt::format("NCCL tree allreduce ({} pipelined chunks, {} channel(s))",
                               nccl::kNcclTreePipelineChunks, rings.channels)};
  return Subject{
      std::move(p), std::nullopt,
      fmt::format("NCCL ring {}{} ({} channel(s) over {} {} ring(s) at {} GB/s)", a.collective,
                  collective_traits(kind).rooted ? fmt::format(" from root {}", a.root.value_or(0))
                                                 : "",
                  rings.channels, rings.graph.channels(),
                  given             ? "graph file's"
                  : a.syncoll_rings ? "syncoll-searched"
                                    : "NCCL-searched",
                  rings.graph.intra_gbps)};
}

// --write-nccl-graph writes the graphs that run.

Expected<SystemMachine> system_machine(const SimulateArgs &a,
                                       const simulator::SystemModel &system) {
  SYNCOLL_TRY(machine, nccl::nccl_machine(system));
  SystemMachine out{std::move(machine), {}, {}, std::nullopt};
  if (a.nccl_graph.empty() && a.write_nccl_graph.empty())
    return out;
  nccl::SystemGraphShape shape{
      system.nodes, system.gpus_per_node, system.topology.hierarchy().nics_per_node, {}};
  for (int g = 0; g < system.gpus_per_node; ++g)
    shape.dev_of_gpu.push_back(g);
  if (nccl::names_nccl_topology_file(a.system)) {
    SYNCOLL_TRY(dump, nccl::read_nccl_topology_file(a.system));
    for (int g = 0; g < system.gpus_per_node && g < int(dump.gpus.size()); ++g)
      shape.dev_of_gpu[size_t(g)] = dump.gpus[size_t(g)].dev;
  }
  shape.nics_per_node = std::max(1, std::min(shape.nics_per_node, shape.gpus_per_node));
  if (!a.nccl_graph.empty()) {
    SYNCOLL_TRY(text, read_text_file(a.nccl_graph));
    SYNCOLL_TRY(file, nccl::read_nccl_graph_xml(text, a.nccl_graph));
    nccl::SystemGraphs graphs = nccl::graphs_on_system(file, system.line_topology, shape);
    if (graphs.broken) {
      out.broken = std::move(graphs.broken);
      return out;
    }
    if (graphs.nvls && !system.nvls) {
      out.notes.push_back("the NVLS graph (id 3) is not used: the machine has no NVLS");
      graphs.nvls.reset();
    }
    if (graphs.nvls && system.nodes > 1)
      out.notes.push_back("across nodes the NVLS graph's heads and their NICs carry NVLS tree and "
                          "NVLS, but its speeds do not move NCCL's choice: the model costs them on "
                          "the ring graph there (docs/nccl.md, \"The NVLS graph\")");
    std::vector<std::string> read;
    for (auto [held, name] :
         {std::pair{bool(graphs.rings), "rings"}, std::pair{bool(graphs.trees), "trees"},
          std::pair{bool(graphs.nvls), "NVLS heads"}})
      if (held)
        read.emplace_back(name);
    std::string listed;
    for (size_t i = 0; i < read.size(); ++i)
      listed += (i == 0 ? "" : i + 1 == read.size() ? " and " : ", ") + read[i];
    out.from_file = fmt::format(", {} of graph file {}", listed, a.nccl_graph);
    for (const std::string &graph : file.unread)
      out.notes.push_back(fmt::format("graph {} steers an algorithm whose graph syncoll does not "
                                      "read (CollNet); NCCL's model searches it",
                                      graph));
    out.notes.insert(out.notes.end(), graphs.notes.begin(), graphs.notes.end());
    out.machine =
        nccl::with_graphs(system, std::move(out.machine), std::move(graphs.rings),
                          std::move(graphs.trees), std::move(graphs.nvls), graphs.tree_types);
  }
  if (!a.write_nccl_graph.empty())
    SYNCOLL_CHECK(
        write_output(a.write_nccl_graph,
                     nccl::system_graphs_xml(
                         out.machine.ring,
                         nccl::nccl_tree_chains(system, out.machine, out.machine.ring.channels()),
                         out.machine.nvls_graph ? &*out.machine.nvls_graph : nullptr, shape,
                         out.machine.tree_types)));
  return out;
}

// NCCL on a system preset: its choice per size (or the algorithm forced), simulated.
Expected<std::vector<Row>> simulate_nccl_sizes(const SimulateArgs &a,
                                               const simulator::SystemModel &system,
                                               const nccl::NcclMachine &machine,
                                               std::optional<Protocol> protocol,
                                               const std::vector<int64_t> &sizes) {
  if (a.collective.empty())
    return fail({}, "--baseline needs --collective");
  SYNCOLL_TRY(kind, standard_collective_kind(a.collective));
  std::vector<Row> rows;
  nccl::NcclRunOptions options;
  options.algorithm = forced_algorithm(a.baseline);
  options.protocol = protocol;
  options.version = a.nccl_release;
  options.collnet = a.collnet;
  options.tuner_plugin = !a.no_tuner_plugin;
  options.nvls = !a.no_nvls;
  if (a.channels > 0)
    options.channels = a.channels;
  if (a.min_ctas > 0)
    options.min_channels = a.min_ctas;
  options.trace = !a.trace.empty();
  for (int64_t size : sizes) {
    SYNCOLL_TRY(run, nccl::simulate_nccl(kind, size, system, machine, options));
    if (options.trace && run.closed_form)
      return fail({}, fmt::format("--trace: NCCL runs {} at {} as {}, a closed form without a "
                                  "timeline; force a ring or tree with --baseline",
                                  collective_kind_name(kind), format_size(size),
                                  nccl::nccl_algorithm_name(run.choice.algorithm)));
    std::string faster;
    if (a.baseline == "nccl" && !protocol && a.channels == 0) {
      SYNCOLL_TRY(f, faster_forced_algorithm(kind, size, system, machine, options, run));
      faster = std::move(f);
    }
    rows.push_back({size, std::move(run.result), false,
                    run.info + (run.closed_form ? " (closed form)" : ""), std::move(faster)});
  }
  return rows;
}

} // namespace syncoll::cli::simulate
