// `syncoll synth instance|least-steps|pareto|bound|scale`.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/collective_traits.h"
#include "synth/bounds.h"
#include "synth/cluster.h"
#include "synth/cut_bound.h"
#include "synth/grid.h"
#include "synth/paced.h"
#include "synth/scale.h"
#include "synth/scale_choice.h"
#include "synth/synthesize.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <memory>

namespace syncoll::cli {
namespace {

struct SynthArgs {
  TopologyOptions topology;
  std::string collective;
  std::optional<int> root;
  int chunks = 1;
  std::optional<int> steps;
  std::optional<int> rounds;
  int k = 4;
  int max_chunks = 8;
  int max_steps = 0;
  double time_limit = 0;
  std::string backend = "sat";
  std::optional<std::string> allreduce; ///< composed unless given
  bool certify = false;
  bool symmetry = false;
  std::string output;
};

// SCCL's schedule listing: per step its rounds and sends as chunk:src->dst ("+>" reduces).
std::string schedule_text(const Algorithm &a) {
  std::string out;
  for (size_t s = 0; s < a.steps.size(); ++s) {
    const AlgorithmStep &step = a.steps[s];
    out += fmt::format("  step {} ({} round{}, {} sends):", s + 1, step.rounds,
                       step.rounds == 1 ? "" : "s", step.sends.size());
    for (const Send &send : step.sends)
      out += fmt::format(" {}:{}{}{}", send.chunk.value(), send.src.value(),
                         send.op == SendOp::Reduce ? "+>" : "->", send.dst.value());
    out += "\n";
  }
  return out;
}

// Prints a found algorithm's schedule and writes its JSON to `output` when one is given.
Expected<void> show_and_save(const Algorithm &algorithm, const TopologyOptions &where,
                             const std::string &output) {
  fmt::print("{}", schedule_text(algorithm));
  if (output.empty())
    return {};
  return write_output(output, algorithm_file_text(algorithm, where));
}

// The collective as an answer's first line names it, with its root.
std::string target_title(const synth::Target &target) {
  return target.root ? fmt::format("{} from root {}", target.name(), *target.root) : target.name();
}

// The solver settings beyond the defaults, as the first line of an answer names them.
std::string solver_settings(const SynthArgs &args) {
  std::string out;
  if (args.symmetry)
    out += ", lex-leader symmetry breaking";
  if (args.certify)
    out += ", unsat proofs checked";
  return out.empty() ? out : " [" + out.substr(2) + "]";
}

void add_common(CLI::App &cmd, SynthArgs &args) {
  args.topology.add_to(cmd, /*positional=*/false, /*required=*/true);
  cmd.add_option("-c,--collective", args.collective,
                 "allgather, alltoall, broadcast, gather, scatter, reduce, reducescatter, "
                 "allreduce, or a custom collective JSON")
      ->required();
  cmd.add_option("--root", args.root, "root rank of rooted collectives (default 0)")
      ->check(at_least(0));
  cmd.add_option("--time-limit", args.time_limit, "seconds per solver call (0: none)")
      ->check(at_least(0));
  cmd.add_flag("--certify", args.certify,
               "sat backend: have CaDiCaL check its proof of every unsat answer");
  cmd.add_flag("--symmetry", args.symmetry,
               "sat backend: break the topology's symmetries with lex-leader constraints");
  cmd.add_option("--backend", args.backend, "solver backend")
      ->check(CLI::IsMember({"smt", "sat"}))
      ->capture_default_str();
  cmd.add_option("--allreduce", args.allreduce,
                 "allreduce as reducescatter + allgather (composed, the default) or directly "
                 "(direct)")
      ->check(CLI::IsMember({"composed", "direct"}));
}

// Allgather, ReduceScatter or Allreduce: the collectives the cut bound covers; anything else
// fails as "`what` allgather, reducescatter or allreduce, not 'NAME'".
Expected<CollectiveKind> cut_collective(const std::string &name, std::string_view what) {
  const auto kind = parse_collective_kind(name);
  if (kind == CollectiveKind::Allgather || kind == CollectiveKind::ReduceScatter ||
      kind == CollectiveKind::Allreduce)
    return *kind;
  return fail({}, fmt::format("{} allgather, reducescatter or allreduce, not '{}'", what, name));
}

struct BoundArgs {
  TopologyOptions topology;
  std::string collective;
  std::string size = "1GiB";
};

// Ranks (or switch names) inside one side of a cut, as ranges: "0-6, 8-14, leaf0".
std::string vertex_list(const Topology &topology, const std::vector<RankId> &vertices) {
  constexpr size_t kShown = 12;
  std::vector<std::string> parts;
  size_t i = 0;
  for (; i < vertices.size() && parts.size() < kShown; ++i) {
    const RankId v = vertices[i];
    if (topology.is_switch(v)) {
      parts.push_back(topology.switches()[size_t(v.value() - topology.num_ranks())]);
      continue;
    }
    size_t j = i;
    while (j + 1 < vertices.size() && !topology.is_switch(vertices[j + 1]) &&
           vertices[j + 1].value() == vertices[j].value() + 1)
      ++j;
    parts.push_back(j == i ? fmt::format("{}", v.value())
                           : fmt::format("{}-{}", v.value(), vertices[j].value()));
    i = j;
  }
  std::string out = fmt::format("{}", fmt::join(parts, ", "));
  if (i < vertices.size())
    out += fmt::format(", ... ({} vertices in all)", vertices.size());
  return out;
}

// "1.25 ms" for a time in ns.
std::string time_text(double ns) {
  if (ns >= 1e6)
    return fmt::format("{:.4g} ms", ns / 1e6);
  if (ns >= 1e3)
    return fmt::format("{:.4g} us", ns / 1e3);
  return fmt::format("{:.4g} ns", ns);
}

// One direction's bound, its certificate and what it was checked against.
void print_cut_bound(const Topology &topology, const synth::CutBound &b, int64_t size) {
  const bool leaving = b.direction == CutDirection::Leaving;
  fmt::print("{} cut bound: B* = {} GB/s ({:.6f}), exact; {} at {} takes at least {}\n",
             leaving ? "Allgather" : "ReduceScatter", to_string(b.bandwidth_gbps),
             b.bandwidth_gbps.value(), leaving ? "an Allgather" : "a ReduceScatter",
             format_size(size), time_text(double(size) / b.bandwidth_gbps.value()));
  std::vector<RankId> outside;
  for (int32_t v = 0; v < topology.num_vertices(); ++v)
    if (!std::binary_search(b.cut.vertices.begin(), b.cut.vertices.end(), RankId(v)))
      outside.push_back(RankId(v));
  fmt::print("  certificate: a cut S holding {} of {} ranks with {} GB/s {} it: every schedule "
             "moves {} shares of M/{} bytes across it\n",
             b.value.ranks_inside, b.ranks,
             to_string(Fraction::of(b.value.bandwidth, b.units_per_gbps)),
             leaving ? "leaving" : "entering", b.value.ranks_inside, b.ranks);
  fmt::print("    inside S:  {}\n", vertex_list(topology, b.cut.vertices));
  fmt::print("    outside S: {}\n", vertex_list(topology, outside));
  if (!b.cut.relations.empty())
    fmt::print("    and {} shared-bandwidth relation{} inside S\n", b.cut.relations.size(),
               b.cut.relations.size() == 1 ? "" : "s");
  fmt::print("  checked: the cut's value recomputed from the topology; no cut needs more, shown "
             "by a flow into each of the {} ranks ({} max-flows)\n",
             b.flows_checked, b.max_flows);
}

void add_bound_command(CLI::App &synth, RunResult &result) {
  auto args = std::make_shared<BoundArgs>();
  CLI::App *bound = synth.add_subcommand(
      "bound", "the exact cut bound of Allgather, ReduceScatter or Allreduce (as ReduceScatter + "
               "Allgather), with the cut that attains it");
  args->topology.add_to(*bound, /*positional=*/false, /*required=*/true);
  bound->add_option("-c,--collective", args->collective, "allgather, reducescatter or allreduce")
      ->required();
  bound
      ->add_option("-s,--size,--sizes", args->size,
                   "bytes of the Allgather output / ReduceScatter input / Allreduce buffer")
      ->capture_default_str();
  bound->callback([&result, args] {
    result.exit_code = exit_code_or_bad_input([&]() -> Expected<int> {
      SYNCOLL_TRY(topology, resolve_topology(args->topology));
      SYNCOLL_TRY(size, parse_size(args->size));
      SYNCOLL_TRY(kind, cut_collective(args->collective, "the cut bound is for"));
      std::vector<CutDirection> directions;
      if (kind != CollectiveKind::Allgather)
        directions.push_back(CutDirection::Entering);
      if (kind != CollectiveKind::ReduceScatter)
        directions.push_back(CutDirection::Leaving);
      std::vector<synth::CutBound> bounds;
      for (const CutDirection direction : directions) {
        SYNCOLL_TRY(b, synth::cut_bound(topology, direction));
        bounds.push_back(std::move(b));
      }
      fmt::print("{} on {}: {} ranks, {} switches, {} links, {} relations\n",
                 collective_kind_name(kind), topology.name(), topology.num_ranks(),
                 topology.num_switches(), topology.links().size(), topology.relations().size());
      Fraction lambda_sum;
      for (const synth::CutBound &b : bounds) {
        print_cut_bound(topology, b, size);
        lambda_sum = sum(lambda_sum, b.lambda);
      }
      if (directions.size() == 2) {
        const Fraction bandwidth =
            Fraction::of(int64_t(topology.num_ranks()) * lambda_sum.den, lambda_sum.num);
        fmt::print("Allreduce as ReduceScatter + Allgather (no reducing switches): B* = {} GB/s "
                   "({:.6f}); at {} at least {}\n",
                   to_string(bandwidth), bandwidth.value(), format_size(size),
                   time_text(double(size) / bandwidth.value()));
      }
      return kSuccess;
    }());
  });
}

// From this many ranks synth scale takes seconds: its stages go to stderr.
constexpr int kLongScale = 1024;

struct ScaleArgs {
  TopologyOptions topology;
  std::string collective;
  std::optional<int> chunks;
  std::optional<int> steps;
  std::string output;
};

std::string gbps_text(int64_t ranks, Fraction lambda) {
  const Fraction bandwidth = Fraction::of(ranks * lambda.den, lambda.num);
  return fmt::format("{} GB/s ({:.6f})", to_string(bandwidth), bandwidth.value());
}

// check_algorithm on a schedule, said; the algorithm written to `output` only if it holds.
Expected<int> check_and_write(const Algorithm &algorithm, const Topology &topology,
                              CollectiveKind kind, const TopologyOptions &where,
                              const std::string &output,
                              const std::function<void(std::string_view)> &say) {
  if (say)
    say(fmt::format("checking {} sends", algorithm.num_sends()));
  SYNCOLL_TRY(collective,
              make_collective(kind, topology.num_ranks(), algorithm.target.chunk_factor));
  const AlgorithmCheck check = check_algorithm(algorithm, topology, collective);
  if (!check.holds()) {
    fmt::print("  check: FAILS ({} violations; first: {})\n", check.violations.size(),
               check.violations.front().message);
    return kCheckFailed;
  }
  fmt::print("  check: holds (every send's link and source, every link's rounds, every rank "
             "ends with {})\n",
             kind == CollectiveKind::Allgather ? "every chunk"
                                               : "every contribution summed exactly once");
  if (!output.empty()) {
    if (say)
      say("writing " + output);
    SYNCOLL_CHECK(write_output(output, algorithm_file_text(algorithm, where)));
  }
  return kSuccess;
}

// A cluster of boxes' Allgather, ReduceScatter or Allreduce (synth/cluster.h), the frontier of
// its steps, and its check.
Expected<int> run_cluster(const ScaleArgs &args, const Topology &topology,
                          const synth::BoxCluster &cluster, CollectiveKind kind) {
  const int n = topology.num_ranks();
  const int log_steps = synth::default_cluster_steps(n);
  const int steps = args.steps.value_or(log_steps);
  const int pieces = args.chunks.value_or(synth::default_cluster_pieces(cluster));
  std::function<void(std::string_view)> say;
  if (n >= kLongScale)
    say = StageProgress("synth scale");
  if (say)
    say(fmt::format("planning {} steps of {} pieces per share by rail", steps, pieces));
  SYNCOLL_TRY(schedule, synth::box_cluster_collective(topology, kind, steps, pieces,
                                                      synth::ClusterPlanGoal::StepSynchronous));
  if (say)
    say("planning the pipelined trees");
  SYNCOLL_TRY(trees, synth::box_cluster_collective(topology, kind, std::max(steps, 2), pieces,
                                                   synth::ClusterPlanGoal::PipelinedTrees));
  const synth::ClusterSchedule &first =
      schedule.reduce_scatter ? *schedule.reduce_scatter : *schedule.allgather;
  const auto gbps = [&](int64_t units) { return double(units) / double(first.units_per_gbps); };
  fmt::print("{} on {}: {} boxes x {} GPUs, a NIC of {} GB/s per {}, {} GB/s into the box; "
             "{} pieces per share\n",
             collective_kind_name(kind), topology.name(), cluster.boxes, cluster.gpus,
             gbps(cluster.nic_units),
             cluster.gpus_per_nic == 1 ? "GPU" : fmt::format("{} GPUs", cluster.gpus_per_nic),
             gbps(cluster.port_units), pieces);
  bool attained = true;
  for (const auto *part : {&schedule.reduce_scatter, &schedule.allgather}) {
    if (!*part)
      continue;
    const bool reduce_scatter = part == &schedule.reduce_scatter;
    const synth::ClusterPlan &plan = (*part)->plan;
    fmt::print("  {}: {} steps (2 ceil(log2 N) = {}){}\n    pieces per GPU by rail: {}; "
               "units sent directly: {}\n",
               reduce_scatter ? "ReduceScatter" : "Allgather", plan.num_steps(), log_steps,
               reduce_scatter ? ", the Allgather of the reversed links run backwards" : "",
               fmt::join(plan.rail, " "), fmt::join(plan.direct, " "));
    if (cluster.groups() > 1)
      fmt::print("    leaf groups of {} boxes: pieces per GPU over the spine: {}; over the leaf: "
                 "{}\n",
                 cluster.boxes_per_group, fmt::join(plan.spine, " "), fmt::join(plan.leaf, " "));
    const synth::ClusterCut &cut = (*part)->cut;
    fmt::print("  cut: {}{} ({} ranks inside; the {} links into the rest carry at most {} "
               "GB/s: {}): no {} beats {}\n",
               cut.name, reduce_scatter ? " on the reversed links" : "", cut.ranks_inside,
               cut.crossing_links, gbps(cut.bandwidth), fmt::join(cut.cover, " + "),
               reduce_scatter ? "ReduceScatter" : "Allgather", gbps_text(n, cut.lambda));
  }
  for (const auto *part : {&trees.reduce_scatter, &trees.allgather})
    attained = attained && (!*part || (*part)->attained());
  const char *against = kind == CollectiveKind::Allreduce ? " (of the cuts' sum)" : "";
  fmt::print("  step by step: {}: {} of it{} ({:.4f}%)\n", gbps_text(n, schedule.cost),
             to_string(schedule.efficiency), against, 100 * schedule.efficiency.value());
  fmt::print("  pipelined trees (every step in flight): {}: {} of it{} ({:.4f}%){}\n",
             gbps_text(n, trees.pipelined_cost), to_string(trees.pipelined_efficiency), against,
             100 * trees.pipelined_efficiency.value(),
             !attained ? ""
             : kind == CollectiveKind::Allreduce
                 ? "; each part at its cut bound B* exactly, attained: optimal as ReduceScatter "
                   "+ Allgather"
                 : "; the cut bound B* exactly, attained: optimal");
  if (say)
    say("the frontier of steps");
  std::vector<std::string> frontier;
  for (int s = 1; s <= std::max(steps, log_steps); ++s) {
    // Too few steps for leaf groups, or a rounding with no plan: not a point of the frontier.
    auto point =
        synth::plan_box_cluster(cluster, s, pieces, synth::ClusterPlanGoal::StepSynchronous);
    if (!point)
      continue;
    const Fraction efficiency =
        quotient(first.cut.lambda, point->modelled_cost(first.units_per_gbps));
    SYNCOLL_TRY(limit, synth::box_cluster_step_limit(cluster, s, first.units_per_gbps));
    const Fraction most =
        quotient(first.cut.lambda, less(limit, first.cut.lambda) ? first.cut.lambda : limit);
    frontier.push_back(
        fmt::format("{}:{:.2f}%/{:.2f}%", s, 100 * efficiency.value(), 100 * most.value()));
  }
  fmt::print("  frontier (steps per part: % of the bound planned / the most any schedule of those "
             "steps reaches): {}\n",
             fmt::join(frontier, " "));
  const int chunks_per_rank = kind == CollectiveKind::Allreduce ? n * pieces : pieces;
  if (auto fits = fits_collective_model(kind, n, chunks_per_rank); !fits) {
    fmt::print("  check: not run ({}); every send was placed on a link of the topology\n",
               fits.error().items().front().message);
    if (!args.output.empty())
      return fail({}, "the schedule is too large to write as an algorithm (past 2^24 chunk "
                      "copies); give fewer pieces (-C)");
    return kSuccess;
  }
  return check_and_write(synth::cluster_collective_algorithm(schedule, topology), topology, kind,
                         args.topology, args.output, say);
}

// A direct-connect machine's collective, as synth/scale_choice.h chooses it: the paced
// frontier where paced schedules were tried, then the chosen one, checked.
Expected<int> run_direct(const ScaleArgs &args, const Topology &topology, CollectiveKind kind) {
  synth::ScaleRequest request;
  request.pieces = args.chunks;
  request.steps = args.steps;
  if (topology.num_ranks() >= kLongScale)
    request.progress = StageProgress("synth scale");
  const std::string key = name_key(args.topology.spec);
  if ((key == "mesh2d" || key == "mesh3d") && args.topology.params.shape)
    request.mesh_shape = *args.topology.params.shape;
  SYNCOLL_TRY(best, synth::choose_direct_schedule(topology, kind, request));
  if (best.paced_tried) {
    std::vector<std::string> frontier;
    for (const synth::ScaleCandidate &c : best.candidates)
      if (c.paced)
        frontier.push_back(fmt::format("{}:{:.4f}%", c.steps, 100 * c.efficiency.value()));
    if (!best.paced_refused.empty())
      fmt::print("paced schedules: not made ({})\n", best.paced_refused);
    else
      fmt::print("paced schedules, {} pieces per share (steps planned: % of the bound, step by "
                 "step): {}\n",
                 best.pieces, fmt::join(frontier, " "));
  }
  const int diameter = best.diameter;
  const synth::ScaleSchedule &schedule = best.schedule;
  fmt::print("{} on {}: {}, {} pieces per rank's share\n", collective_kind_name(kind),
             topology.name(), best.method, best.pieces);
  std::vector<int> rounds;
  for (const AlgorithmStep &step : schedule.algorithm.steps)
    rounds.push_back(step.rounds);
  fmt::print("  {} steps ({}diameter {}), {} rounds: {}\n", schedule.algorithm.num_steps(),
             kind == CollectiveKind::Allreduce ? "twice the " : "", diameter,
             schedule.algorithm.total_rounds(), fmt::join(rounds, " "));
  const auto n = int64_t(topology.num_ranks());
  const Fraction bandwidth = Fraction::of(n * schedule.cost.den, schedule.cost.num);
  const Fraction bound = Fraction::of(n * schedule.lambda.den, schedule.lambda.num);
  fmt::print("  bandwidth {} GB/s ({:.6f}) against the {}cut bound's {} GB/s ({:.6f}): {} "
             "of it ({:.4f}%){}\n",
             to_string(bandwidth), bandwidth.value(),
             kind == CollectiveKind::Allreduce ? "ReduceScatter + Allgather " : "",
             to_string(bound), bound.value(), to_string(schedule.efficiency),
             100 * schedule.efficiency.value(),
             schedule.efficiency == Fraction{1, 1} ? ": optimal, by the bound's certificate" : "");
  if (kind != CollectiveKind::Allreduce)
    fmt::print("  pipelined (every step in flight, each piece's sends a tree): {}: {} of it "
               "({:.4f}%){}\n",
               gbps_text(n, schedule.pipelined_cost), to_string(schedule.pipelined_efficiency),
               100 * schedule.pipelined_efficiency.value(),
               schedule.pipelined_efficiency == Fraction{1, 1}
                   ? ": optimal, by the bound's certificate"
                   : "");
  return check_and_write(schedule.algorithm, topology, kind, args.topology, args.output,
                         request.progress);
}

void add_scale_command(CLI::App &synth, RunResult &result) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App *scale = synth.add_subcommand(
      "scale", "Allgather, ReduceScatter or Allreduce for large machines in few steps "
               "(breadth-first, dimension-ordered, paced; clusters of boxes planned by rail), "
               "measured against the exact cut bound and checked");
  args->topology.add_to(*scale, /*positional=*/false, /*required=*/true);
  scale->add_option("-c,--collective", args->collective, "allgather, reducescatter or allreduce")
      ->required();
  add_renamed_option(*scale, "--chunks", "--chunk-factor", args->chunks);
  scale->add_option("-C,--chunk-factor", args->chunks,
                    "pieces each rank's share is cut into (default 1; on a cluster of boxes, "
                    "about 2048 per box beyond the first)");
  scale->add_option("--steps", args->steps,
                    "steps of a cluster of boxes' Allgather, or of each part of its "
                    "ReduceScatter + Allgather (default 2 ceil(log2 ranks)); elsewhere, the "
                    "steps of a paced schedule, made alone (default: the diameter up to two "
                    "more, beside breadth-first and dimension-ordered ones)");
  scale->add_option("-o,--output", args->output, "write the algorithm JSON here")
      ->check(writable_file());
  scale->callback([&result, args] {
    result.exit_code = exit_code_or_bad_input([&]() -> Expected<int> {
      SYNCOLL_TRY(topology, resolve_topology(args->topology));
      SYNCOLL_TRY(kind, cut_collective(args->collective, "synth scale makes"));
      if (auto cluster = synth::box_cluster(topology))
        return run_cluster(*args, topology, *cluster, kind);
      return run_direct(*args, topology, kind);
    }());
  });
}

} // namespace

void add_synth_commands(CLI::App &app, RunResult &result) {
  CLI::App *synth = app.add_subcommand(
      "synth", "synthesize k-synchronous algorithms (SCCL): one instance, the fewest "
               "steps, or the Pareto frontier of steps and rounds per chunk");
  synth->require_subcommand(1);
  auto args = std::make_shared<SynthArgs>();
  CLI::App *instance = synth->add_subcommand("instance", "decide one (chunks, steps, rounds)");
  CLI::App *least = synth->add_subcommand("least-steps", "the fewest steps, from the lower bound");
  CLI::App *front = synth->add_subcommand("pareto", "the Pareto frontier (SCCL, Algorithm 1)");
  for (CLI::App *cmd : {instance, least, front})
    add_common(*cmd, *args);
  add_bound_command(*synth, result);
  add_scale_command(*synth, result);
  for (CLI::App *cmd : {instance, least}) {
    cmd->add_option("-C,--chunk-factor", args->chunks,
                    "chunks per rank (allreduce: of the whole buffer)")
        ->capture_default_str();
    add_renamed_option(*cmd, "--chunks", "--chunk-factor", args->chunks);
    cmd->add_option("-o,--output", args->output, "write the algorithm JSON here")
        ->check(writable_file());
  }
  instance->add_option("-S,--steps", args->steps, "steps")->required();
  instance->add_option("-R,--rounds", args->rounds, "rounds in all (default: steps)");
  least->add_option("-R,--rounds", args->rounds, "rounds in all (default: steps + k)");
  least->add_option("-k", args->k, "rounds beyond one per step")->capture_default_str();
  least->add_option("--max-steps", args->max_steps, "give up after this many steps (default 16)");
  front->add_option("-k", args->k, "rounds beyond one per step (S <= R <= S + k)")
      ->capture_default_str();
  front->add_option("--max-chunks", args->max_chunks, "most chunks per rank tried")
      ->capture_default_str();
  front->add_option("--max-steps", args->max_steps,
                    "most steps tried (default: the steps lower bound + 6)");
  front
      ->add_option("-o,--output", args->output,
                   "write each frontier algorithm's JSON here (a folder)")
      ->check(writable_folder());

  auto setup = [args](synth::Target &target, synth::SynthOptions &options) -> Expected<Topology> {
    SYNCOLL_TRY(topology, resolve_topology(args->topology));
    if (auto kind = parse_collective_kind(args->collective);
        kind && *kind != CollectiveKind::Custom) {
      target.kind = *kind;
      // A rooted collective named without --root is rooted at 0, as in every other command.
      target.root =
          collective_traits(*kind).rooted ? std::optional(args->root.value_or(0)) : args->root;
      // Rooted collectives without a root fail here, with make_collective's message.
      SYNCOLL_CHECK(target.collective(topology.num_ranks(), 1));
    } else {
      SYNCOLL_TRY(custom,
                  resolve_collective(args->collective, topology.num_ranks(), 1, args->root));
      target.kind = CollectiveKind::Custom;
      target.custom = custom;
      args->chunks = custom.chunk_factor();
    }
    if (args->allreduce && target.kind != CollectiveKind::Allreduce)
      return fail({}, fmt::format("--allreduce says how to synthesize an allreduce, not {}",
                                  args->collective));
    if ((args->certify || args->symmetry) && args->backend != "sat")
      return fail({}, fmt::format("{} is an option of the sat backend, not {}",
                                  args->certify ? "--certify" : "--symmetry", args->backend));
    target.allreduce = args->allreduce == "direct" ? synth::AllreduceMethod::Direct
                                                   : synth::AllreduceMethod::Composed;
    options.backend = args->backend == "sat" ? synth::Backend::Sat : synth::Backend::Smt;
    options.time_limit_s = args->time_limit;
    options.certify = args->certify;
    options.break_symmetry = args->symmetry;
    return topology;
  };
  auto bad = [&result](const Diagnostics &d) {
    print_diagnostics(d);
    result.exit_code = kBadInput;
  };
  instance->callback([&result, args, setup, bad] {
    synth::Target target;
    synth::SynthOptions options;
    auto topology = setup(target, options);
    if (!topology)
      return bad(topology.error());
    const synth::StepsRounds sr{*args->steps, args->rounds.value_or(*args->steps)};
    auto answer = synth::synthesize(*topology, target, args->chunks, sr, options);
    if (!answer)
      return bad(answer.error());
    fmt::print("{} on {}, C{} S{} R{}{}: {} ({:.2f} s)", target_title(target), topology->name(),
               args->chunks, sr.steps, sr.rounds, solver_settings(*args),
               synth::verdict_name(answer->verdict), answer->seconds);
    fmt::print("{}\n", answer->detail.empty() ? "" : " - " + answer->detail);
    if (!answer->certificate.empty())
      fmt::print("  certified: {}\n", answer->certificate);
    if (!answer->unsat_scope.empty())
      fmt::print("  (the proof covers only {}; other algorithms may exist)\n", answer->unsat_scope);
    if (answer->verdict != synth::Verdict::Sat) {
      result.exit_code = answer->verdict == synth::Verdict::Unsat ? kCheckFailed : kUnknown;
      return;
    }
    if (auto ok = show_and_save(*answer->algorithm, args->topology, args->output); !ok)
      return bad(ok.error());
    result.exit_code = kSuccess;
  });

  least->callback([&result, args, setup, bad] {
    synth::Target target;
    synth::SynthOptions options;
    auto topology = setup(target, options);
    if (!topology)
      return bad(topology.error());
    auto found = synth::least_steps(*topology, target, args->chunks, args->rounds, args->k,
                                    args->max_steps > 0 ? args->max_steps : 16, options);
    if (!found)
      return bad(found.error());
    fmt::print("{} on {}, C{}{}: steps lower bound {}\n", target_title(target), topology->name(),
               args->chunks, solver_settings(*args), found->steps_lower_bound);
    for (const synth::Attempt &a : found->attempts)
      fmt::print("  S{} R{}: {} ({:.2f} s){}\n", a.sr.steps, a.sr.rounds,
                 synth::verdict_name(a.verdict), a.seconds,
                 a.detail.empty() ? "" : " - " + a.detail);
    if (!found->found) {
      const bool unknown =
          std::any_of(found->attempts.begin(), found->attempts.end(),
                      [](const synth::Attempt &a) { return a.verdict == synth::Verdict::Unknown; });
      fmt::print("no algorithm within the steps tried{}\n",
                 unknown ? " (some answers were unknown)" : "");
      result.exit_code = unknown ? kUnknown : kCheckFailed;
      return;
    }
    if (!found->proven_least)
      fmt::print("(not proven the fewest steps: a smaller step count was unknown)\n");
    if (auto ok = show_and_save(*found->found->algorithm, args->topology, args->output); !ok)
      return bad(ok.error());
    result.exit_code = kSuccess;
  });

  front->callback([&result, args, setup, bad] {
    synth::Target target;
    synth::SynthOptions options;
    auto topology = setup(target, options);
    if (!topology)
      return bad(topology.error());
    synth::ParetoOptions po;
    po.k = args->k;
    po.max_chunks = args->max_chunks;
    po.max_steps = args->max_steps;
    po.synth = options;
    po.on_attempt = [](const synth::Attempt &a) {
      fmt::print(stderr, "  tried C{} S{} R{}: {} ({:.2f} s)\n", a.chunks, a.sr.steps, a.sr.rounds,
                 synth::verdict_name(a.verdict), a.seconds);
    };
    auto frontier = synth::pareto(*topology, target, po);
    if (!frontier)
      return bad(frontier.error());
    fmt::print(
        "{} on {}{}: steps lower bound {}, rounds per chunk lower bound {}\n", target_title(target),
        topology->name(), solver_settings(*args), frontier->steps_lower_bound,
        frontier->rounds_per_chunk_bound ? to_string(*frontier->rounds_per_chunk_bound) : "-");
    fmt::print("{:>4} {:>4} {:>4} {:>7} {:<28} {:>9}\n", "S", "R", "C", "R/C", "optimality",
               "time (s)");
    for (const synth::ParetoPoint &p : frontier->frontier) {
      std::string optimality = p.latency_optimal && p.bandwidth_optimal ? "latency and bandwidth"
                               : p.latency_optimal                      ? "latency"
                               : p.bandwidth_optimal                    ? "bandwidth"
                                                                        : "pareto";
      fmt::print("{:>4} {:>4} {:>4} {:>7} {:<28} {:>9.2f}\n", p.sr.steps, p.sr.rounds, p.chunks,
                 to_string(p.rounds_per_chunk), optimality, p.seconds);
    }
    size_t proofs = 0, unknown = 0;
    for (const synth::Attempt &a : frontier->attempts) {
      proofs += a.verdict == synth::Verdict::Unsat;
      unknown += a.verdict == synth::Verdict::Unknown;
    }
    fmt::print("{} instances tried (C <= {}, S <= {}, S <= R <= S + {}), {} proven infeasible{}"
               "{}{}\n",
               frontier->attempts.size(), po.max_chunks,
               po.max_steps > 0 ? po.max_steps : frontier->steps_lower_bound + 6, po.k, proofs,
               unknown > 0 ? fmt::format(", {} unknown", unknown) : "",
               frontier->complete ? "; complete" : "",
               frontier->note.empty() ? "" : "; " + frontier->note);
    if (!args->output.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(args->output, ec);
      for (const synth::ParetoPoint &p : frontier->frontier)
        if (auto ok = write_output(
                (std::filesystem::path(args->output) / (p.algorithm.name + ".json")).string(),
                algorithm_file_text(p.algorithm, args->topology));
            !ok)
          return bad(ok.error());
      fmt::print("{} frontier algorithm(s) written to {}\n", frontier->frontier.size(),
                 args->output);
    }
    // No point found is a proof only when no answer on the way was unknown.
    result.exit_code = !frontier->frontier.empty() ? kSuccess
                       : unknown > 0               ? kUnknown
                                                   : kCheckFailed;
  });
}

} // namespace syncoll::cli
