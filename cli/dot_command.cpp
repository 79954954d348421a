// `syncoll dot KIND INPUT [--format dot|svg|png] -o OUT`: draw a topology, an algorithm, a
// program, a chunk or instruction DAG, a counterexample or a simulated timeline.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "lowering/dag_dot.h"
#include "lowering/from_algorithm.h"
#include "model/algorithm.h"
#include "model/invariant.h"
#include "model/mscclir.h"
#include "mscclpp/mscclpp.h"
#include "simulator/program_sim.h"
#include "verifier/verify.h"
#include "viz/charts.h"
#include "viz/dot.h"
#include "viz/plan_dot.h"
#include "viz/render.h"

#include <fmt/format.h>
#include <memory>

namespace syncoll::cli {
namespace {

struct DotArgs {
  std::string kind;
  std::string input;
  std::string format = "dot";
  std::string output;
  std::string level; ///< empty: chunk
  std::string size;  ///< empty: 1 MiB
  TopologyOptions topology;
};

// A DSL program from "example:NAME" (8 ranks) or an algorithm JSON with its topology.
Expected<lowering::DslProgram> dsl_for(DotArgs &a) {
  if (a.input.rfind("example:", 0) == 0) {
    SYNCOLL_TRY(e, examples::require_program_example(a.input.substr(8)));
    if (!a.topology.spec.empty() || !a.topology.shape.empty())
      return fail({},
                  "an example's DAG takes -n only; -t and --shape name an algorithm's topology");
    for (std::string_view option : given_topology_options(a.topology.params))
      if (option != "-n")
        return fail({}, fmt::format("an example's DAG takes -n only, not {}", option));
    examples::ExampleParams params;
    params.ranks = a.topology.params.n.value_or(8);
    params.options.in_place = e->in_place_modes.front();
    return e->build(params);
  }
  SYNCOLL_TRY(input, read_algorithm_input(a.input, a.topology, "", std::nullopt, std::nullopt));
  return lowering::algorithm_to_dsl(input.algorithm, input.topology, input.collective);
}

Expected<Program> program_for(const std::string &path) {
  SYNCOLL_TRY(warned, read_program_file(path));
  return std::move(warned.value);
}

// The DOT of every kind but the timeline; none when a counterexample has nothing to draw.
Expected<std::optional<std::string>> dot_of(DotArgs &a) {
  const std::string &kind = a.kind;
  if (kind == "topo") {
    a.topology.spec = a.input;
    SYNCOLL_TRY(t, resolve_topology(a.topology));
    return viz::topology_dot(t);
  }
  if (kind == "algo") {
    SYNCOLL_TRY(algorithm, read_algorithm_file(a.input));
    return viz::algorithm_dot(algorithm);
  }
  if (kind == "dag") {
    SYNCOLL_TRY(dsl, dsl_for(a));
    SYNCOLL_TRY(l, lowering::lower(dsl));
    return a.level != "instruction" ? lowering::chunk_dag_dot(l.chunk_dag, dsl.name())
                                    : lowering::instruction_dag_dot(l.instruction_dag, dsl.name());
  }
  // An MSCCL++ plan: its counterexample, verified as `syncoll verify` verifies it.
  SYNCOLL_TRY(is_plan, names_mscclpp_plan(a.input));
  if (is_plan) {
    if (kind != "counterexample")
      return fail({}, fmt::format("{} is an MSCCL++ plan: dot draws a plan's counterexample, not "
                                  "its {}",
                                  a.input, kind));
    SYNCOLL_TRY(plan, mscclpp::read_execution_plan_file(a.input));
    return viz::plan_counterexample_dot(plan, mscclpp::verify_plan(plan));
  }
  SYNCOLL_TRY(p, program_for(a.input));
  if (kind == "program")
    return viz::program_dot(p);
  SYNCOLL_INVARIANT(kind == "counterexample", "a drawing kind the option check let through");
  return viz::counterexample_dot(p, verifier::verify(p, {}));
}

// A timeline is a chart of a simulator trace, drawn as SVG directly.
Expected<std::string> timeline_of(const DotArgs &a) {
  SYNCOLL_TRY(p, program_for(a.input));
  if (a.topology.spec.empty())
    return fail({}, "a timeline needs the topology: give --topology");
  TopologyOptions topology = a.topology;
  SYNCOLL_TRY(t, resolve_topology(topology));
  SYNCOLL_TRY(size, parse_size(a.size.empty() ? "1MiB" : a.size));
  simulator::ProgramSimOptions o;
  o.size_bytes = size;
  o.trace = true;
  SYNCOLL_TRY(sim, simulator::simulate_program(p, t, o));
  return viz::timeline_svg(sim.result,
                           fmt::format("{} on {}, {}", p.name(), t.name(), format_size(size)));
}

// An option the kind does not draw with is refused, not ignored.
Expected<void> check_options_apply(const DotArgs &a) {
  if (!a.level.empty() && a.kind != "dag")
    return fail({}, fmt::format("--level applies to dag drawings, not to {}", a.kind));
  if (!a.size.empty() && a.kind != "timeline")
    return fail({}, fmt::format("--size applies to timelines, not to {}", a.kind));
  const bool takes_topology = a.kind == "topo" || a.kind == "dag" || a.kind == "timeline";
  if (!takes_topology) {
    if (!a.topology.spec.empty() || !a.topology.shape.empty())
      return fail({}, fmt::format("{} drawings take no topology: the {} is drawn as it is", a.kind,
                                  a.kind == "algo" ? "algorithm" : "program"));
    if (const auto given = given_topology_options(a.topology.params); !given.empty())
      return fail({}, fmt::format("{} applies to topo, dag and timeline drawings, not to {}",
                                  given.front(), a.kind));
  }
  return {};
}

Expected<int> run_dot(DotArgs &a) {
  SYNCOLL_CHECK(check_options_apply(a));
  std::string content;
  if (a.kind == "timeline") {
    if (a.format != "svg")
      return fail({}, "a timeline is drawn as SVG only: give --format svg");
    SYNCOLL_TRY(svg, timeline_of(a));
    content = std::move(svg);
  } else {
    SYNCOLL_TRY(dot, dot_of(a));
    if (!dot) {
      fmt::print("nothing to draw: no deadlock or race in {}\n", a.input);
      return kCheckFailed;
    }
    if (a.format == "dot") {
      content = std::move(*dot);
    } else {
      viz::Renderer renderer;
      SYNCOLL_TRY(image, renderer.render(*dot, a.format == "svg" ? viz::ImageFormat::Svg
                                                                 : viz::ImageFormat::Png));
      content = std::move(image);
    }
  }
  SYNCOLL_CHECK(write_output(a.output, content));
  return kSuccess;
}

} // namespace

void add_dot_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<DotArgs>();
  CLI::App *cmd = app.add_subcommand(
      "dot", "draw a topology, algorithm, program, DAG, counterexample or timeline (Graphviz)");
  cmd->add_option("kind", args->kind, "topo, algo, program, dag, counterexample or timeline")
      ->required()
      ->check(CLI::IsMember({"topo", "algo", "program", "dag", "counterexample", "timeline"}));
  cmd->add_option("input", args->input,
                  "topo: a library name or topology JSON; algo: algorithm JSON; program, "
                  "timeline: MSCCL-IR XML; counterexample: MSCCL-IR XML or an MSCCL++ plan; dag: "
                  "algorithm JSON or example:NAME")
      ->required();
  cmd->add_option("--format", args->format, "dot, svg or png (timeline: svg)")
      ->check(CLI::IsMember({"dot", "svg", "png"}))
      ->capture_default_str();
  cmd->add_option("--level", args->level, "dag: chunk (the default) or instruction")
      ->check(CLI::IsMember({"chunk", "instruction"}));
  cmd->add_option("-s,--size,--sizes", args->size, "timeline: message size (one; default 1MiB)");
  args->topology.add_to(*cmd, /*positional=*/false, /*required=*/false);
  cmd->add_option("-o,--output", args->output, "output file ('-' for stdout)")
      ->required()
      ->check(writable_file());
  cmd->callback([&result, args] { result.exit_code = exit_code_or_bad_input(run_dot(*args)); });
}

} // namespace syncoll::cli
