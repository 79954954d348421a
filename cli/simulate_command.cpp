// `syncoll simulate`: an algorithm, a thread-block program or an NCCL baseline on a topology,
// for one message size or a sweep.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "cli/simulate_nccl.h"
#include "model/algorithm.h"
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "mscclpp/mscclpp.h"
#include "nccl/algorithms.h"
#include "nccl/graph_xml.h"
#include "nccl/nccl_tests.h"
#include "nccl/preset.h"
#include "nccl/run.h"
#include "nccl/steps.h"
#include "nccl/topo_xml.h"
#include "nccl/version.h"
#include "simulator/algorithm_sim.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <iostream>
#include <memory>

namespace syncoll::cli {
namespace {

using namespace simulate; // SimulateArgs, Row, Subject and the NCCL parts

// `topology` with every bandwidth relation's (and under fair sharing every link's) sharing
// overridden when --sharing asks.
Expected<Topology> shared_as_asked(Topology topology, const SimulateArgs &a) {
  if (a.sharing.empty())
    return topology;
  return with_sharing(topology,
                      a.sharing == "fair" ? RelationSharing::Fair : RelationSharing::Fifo);
}

Expected<std::optional<Protocol>> protocol_for(const SimulateArgs &a) {
  if (a.protocol.empty())
    return std::nullopt;
  auto protocol = parse_protocol(a.protocol);
  if (!protocol)
    return fail({},
                fmt::format("unknown protocol '{}' (expected Simple, LL or LL128)", a.protocol));
  return protocol;
}

simulator::Picoseconds sharing_window_ps(double us) {
  return static_cast<simulator::Picoseconds>(std::llround(us * 1e6));
}

simulator::CostModel cost_model_for(const SimulateArgs &a) {
  simulator::CostModel model = a.preset == "nccl" ? nccl::nccl_preset() : simulator::CostModel{};
  model.switching = a.switching == "store-and-forward" ? simulator::Switching::StoreAndForward
                                                       : simulator::Switching::CutThrough;
  model.sharing_window = sharing_window_ps(a.sharing_window_us.value_or(0));
  return model;
}

// The sizes outside a program's or plan's message-size window (MSCCL-IR's minBytes and
// maxBytes, an MSCCL++ plan's min and max message size), where its runtime would pick another
// program: said, not refused, since a what-if may ask; empty when every size is inside.
std::string outside_window(const Subject &subject, const std::vector<Row> &rows) {
  uint64_t low = 0, high = UINT64_MAX;
  std::string whose;
  if (subject.plan) {
    low = subject.plan->min_message_bytes, high = subject.plan->max_message_bytes;
    whose = "the plan's";
  } else if (subject.program) {
    const ProgramDraft &d = subject.program->draft();
    low = uint64_t(d.min_bytes), high = d.max_bytes > 0 ? uint64_t(d.max_bytes) : UINT64_MAX;
    whose = "the program's (minBytes, maxBytes)";
  }
  std::vector<std::string> outside;
  for (const Row &r : rows)
    if (uint64_t(r.size) < low || uint64_t(r.size) > high)
      outside.push_back(format_size(r.size));
  if (outside.empty())
    return {};
  return fmt::format("{} lie outside {} message-size window ({} B to {}): its runtime would run "
                     "another program there",
                     fmt::join(outside, ", "), whose, low,
                     high == UINT64_MAX ? std::string("any") : fmt::format("{} B", high));
}

// A program in either form, or an algorithm JSON.
Expected<Subject> file_subject(const SimulateArgs &a) {
  SYNCOLL_TRY(text, read_text_file(a.input));
  std::optional<JsonDocument> doc;
  if (sniff_program_format(text) == ProgramFormat::Json) {
    SYNCOLL_TRY(parsed, JsonDocument::parse(text, a.input));
    doc = std::move(parsed);
  }
  if (doc && mscclpp::is_execution_plan(doc->root())) {
    SYNCOLL_TRY(plan, mscclpp::read_execution_plan(text, a.input));
    const std::string what =
        fmt::format("MSCCL++ plan '{}' ({}; first-come links and ports, a pipeline's body run "
                    "once over its chunks)",
                    plan.name, collective_kind_name(plan.collective));
    return Subject{std::nullopt, std::nullopt, what, std::nullopt, std::nullopt, std::move(plan)};
  }
  if (doc && !is_program_json(doc->root())) {
    SYNCOLL_TRY(algorithm, algorithm_from_json(doc->root()));
    return Subject{std::nullopt, std::move(algorithm), a.input};
  }
  SYNCOLL_TRY(program, parse_program(text, a.input));
  print_diagnostics(program.warnings);
  return Subject{std::move(program.value), std::nullopt, a.input};
}

Expected<std::vector<Row>>
simulate_sizes(const Subject &subject, const SimulateArgs &a, const Topology &topology,
               const simulator::SystemModel *system, const simulator::CostModel &model,
               std::optional<Protocol> protocol, const std::vector<int64_t> &sizes) {
  std::vector<Row> rows;
  if (subject.plan) {
    if (!a.trace.empty())
      return fail({}, "--trace needs a thread-block program or a baseline, not an MSCCL++ plan");
    for (int64_t size : sizes) {
      SYNCOLL_TRY(sim, mscclpp::simulate_plan(*subject.plan, topology, size, model));
      rows.push_back({size, std::move(sim.result), sim.deadlocked, {}, {}});
    }
    return rows;
  }
  if (subject.streamed) {
    if (!a.trace.empty())
      return fail({}, "--trace needs a baseline's thread-block program, not --streamed");
    const StreamedRing &ring = *subject.streamed;
    for (int64_t size : sizes) {
      SYNCOLL_TRY(sim, nccl::simulate_streamed_ring(ring.steps, topology, size, model,
                                                    protocol.value_or(Protocol::Simple)));
      sim.algbw_gbps = sim.completion > 0 ? double(size) * 1000.0 / double(sim.completion) : 0;
      sim.busbw_gbps = sim.algbw_gbps * bus_bandwidth_factor(ring.kind, topology.num_ranks());
      rows.push_back({size, std::move(sim), false, {}, {}});
    }
    return rows;
  }
  if (subject.program) {
    for (int64_t size : sizes) {
      simulator::ProgramSimOptions o;
      o.size_bytes = size;
      o.model = model;
      o.protocol = protocol;
      o.trace = !a.trace.empty();
      SYNCOLL_TRY(sim, simulator::simulate_program(*subject.program, topology, o));
      rows.push_back({size, std::move(sim.result), sim.deadlocked, {}, {}});
    }
    return rows;
  }
  const Algorithm &algorithm = *subject.algorithm;
  const std::string coll = a.collective.empty() ? algorithm.target.collective : a.collective;
  SYNCOLL_TRY(collective, resolve_collective(coll, topology.num_ranks(),
                                             a.chunk_factor.value_or(algorithm.target.chunk_factor),
                                             a.root ? a.root : algorithm.target.root));
  // On a system the algorithm runs as one of SCCL's lowerings, on the links at its rates.
  std::optional<simulator::AlgorithmExecutor> lowered;
  if (system && protocol && *protocol != Protocol::Simple)
    return fail({}, "an algorithm on a --system runs as SCCL's generated code, which copies like "
                    "Simple; --protocol applies to programs and baselines");
  if (system && a.lowering == "copy-engine") {
    SYNCOLL_TRY(e, system->copy_engine(algorithm));
    lowered = std::move(e);
  } else if (system) {
    lowered = system->sccl_kernel();
  }
  simulator::AlgorithmSimOptions options;
  if (lowered) {
    options = lowered->options;
  } else {
    options.efficiency =
        model.efficiency[simulator::CostModel::index(protocol.value_or(Protocol::Simple))];
    options.switching = model.switching;
  }
  options.timing = a.mode == "dataflow" ? simulator::AlgorithmTiming::Dataflow
                                        : simulator::AlgorithmTiming::StepSynchronous;
  options.trace = !a.trace.empty();
  const Topology &links = lowered ? lowered->topology : topology;
  for (int64_t size : sizes) {
    // --size counts like nccl-tests: the output for allgather and gather.
    const int64_t input = input_bytes_for_nccl_tests_size(collective, size);
    SYNCOLL_TRY(sim, simulator::simulate_algorithm(algorithm, links, collective, input, options));
    rows.push_back({size, std::move(sim), false, {}, {}});
  }
  return rows;
}

// The sweep as CSV (--csv).
std::string csv_of(const std::vector<Row> &rows) {
  std::string csv = "size_bytes,time_us,algbw_gbps,busbw_gbps,deadlocked\n";
  for (const Row &r : rows)
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{}\n", r.size, double(r.result.completion) / 1e6,
                       r.result.algbw_gbps, r.result.busbw_gbps, r.deadlocked ? 1 : 0);
  return csv;
}

// The sweep as nccl-tests reports it (--nccl-tests, --nccl-tests-json); a deadlocked size has no
// row there (nccl-tests has no way to say it), and the command's exit code says so.
nccl::NcclTestsRun nccl_tests_run(const SimulateArgs &a, const std::string &heading, int ranks,
                                  int ranks_per_host, const std::vector<Row> &rows,
                                  CollectiveKind kind) {
  nccl::NcclTestsRun run;
  run.kind = kind;
  run.ranks = ranks;
  run.ranks_per_host = ranks_per_host;
  if (collective_traits(run.kind).rooted)
    run.root = a.root.value_or(0);
  run.what = heading;
  if (!a.baseline.empty() && !a.system.empty())
    run.nccl_version_code = nccl::nccl_version_code(a.nccl_release);
  for (const Row &r : rows)
    if (!r.deadlocked)
      run.rows.push_back(
          {r.size, double(r.result.completion) / 1e6, r.result.algbw_gbps, r.result.busbw_gbps});
  return run;
}

// The table on stdout (and the busiest links for a single size); returns the CSV form.
std::string print_rows(const std::vector<Row> &rows) {
  fmt::print("{:>10} {:>14} {:>12} {:>12}\n", "size", "time (us)", "algbw GB/s", "busbw GB/s");
  for (const Row &r : rows) {
    const double us = double(r.result.completion) / 1e6;
    if (r.deadlocked)
      fmt::print("{:>10} {:>14} {:>12} {:>12}\n", format_size(r.size), "deadlock", "-", "-");
    else
      fmt::print("{:>10} {:>14.3f} {:>12.2f} {:>12.2f}\n", format_size(r.size), us,
                 r.result.algbw_gbps, r.result.busbw_gbps);
  }
  const std::string csv = csv_of(rows);
  // A closed form (NVLS, CollNet) times no links: nothing to list.
  if (rows.size() == 1 && !rows[0].deadlocked && !rows[0].result.links.empty()) {
    const auto &links = rows[0].result.links;
    std::vector<size_t> order(links.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return links[x].utilization > links[y].utilization;
    });
    fmt::print("busiest links:");
    for (size_t i = 0; i < std::min<size_t>(4, order.size()); ++i)
      fmt::print(" {}->{} {:.0f}%", links[order[i]].src.value(), links[order[i]].dst.value(),
                 100 * links[order[i]].utilization);
    fmt::print("\n");
  }
  return csv;
}

// The machine a --system names, as the options change it; the sharing a what-if asks for
// replaces the system's (NCCL's own runs included).
Expected<BuiltSystem> system_for(const SimulateArgs &a) {
  if (!a.preset.empty())
    return fail({}, "--preset and --system both set the cost model; give one");
  if (!a.switching.empty())
    return fail({}, "--switching applies to a topology (-t); a --system's links are direct or "
                    "through its switches");
  SYNCOLL_TRY(built, build_system(a.system, a.topology));
  SYNCOLL_TRY(shared, shared_as_asked(std::move(built.model.topology), a));
  built.model.topology = std::move(shared);
  if (a.sharing_window_us) {
    // Asked for: the window holds however short the hops sharing the ports.
    built.model.model.sharing_window = sharing_window_ps(*a.sharing_window_us);
    built.model.model.sharing_window_hop_ratio = 0;
    built.model.model.sharing_window_from_hops = 0;
  }
  return built;
}

// Everything the command does once its options are parsed; true when a size deadlocked.
Expected<bool> run_simulate(SimulateArgs &a) {
  if (a.input.empty() == a.baseline.empty())
    return fail({}, "give either an input file or --baseline");
  if (!a.system.empty() && !a.topology.spec.empty())
    return fail({}, "give either a topology (-t) or a system (--system), not both");
  SYNCOLL_TRY(sizes, parse_size_range(a.size));
  if (a.streamed && (a.baseline.empty() || !a.system.empty()))
    return fail({}, "--streamed runs the nccl-ring baseline on a topology (-t)");
  for (const auto &[given, option] : {std::pair{!a.nccl_graph.empty(), "--nccl-graph"},
                                      std::pair{!a.write_nccl_graph.empty(), "--write-nccl-graph"}})
    if (given && a.baseline.empty())
      return fail({}, fmt::format("{} is NCCL's graph file: give an NCCL --baseline (nccl-ring "
                                  "on a topology, -t; any on a --system)",
                                  option));
  if (a.syncoll_rings && (a.baseline.empty() || !a.system.empty()))
    return fail({}, "--syncoll-rings is syncoll's ring search on a topology dump: give --baseline "
                    "nccl-ring with -t");
  if (!a.trace.empty() && sizes.size() != 1)
    return fail({}, "--trace needs a single --size");
  SYNCOLL_TRY(protocol, protocol_for(a));
  if (!a.nccl_version.empty()) {
    if (a.baseline.empty() || a.system.empty())
      return fail({}, "--nccl-version applies to an NCCL baseline on a --system");
    const auto release = nccl::find_nccl_version(a.nccl_version);
    if (!release)
      return fail({}, fmt::format("--nccl-version: '{}' is not an NCCL release the model knows: {}",
                                  a.nccl_version, nccl::known_nccl_versions()));
    a.nccl_release = *release;
  }
  if (a.no_tuner_plugin && (a.baseline.empty() || a.system.empty()))
    return fail({}, "--no-tuner-plugin applies to an NCCL baseline on a --system");
  if (a.min_ctas > 0 && (a.baseline.empty() || a.system.empty()))
    return fail({}, "--min-ctas applies to an NCCL baseline on a --system");
  if (a.min_ctas > 0 && a.channels > 0)
    return fail({}, "--min-ctas and --channels both set a call's channels: give one");
  if (a.no_nvls) {
    if (a.baseline.empty() || a.system.empty())
      return fail({}, "--no-nvls applies to an NCCL baseline on a --system");
    if (const auto forced = forced_algorithm(a.baseline);
        forced &&
        (*forced == nccl::NcclAlgorithm::Nvls || *forced == nccl::NcclAlgorithm::NvlsTree))
      return fail({},
                  fmt::format("--no-nvls leaves no NVLS for --baseline {} to force", a.baseline));
  }
  if (const auto forced = forced_algorithm(a.baseline); forced && nccl::nccl_is_collnet(*forced))
    a.collnet = true; // NCCL_ALGO=CollNet* runs only with NCCL_COLLNET_ENABLE=1
  std::optional<BuiltSystem> built;
  if (!a.system.empty()) {
    SYNCOLL_TRY(s, system_for(a));
    built = std::move(s);
  }
  if (a.collnet) {
    if (!built || a.baseline.empty())
      return fail({}, "--collnet applies to an NCCL baseline on a --system of several nodes");
    if (built->model.nodes < 2)
      return fail({}, "--collnet: CollNet reduces in the network between nodes; give --nodes 2 "
                      "or more");
    if (built->model.fabric->in_network_reduction.empty())
      return fail({}, fmt::format("--collnet: fabric '{}' has no in-network reduction (IB SHARP "
                                  "needs InfiniBand HDR or newer: ib_hdr, ib_ndr, ib_xdr)",
                                  built->model.fabric->name));
  }
  // Both are checked on the machine built, so a topology dump answers as its preset would.
  if (a.no_tuner_plugin && built->model.preset->platform_tuner == PlatformTuner::None)
    return fail({}, fmt::format("--no-tuner-plugin: system '{}' loads no tuner plugin", a.system));
  if (a.no_nvls && !built->model.nvls)
    return fail({}, fmt::format("--no-nvls: system '{}' has no NVLS to turn off (NVLink SHARP "
                                "needs Hopper or Blackwell GPUs behind an NVSwitch)",
                                a.system));
  const simulator::SystemModel *system = built ? &built->model : nullptr;
  std::optional<Subject> from_file;
  if (!a.input.empty()) {
    SYNCOLL_TRY(subject, file_subject(a));
    from_file = std::move(subject);
  }
  // The collective of nccl-tests' table: an MSCCL++ plan's own, else -c's.
  const CollectiveKind table_kind =
      from_file && from_file->plan
          ? from_file->plan->collective
          : parse_collective_kind(a.collective).value_or(CollectiveKind::Custom);
  const bool algorithm = from_file && from_file->algorithm;
  if (!algorithm && !a.mode.empty())
    return fail({}, "--mode times an algorithm (JSON); a program or baseline runs as its thread "
                    "blocks do");
  if (!algorithm && a.chunk_factor)
    return fail({}, "--chunk-factor applies to an algorithm (JSON); a program's chunks are its "
                    "own");
  if (from_file && !algorithm && a.root)
    return fail({}, "--root applies to algorithms and baselines; a program's root is its own");
  if (!from_file && a.root && !a.collective.empty()) {
    SYNCOLL_TRY(kind, standard_collective_kind(a.collective));
    if (!collective_traits(kind).rooted)
      return fail({}, fmt::format("--root {}: {} has no root", *a.root, a.collective));
    if (system)
      return fail({}, "--root: NCCL's runs on a --system start at rank 0; a forced ring on a "
                      "topology (-t) takes a root");
  }
  if (from_file && a.channels > 0)
    return fail({}, "--channels applies to NCCL baselines; a file's channels are its own");
  // An MSCCL++ plan names its collective and protocol, and is timed first come first served
  // with cut-through hops (mscclpp/simulate_plan.h): nothing these options change.
  if (from_file && from_file->plan)
    for (const auto &[given, option] :
         {std::pair{!a.collective.empty(), "-c"}, std::pair{!a.protocol.empty(), "--protocol"},
          std::pair{!a.sharing.empty(), "--sharing"},
          std::pair{a.sharing_window_us.has_value(), "--sharing-window"},
          std::pair{!a.switching.empty(), "--switching"}})
      if (given)
        return fail({}, fmt::format("{} does not apply to an MSCCL++ plan: it names its "
                                    "collective and protocol, and is timed with first-come "
                                    "links and ports and cut-through hops",
                                    option));
  std::optional<Topology> topology;
  if (system) {
    // A program runs on the machine as every command runs programs there, unless --sharing
    // asked for another sharing.
    topology = from_file && from_file->program && a.sharing.empty() ? system->program_topology()
                                                                    : system->topology;
  } else if (from_file && from_file->algorithm) {
    SYNCOLL_TRY(t, topology_for_algorithm(a.input, *from_file->algorithm, a.topology));
    SYNCOLL_TRY(shared, shared_as_asked(std::move(t), a));
    topology = std::move(shared);
  } else {
    if (a.topology.spec.empty())
      return fail({}, "give a topology (-t) or a system (--system)");
    SYNCOLL_TRY(t, resolve_topology(a.topology));
    SYNCOLL_TRY(shared, shared_as_asked(std::move(t), a));
    topology = std::move(shared);
  }
  std::vector<Row> rows;
  std::string what, outside;
  if (system && !a.baseline.empty()) {
    if (a.collective.empty())
      return fail({}, "--baseline needs --collective");
    if (!a.lowering.empty())
      return fail({}, "--lowering times an algorithm (JSON) on a --system; NCCL runs its own "
                      "kernels");
    SYNCOLL_TRY(kind, standard_collective_kind(a.collective));
    (void)kind; // checked before a graph file is written
    SYNCOLL_TRY(machine, system_machine(a, *system));
    if (machine.broken) {
      // A verdict on the graph file, not bad input: it is well formed and NCCL would refuse it.
      fmt::print("NCCL cannot run the graph file's channels on {}: {}\n", topology->name(),
                 machine.broken->to_string());
      return true;
    }
    for (const std::string &note : machine.notes)
      fmt::print("note: graph file {}: {}\n", a.nccl_graph, note);
    SYNCOLL_TRY(r, simulate_nccl_sizes(a, *system, machine.machine, protocol, sizes));
    rows = std::move(r);
    // RCCL is NCCL's search, algorithms and tuning ported to HIP: the model runs NCCL's and says
    // so, as RCCL's own per-GPU tuning tables are not in it.
    const std::string_view library = system->generation->collective_library;
    const std::string release =
        library == "NCCL" ? fmt::format("NCCL {}", nccl::nccl_version_name(a.nccl_release))
                          : fmt::format("{} as NCCL {}'s search, algorithms and tuning", library,
                                        nccl::nccl_version_name(a.nccl_release));
    what = fmt::format("{} ({}{}{})",
                       a.baseline == "nccl" ? fmt::format("{}'s choice", library)
                                            : fmt::format("{} {}", library, a.baseline.substr(5)),
                       release,
                       a.collnet
                           ? fmt::format(", CollNet over {}", system->fabric->in_network_reduction)
                           : std::string(),
                       machine.from_file);
  } else {
    // A program from a file runs under the MSCCL executor's per-step cost on a system.
    simulator::CostModel model = system ? system->interpreted() : cost_model_for(a);
    SYNCOLL_TRY(subject,
                from_file ? std::move(*from_file) : baseline_subject(a, *topology, protocol));
    if (!from_file) {
      SYNCOLL_TRY(kind, standard_collective_kind(a.collective));
      model = nccl::nccl_chunked(model, kind); // NCCL's own program, in its chunks
    }
    if (subject.broken_graph) {
      // A verdict on the graph file, not bad input: it is well formed and NCCL would refuse it.
      fmt::print("NCCL cannot run the graph file's rings on {}: {}\n", topology->name(),
                 subject.broken_graph->to_string());
      return true;
    }
    if (!a.lowering.empty() && (!system || !subject.algorithm))
      return fail({}, "--lowering times an algorithm (JSON) on a --system");
    if (a.lowering == "copy-engine" && a.mode == "dataflow")
      return fail({}, "--lowering copy-engine issues steps one after another: it has no dataflow "
                      "mode");
    SYNCOLL_TRY(r, simulate_sizes(subject, a, *topology, system, model, protocol, sizes));
    rows = std::move(r);
    outside = outside_window(subject, rows);
    what = subject.what;
  }
  // The model that ran, where it is not the default: a what-if's sharing and window.
  std::string what_if;
  if (!a.sharing.empty())
    what_if += a.sharing == "fair" ? ", every port and link shared max-min fairly (--sharing fair)"
                                   : ", every port first come first served (--sharing fifo)";
  if (a.sharing_window_us)
    what_if += *a.sharing_window_us > 0
                   ? fmt::format(", fair rates shared once per {} us (--sharing-window)",
                                 *a.sharing_window_us)
                   : ", fair rates shared exactly (--sharing-window 0)";
  const std::string heading = fmt::format(
      "{} on {} ({} ranks){}{}", what, topology->name(), topology->num_ranks(),
      system             ? fmt::format(", system {}{}", built->label(),
                           system->nodes > 1 ? fmt::format(" over {}", system->fabric->name)
                                                         : std::string())
                  : a.preset.empty() ? ""
                         : ", preset " + a.preset,
      what_if);
  if (!a.nccl_tests)
    fmt::print("simulate {}\n", heading);
  // NCCL's own line, whose "time" is its tuner's estimate; the simulated time is the table's.
  if (std::any_of(rows.begin(), rows.end(), [](const Row &r) { return !r.choice.empty(); }))
    fmt::print(
        "{}NCCL's choice as NCCL_DEBUG=INFO prints it (\"time\": its tuner's estimate in us, "
        "not the simulated time):\n",
        a.nccl_tests ? "# " : "");
  for (const Row &r : rows)
    if (!r.choice.empty())
      fmt::print("NCCL INFO {}\n", r.choice);
  if (a.nccl_tests || !a.nccl_tests_json.empty()) {
    // A host per node, or per tray where the system's node spans several (an NVL72 rack).
    const int per_host = built && built->preset->gpus_per_host > 0 ? built->preset->gpus_per_host
                                                                   : topology->ranks_per_node();
    const nccl::NcclTestsRun run =
        nccl_tests_run(a, heading, topology->num_ranks(), per_host, rows, table_kind);
    if (a.nccl_tests)
      fmt::print("{}", nccl::nccl_tests_text(run));
    if (!a.nccl_tests_json.empty())
      SYNCOLL_CHECK(write_output(a.nccl_tests_json, nccl::nccl_tests_json(run)));
  }
  const std::string csv = a.nccl_tests ? csv_of(rows) : print_rows(rows);
  for (const Row &r : rows)
    if (!r.faster_forced.empty())
      fmt::print("{}note: {}\n", a.nccl_tests ? "# " : "", r.faster_forced);
  if (!outside.empty())
    fmt::print("{}note: {}\n", a.nccl_tests ? "# " : "", outside);
  if (!a.csv.empty())
    SYNCOLL_CHECK(write_output(a.csv, csv));
  if (!a.trace.empty())
    SYNCOLL_CHECK(
        write_output(a.trace, to_canonical_json(simulator::to_chrome_trace(rows.front().result))));
  return std::any_of(rows.begin(), rows.end(), [](const Row &r) { return r.deadlocked; });
}

} // namespace

void add_simulate_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App *cmd = app.add_subcommand(
      "simulate", "time an algorithm (JSON), a thread-block program (MSCCL-IR XML) or an NCCL "
                  "baseline on a topology under the alpha-beta model (docs/cost-model.md)");
  cmd->add_option("input", args->input,
                  "algorithm JSON, MSCCL-IR XML or JSON, or an MSCCL++ execution plan (JSON)");
  cmd->add_option("--baseline", args->baseline,
                  "simulate NCCL instead: nccl (its own choice per size, needs --system), or "
                  "force nccl-ring, nccl-tree (allreduce), nccl-nvls, nccl-nvlstree (allreduce "
                  "across nodes), nccl-pat, nccl-collnet-direct or nccl-collnet-chain (IB SHARP "
                  "across nodes; they imply --collnet)")
      ->check(CLI::IsMember({"nccl", "nccl-ring", "nccl-tree", "nccl-nvls", "nccl-nvlstree",
                             "nccl-pat", "nccl-collnet-direct", "nccl-collnet-chain"}));
  args->topology.add_to(*cmd, /*positional=*/false, /*required=*/false);
  cmd->add_option("--system", args->system,
                  "a calibrated machine instead of -t (syncoll topo list: dgx_h100, aws_p5, "
                  "gcp_a4, ...; or an NCCL topology dump of one of their nodes, with its NICs; "
                  "with --nodes N, --gpus G, --fabric F); programs from files pay the MSCCL "
                  "executor's per-step cost");
  args->topology.add_fabric_to(*cmd);
  cmd->add_option("-c,--collective", args->collective,
                  "collective (default: the input's; required with --baseline)");
  cmd->add_option("-C,--chunk-factor", args->chunk_factor, "chunks per rank buffer (algorithms)");
  cmd->add_option("--root", args->root, "root rank of rooted collectives")->check(at_least(0));
  cmd->add_option("-s,--size,--sizes", args->size,
                  "size as nccl-tests counts it (4096, 64KiB, 1GiB), a sweep A..B doubling, or a "
                  "list of these (1MiB,64MiB,1GiB..8GiB)")
      ->capture_default_str();
  cmd->add_option("--protocol", args->protocol, "Simple, LL or LL128 (default: the program's)");
  cmd->add_option("--preset", args->preset, "cost model preset: nccl")
      ->check(CLI::IsMember({"nccl"}));
  cmd->add_option("--lowering", args->lowering,
                  "algorithms on a --system: kernel (SCCL's generated kernel: one launch, a flag "
                  "per send; the default) or copy-engine (one cudaMemcpy per send, step after "
                  "step)")
      ->check(CLI::IsMember({"kernel", "copy-engine"}));
  cmd->add_option("--mode", args->mode,
                  "algorithms: sync (step-synchronous, the default) or dataflow")
      ->check(CLI::IsMember({"sync", "dataflow"}));
  cmd->add_option("--switching", args->switching,
                  "how transfers cross ranks on multi-hop routes of a topology (-t): cut-through "
                  "(the default) or store-and-forward")
      ->check(CLI::IsMember({"cut-through", "store-and-forward"}));
  cmd->add_option("--sharing", args->sharing,
                  "share every bandwidth relation this way instead of as the topology says: "
                  "fifo (one transfer after another) or fair (max-min fair; every link then "
                  "shares itself among its transfers too)")
      ->check(CLI::IsMember({"fifo", "fair"}));
  cmd->add_option(
         "--sharing-window", args->sharing_window_us,
         "microseconds of simulated time between two sharings of max-min fair rates "
         "(0: at every start and end, exact; default: exact on a topology; on a --system "
         "past 4 nodes a window while hops last ten windows or more, or over 4,096 "
         "share fair ports, docs/cost-model.md; given, it holds as given); a transfer that "
         "starts inside a window waits for its rate until the window's events are through")
      ->check(between(0, 1e6));
  cmd->add_flag("--streamed", args->streamed,
                "nccl-ring on a topology: the ring as a step-synchronous schedule generated step "
                "by step, repeated steps timed once (thousands of ranks); the same time as its "
                "thread-block program, and refused where it would not be (a chunk NCCL pipelines, "
                "channels sharing a link, costs it leaves out)");
  cmd->add_option(
         "--channels", args->channels,
         "baseline channels (default: NCCL's search), cycling its rings; on a --system, as "
         "NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS set it")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--min-ctas", args->min_ctas,
                  "as NCCL_MIN_CTAS: NCCL runs each call on at least this many channels (at most "
                  "32), its tuning still choosing the algorithm and protocol; an NCCL baseline on "
                  "a --system")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--nccl-version", args->nccl_version,
                  "the NCCL release whose algorithms a baseline on a --system chooses among, "
                  "2.18 to 2.29 (2.21 or 2.21.5; default: the newest, 2.29.7): NVLS tree came "
                  "in 2.18, PAT in 2.23");
  cmd->add_flag("--no-tuner-plugin", args->no_tuner_plugin,
                "NCCL's own choice of algorithm and protocol where the --system's images load a "
                "tuner plugin that picks (aws_p5, aws_p5en, aws_p6_b200: aws-ofi-nccl's region "
                "tuner, 3 nodes or more), as OFI_NCCL_TUNER_TYPE=Internal");
  cmd->add_flag("--no-nvls", args->no_nvls,
                "as NCCL_NVLS_ENABLE=0: NCCL chooses without NVLS and NVLS tree, and its rings and "
                "trees across nodes run on all their channels (beside NVLS they run 16); a "
                "--system of Hopper or Blackwell GPUs behind an NVSwitch");
  cmd->add_flag("--collnet", args->collnet,
                "as NCCL_COLLNET_ENABLE=1 with the SHARP plugin: the network's switches reduce "
                "(CollNet Direct and Chain, NVLS across nodes); a --system of several nodes on "
                "InfiniBand HDR or newer");
  cmd->add_option("--trace", args->trace, "write a Chrome-trace timeline (one size only)")
      ->check(writable_file());
  cmd->add_option("--csv", args->csv, "write the sweep as CSV")->check(writable_file());
  cmd->add_option("--nccl-graph", args->nccl_graph,
                  "run the rings (and on a --system the trees) of NCCL's graph file "
                  "(NCCL_GRAPH_FILE, as NCCL_GRAPH_DUMP_FILE writes it) instead of the search's: "
                  "nccl-ring on a topology, any NCCL baseline on a --system; one that misses a "
                  "GPU, hops where the machine has no path or names a NIC it lacks is a verdict "
                  "(exit 1)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--write-nccl-graph", args->write_nccl_graph,
                  "write NCCL's graph file (for NCCL_GRAPH_FILE): the rings of nccl-ring on a "
                  "topology; the ring and tree graphs, with their NICs across nodes, of any NCCL "
                  "baseline on a --system")
      ->check(writable_file());
  cmd->add_flag("--syncoll-rings", args->syncoll_rings,
                "nccl-ring on a topology dump: the rings syncoll's search finds (different rings "
                "per channel wherever they carry more) instead of NCCL's (one ring repeated "
                "where it crosses AMD sockets); --write-nccl-graph writes them for "
                "NCCL_GRAPH_FILE");
  cmd->add_flag(
      "--nccl-tests", args->nccl_tests,
      "print the sweep as nccl-tests' *_perf programs do (size, count, type, redop, root, "
      "time, algbw, busbw, #wrong out of place and in place)");
  cmd->add_option("--nccl-tests-json", args->nccl_tests_json,
                  "write the sweep as nccl-tests' JSON (its -J file)")
      ->check(writable_file());
  cmd->callback([&result, args] {
    auto deadlocked = run_simulate(*args);
    if (!deadlocked) {
      print_diagnostics(deadlocked.error());
      result.exit_code = kBadInput;
      return;
    }
    result.exit_code = *deadlocked ? kCheckFailed : kSuccess;
  });
}

} // namespace syncoll::cli
