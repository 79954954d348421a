#include "study/evaluate.h"

#include "compose/search.h"
#include "examples/programs/programs.h"
#include "lowering/by_connection.h"
#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/invariant.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "simulator/program_sim.h"
#include "synth/synthesize.h"
#include "verifier/verify.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <memory>

namespace syncoll::study {
namespace {

// A diagnostic's messages without their locations: a point's note is one line.
std::string message_of(const Diagnostics &d) {
  std::string out;
  for (const auto &item : d.items())
    out += (out.empty() ? "" : "; ") + item.message;
  return out;
}

// A machine as the study changes it. SystemModel points at its preset and generation row, so
// the three live together and never move.
struct BuiltMachine {
  SystemPreset preset;
  GenerationTraits generation;
  std::optional<simulator::SystemModel> system;
  std::string error;

  explicit BuiltMachine(const Machine &m)
      : preset(*find_system_preset(m.system)), generation(generation_traits(preset.generation)) {
    if (m.nics > 0)
      preset.nics_per_node = m.nics;
    if (m.nic_gbps > 0)
      preset.nic_gbps = m.nic_gbps;
    generation.nvlink_line_gbps *= m.nvlink_scale;
    generation.nccl_nvlink_gbps *= m.nvlink_scale;
    auto s = simulator::make_system_model(preset, m.nodes, m.gpus, generation,
                                          fabric_traits(preset.fabric));
    if (s)
      system.emplace(std::move(*s));
    else
      error = message_of(s.error());
  }
  BuiltMachine(const BuiltMachine &) = delete;
  BuiltMachine &operator=(const BuiltMachine &) = delete;
};

// A topology family with the study's parameters: its links inside a node set to the study's
// rate, latency and multiplicity (links that leave a node, NICs and fabric, keep theirs).
Expected<Topology> family_topology(const Machine &m) {
  TopologyParams params;
  auto given = [](auto value, auto none) {
    return value == none ? std::nullopt : std::optional(value);
  };
  params.n = given(m.ranks, 0);
  params.dims = given(m.dims, 0);
  if (!m.shape.empty()) {
    std::vector<int> shape;
    for (size_t at = 0; at <= m.shape.size();) {
      const size_t x = std::min(m.shape.find('x', at), m.shape.size());
      shape.push_back(std::atoi(m.shape.substr(at, x - at).c_str()));
      at = x + 1;
    }
    params.shape = shape;
  }
  const bool hierarchical = m.topology == "multinode" || m.topology == "fat_tree";
  if (hierarchical)
    params.nodes = m.nodes;
  params.gpus = given(m.gpus, 0);
  if (!m.intra.empty())
    params.intra = m.intra;
  params.nics = given(m.nics, 0);
  params.nic_bandwidth_gbps = given(m.nic_gbps, 0.0);
  params.oversubscription = given(m.oversubscription, 0.0);
  SYNCOLL_TRY(library, make_library_topology(m.topology, params));
  TopologyDraft draft = library.to_draft();
  const int per_node = hierarchical && !draft.hierarchy.empty() ? draft.hierarchy.levels.back().size
                                                                : library.num_ranks();
  for (Link &l : draft.links) {
    const bool inside = l.src.value() < library.num_ranks() &&
                        l.dst.value() < library.num_ranks() &&
                        l.src.value() / per_node == l.dst.value() / per_node;
    if (!inside)
      continue;
    if (m.link_gbps > 0)
      l.bandwidth = BytesPerNs{m.link_gbps * l.capacity};
    if (m.link_alpha_us >= 0)
      l.alpha = Nanoseconds{m.link_alpha_us * 1000};
    l.capacity *= m.link_multiplicity;
    l.bandwidth = BytesPerNs{l.bandwidth.value * m.link_multiplicity};
  }
  return Topology::create(std::move(draft));
}

std::vector<Outcome> all_not_applicable(size_t n, const std::string &why) {
  return std::vector<Outcome>(n, Outcome{OutcomeStatus::NotApplicable, 0, 0, 0, 0, why});
}

double busiest(const simulator::SimulationResult &r) {
  double most = 0;
  for (const simulator::LinkReport &l : r.links)
    most = std::max(most, l.utilization);
  return most;
}

Outcome from_result(const simulator::SimulationResult &r, std::string note) {
  return {OutcomeStatus::Ok, double(r.completion) / 1e6, r.algbw_gbps, r.busbw_gbps, busiest(r),
          std::move(note)};
}

std::optional<int> root_of(CollectiveKind kind) {
  return collective_traits(kind).rooted ? std::optional<int>(0) : std::nullopt;
}

// The first property a report says does not hold.
std::string first_violation(const verifier::Report &report) {
  for (const verifier::Verdict &verdict : report.verdicts)
    if (verdict.kind != verifier::VerdictKind::Holds)
      return fmt::format("{}: {}", verifier::property_name(verdict.property), verdict.summary);
  return "the verifier found no property that fails";
}

// Where a program runs: a system's program topology (its ports shared max-min fairly) under the
// MSCCL executor's costs there, or a topology family under the default cost model.
struct Target {
  const Topology &topology;
  simulator::CostModel model;
  int nodes = 1;
  std::optional<Protocol> protocol; ///< instead of the program's own
};

std::vector<Outcome> simulate_sizes(const Program &program, const std::vector<int64_t> &sizes,
                                    const Target &target, const std::string &note = "verified") {
  std::vector<Outcome> out;
  for (int64_t size : sizes) {
    simulator::ProgramSimOptions o;
    o.size_bytes = size;
    o.model = target.model;
    o.protocol = target.protocol;
    auto sim = simulator::simulate_program(program, target.topology, o);
    if (!sim)
      out.push_back({OutcomeStatus::NotApplicable, 0, 0, 0, 0, message_of(sim.error())});
    else if (sim->deadlocked)
      out.push_back({OutcomeStatus::NotVerified, 0, 0, 0, 0,
                     "the simulator deadlocked on a verified program (a bug: please report)"});
    else
      out.push_back(from_result(sim->result, note));
  }
  return out;
}

std::vector<Outcome> run_nccl(const Variant &v, CollectiveKind kind,
                              const std::vector<int64_t> &sizes,
                              const simulator::SystemModel &system) {
  auto machine = nccl::nccl_machine(system);
  if (!machine)
    return all_not_applicable(sizes.size(), message_of(machine.error()));
  nccl::NcclRunOptions o;
  o.algorithm = v.algorithm;
  o.protocol = v.protocol;
  o.collnet = v.collnet;
  std::vector<Outcome> out;
  for (int64_t size : sizes) {
    auto run = nccl::simulate_nccl(kind, size, system, *machine, o);
    if (!run)
      out.push_back({OutcomeStatus::NotApplicable, 0, 0, 0, 0, message_of(run.error())});
    else
      out.push_back(from_result(run->result, run->info));
  }
  return out;
}

std::vector<Outcome> run_composed(const Variant &v, CollectiveKind kind,
                                  const std::vector<int64_t> &sizes,
                                  const simulator::SystemModel &system) {
  const int ranks = system.topology.num_ranks();
  const int factor = kind == CollectiveKind::Allreduce ? ranks : 1;
  auto composition = compose::Composition::standard(kind, ranks, factor, root_of(kind));
  auto spec = make_collective(kind, ranks, factor, root_of(kind));
  if (!composition || !spec)
    return all_not_applicable(sizes.size(), "no standard composition of " +
                                                std::string(collective_kind_name(kind)));
  std::vector<compose::Hierarchy> plans;
  if (v.plan) {
    compose::Hierarchy h = *v.plan;
    h.factors = system.nodes > 1 ? std::vector<int>{system.nodes, system.gpus_per_node}
                                 : std::vector<int>{ranks};
    // A plan this machine cannot carry (more ring nodes than nodes, stripes that do not divide
    // a node's GPUs) is not a candidate here, rather than a wrong program.
    if (auto checked = compose::checked(h, ranks); !checked)
      return all_not_applicable(sizes.size(), message_of(checked.error()));
    plans.push_back(h);
  } else {
    plans = compose::candidates(system.nodes, system.gpus_per_node, system.preset->nics_per_node);
  }
  auto found = compose::search(*composition, *spec, system, sizes, plans, v.protocol);
  if (!found)
    return all_not_applicable(sizes.size(), message_of(found.error()));
  std::vector<Outcome> out;
  const double bus = bus_bandwidth_factor(kind, ranks);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const compose::Search &s = (*found)[i];
    if (!s.best) {
      out.push_back({OutcomeStatus::NotVerified, 0, 0, 0, 0,
                     s.tried.empty() ? "no plan" : s.tried.front().verdict});
      continue;
    }
    const compose::Tried &best = s.tried[*s.best];
    const double algbw = double(sizes[i]) / (*best.us * 1e3);
    out.push_back({OutcomeStatus::Ok, *best.us, algbw, algbw * bus, 0,
                   fmt::format("stripes {} ring nodes {} pipeline {}", best.hierarchy.stripes,
                               best.hierarchy.ring_nodes, best.hierarchy.pipeline)});
  }
  return out;
}

std::vector<Outcome> run_program(const Variant &v, CollectiveKind kind,
                                 const std::vector<int64_t> &sizes, const Target &target) {
  // The file was read when the study was; a program that does not parse is bad input there.
  auto parsed = parse_program(v.program_text, v.program_path);
  if (!parsed)
    return all_not_applicable(sizes.size(), message_of(parsed.error()));
  const Program &program = parsed->value;
  auto spec = collective_for_program(program, root_of(kind));
  if (!spec)
    return all_not_applicable(sizes.size(), message_of(spec.error()));
  if (spec->kind() != kind || program.num_ranks() != target.topology.num_ranks())
    return all_not_applicable(sizes.size(), fmt::format("the program implements {} on {} ranks",
                                                        spec->name(), program.num_ranks()));
  verifier::VerifyOptions options;
  options.collective = *spec;
  auto verified = verifier::certify(program, options);
  if (!verified)
    return std::vector<Outcome>(sizes.size(), Outcome{OutcomeStatus::NotVerified, 0, 0, 0, 0,
                                                      first_violation(verified.error())});
  return simulate_sizes(program, sizes, target);
}

std::vector<Outcome> run_dsl(const Variant &v, CollectiveKind kind,
                             const std::vector<int64_t> &sizes, const Target &target) {
  const examples::ProgramExample *example = examples::find_program_example(v.example);
  examples::ExampleParams params;
  params.ranks = target.topology.num_ranks();
  params.nodes = target.nodes;
  auto dsl = example->build(params);
  if (!dsl)
    return all_not_applicable(sizes.size(), message_of(dsl.error()));
  if (dsl->collective().kind() != kind)
    return all_not_applicable(sizes.size(),
                              fmt::format("the example implements {}", dsl->collective().name()));
  lowering::LowerOptions options;
  options.instances = v.instances;
  auto lowered = lowering::lower(*dsl, options);
  if (!lowered)
    return all_not_applicable(sizes.size(), message_of(lowered.error()));
  if (!lowered->verified)
    return std::vector<Outcome>(sizes.size(), Outcome{OutcomeStatus::NotVerified, 0, 0, 0, 0,
                                                      first_violation(lowered->verified.error())});
  return simulate_sizes(lowered->program, sizes, target);
}

// SCCL's Pareto frontier on `where` (a node's topology, or the family's), each point lowered and
// verified, then timed on the machine; the fastest per size. The frontier is synthesized once for
// the group and its solver time is kept with every point.
std::vector<Outcome> run_synth(const Variant &v, CollectiveKind kind,
                               const std::vector<int64_t> &sizes, const Topology &where,
                               const Target &target) {
  synth::Target goal;
  goal.kind = kind;
  goal.root = root_of(kind);
  synth::ParetoOptions options;
  options.synth.time_limit_s = v.time_limit_s;
  const auto start = std::chrono::steady_clock::now();
  auto frontier = synth::pareto(where, goal, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!frontier)
    return all_not_applicable(sizes.size(), message_of(frontier.error()));
  std::vector<Outcome> best(sizes.size(),
                            Outcome{OutcomeStatus::NotVerified, 0, 0, 0, 0,
                                    "no frontier point lowered and verified", seconds});
  if (frontier->frontier.empty())
    for (Outcome &o : best)
      o = {OutcomeStatus::NotApplicable,
           0,
           0,
           0,
           0,
           "the synthesis found no algorithm (" + frontier->note + ")",
           seconds};
  for (const synth::ParetoPoint &point : frontier->frontier) {
    auto collective = goal.collective(where.num_ranks(), point.chunks);
    if (!collective)
      continue;
    // As `syncoll lower` lowers it: by connection.
    auto lowered = lowering::lower_by_connection(point.algorithm, where, *collective);
    if (!lowered || !lowered->verified) {
      const std::string why =
          !lowered ? message_of(lowered.error()) : first_violation(lowered->verified.error());
      for (Outcome &o : best)
        if (o.status != OutcomeStatus::Ok)
          o.note =
              fmt::format("(C{} S{} R{}) {}", point.chunks, point.sr.steps, point.sr.rounds, why);
      continue;
    }
    const std::vector<Outcome> timed =
        simulate_sizes(lowered->program, sizes, target,
                       fmt::format("C{} S{} R{} of {} frontier point(s)", point.chunks,
                                   point.sr.steps, point.sr.rounds, frontier->frontier.size()));
    for (size_t i = 0; i < sizes.size(); ++i)
      if (timed[i].status == OutcomeStatus::Ok &&
          (best[i].status != OutcomeStatus::Ok || timed[i].time_us < best[i].time_us)) {
        best[i] = timed[i];
        best[i].synthesis_s = seconds;
      }
  }
  return best;
}

// NCCL's ring or tree on a topology family: the rings its search finds there, on its runtime
// channels, as in `syncoll simulate --baseline nccl-ring -t T`. Its own choice needs a system
// (the tuning model's constants are a GPU generation's).
std::vector<Outcome> run_nccl_on_topology(const Variant &v, CollectiveKind kind,
                                          const std::vector<int64_t> &sizes, const Target &target) {
  if (!v.algorithm || !nccl::nccl_runs_on_topology(*v.algorithm))
    return all_not_applicable(sizes.size(), "on a topology family NCCL runs as a forced ring or "
                                            "tree; its own choice, NVLS, NVLS tree and PAT need "
                                            "a system");
  const Topology &topology = target.topology;
  auto rings = nccl::nccl_topology_rings(topology, kind, 0, std::nullopt);
  if (!rings)
    return all_not_applicable(sizes.size(), message_of(rings.error()));
  const int channels = rings->channels;
  Expected<Program> program = nccl::nccl_topology_program(*v.algorithm, kind, topology, *rings,
                                                          v.protocol.value_or(Protocol::Simple));
  if (!program)
    return all_not_applicable(sizes.size(), message_of(program.error()));
  Target chunked = target;
  chunked.model = nccl::nccl_chunked(target.model, kind);
  return simulate_sizes(*program, sizes, chunked,
                        fmt::format("NCCL {} on {} channel(s) of its search",
                                    nccl::nccl_algorithm_name(*v.algorithm), channels));
}

} // namespace

std::string_view outcome_status_name(OutcomeStatus status) {
  switch (status) {
  case OutcomeStatus::Ok:
    return "ok";
  case OutcomeStatus::NotVerified:
    return "not verified";
  case OutcomeStatus::NotApplicable:
    return "not applicable";
  }
  SYNCOLL_UNREACHABLE("outcome status");
}

std::optional<OutcomeStatus> parse_outcome_status(std::string_view name) {
  for (OutcomeStatus s :
       {OutcomeStatus::Ok, OutcomeStatus::NotVerified, OutcomeStatus::NotApplicable})
    if (outcome_status_name(s) == name)
      return s;
  return std::nullopt;
}

std::vector<Outcome> evaluate(const Study &study, const Plan &plan, const Group &group) {
  std::vector<int64_t> sizes;
  for (size_t p : group.points)
    sizes.push_back(plan.points[p].size);
  const Machine &machine = study.machines[group.machine];
  const Variant &v = study.variants[group.variant];
  if (!machine.topology.empty()) {
    auto topology = family_topology(machine);
    if (!topology)
      return all_not_applicable(sizes.size(), message_of(topology.error()));
    const Target target{*topology, simulator::CostModel{}, machine.nodes, v.protocol};
    switch (v.kind) {
    case VariantKind::Nccl:
      return run_nccl_on_topology(v, group.collective, sizes, target);
    case VariantKind::Composed:
      return all_not_applicable(sizes.size(), "composed plans run on a system preset");
    case VariantKind::Program:
      return run_program(v, group.collective, sizes, target);
    case VariantKind::Dsl:
      return run_dsl(v, group.collective, sizes, target);
    case VariantKind::Synth:
      return run_synth(v, group.collective, sizes, *topology, target);
    }
    SYNCOLL_UNREACHABLE("variant kind");
  }
  const BuiltMachine built(machine);
  if (!built.system)
    return all_not_applicable(sizes.size(), built.error);
  // Programs run on the machine as every command runs them there.
  const Topology programs_run_on = built.system->program_topology();
  const Target target{programs_run_on, built.system->interpreted(), built.system->nodes,
                      v.protocol};
  switch (v.kind) {
  case VariantKind::Nccl:
    return run_nccl(v, group.collective, sizes, *built.system);
  case VariantKind::Composed:
    return run_composed(v, group.collective, sizes, *built.system);
  case VariantKind::Program:
    return run_program(v, group.collective, sizes, target);
  case VariantKind::Dsl:
    return run_dsl(v, group.collective, sizes, target);
  case VariantKind::Synth: {
    // Synthesis runs on one whole node's topology (SCCL's scale); the timing on the machine.
    if (built.system->nodes > 1 || built.system->gpus_per_node != built.preset.gpus_per_node)
      return all_not_applicable(sizes.size(), "synthesis runs on one whole node");
    auto node = make_library_topology(built.preset.node_topology, {});
    if (!node)
      return all_not_applicable(sizes.size(), message_of(node.error()));
    return run_synth(v, group.collective, sizes, *node, target);
  }
  }
  SYNCOLL_UNREACHABLE("variant kind");
}

} // namespace syncoll::study
