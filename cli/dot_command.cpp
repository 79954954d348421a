// `syncoll dot KIND INPUT [--format dot|svg|png] -o OUT`: draw a topology, an algorithm, a
// program, a chunk or instruction DAG, a counterexample or a simulated timeline.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "lowering/dag_dot.h"
#include "lowering/from_algorithm.h"
#include "model/algorithm.h"
#include "model/mscclir.h"
#include "simulator/program_sim.h"
#include "verifier/verify.h"
#include "viz/charts.h"
#include "viz/dot.h"
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
  std::string level = "chunk";
  std::string size = "1MiB";
  TopologyOptions topology;
};

// A DSL program from "example:NAME" (8 ranks) or an algorithm JSON with its topology.
Expected<lowering::DslProgram> dsl_for(DotArgs &a) {
  if (a.input.rfind("example:", 0) == 0) {
    const auto *e = examples::find_program_example(a.input.substr(8));
    if (!e)
      return fail({}, fmt::format("unknown example '{}'", a.input.substr(8)));
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
                  "counterexample, timeline: MSCCL-IR XML; dag: algorithm JSON or example:NAME")
      ->required();
  cmd->add_option("--format", args->format, "dot, svg or png (timeline: svg)")
      ->check(CLI::IsMember({"dot", "svg", "png"}))
      ->capture_default_str();
  cmd->add_option("--level", args->level, "dag: chunk or instruction")
      ->check(CLI::IsMember({"chunk", "instruction"}))
      ->capture_default_str();
  cmd->add_option("-s,--size", args->size, "timeline: message size")->capture_default_str();
  args->topology.add_to(*cmd, /*positional=*/false, /*required=*/false);
  cmd->add_option("-o,--output", args->output, "output file ('-' for stdout)")->required();
  cmd->callback([&result, args] {
    auto bad = [&result](const Diagnostics &d) {
      print_diagnostics(d);
      result.exit_code = kBadInput;
    };
    std::string dot, svg;
    const std::string &kind = args->kind;
    if (kind == "timeline" && args->format != "svg")
      return bad(fail({}, "a timeline is drawn as SVG only: give --format svg").value());
    if (kind == "topo") {
      args->topology.spec = args->input;
      auto t = resolve_topology(args->topology);
      if (!t)
        return bad(t.error());
      dot = viz::topology_dot(*t);
    } else if (kind == "algo") {
      auto a = read_algorithm_file(args->input);
      if (!a)
        return bad(a.error());
      dot = viz::algorithm_dot(*a);
    } else if (kind == "program") {
      auto p = program_for(args->input);
      if (!p)
        return bad(p.error());
      dot = viz::program_dot(*p);
    } else if (kind == "dag") {
      auto dsl = dsl_for(*args);
      if (!dsl)
        return bad(dsl.error());
      auto l = lowering::lower(*dsl);
      if (!l)
        return bad(l.error());
      dot = args->level == "chunk" ? lowering::chunk_dag_dot(l->chunk_dag, dsl->name())
                                   : lowering::instruction_dag_dot(l->instruction_dag, dsl->name());
    } else if (kind == "counterexample") {
      auto p = program_for(args->input);
      if (!p)
        return bad(p.error());
      const verifier::Report report = verifier::verify(*p, {});
      auto drawn = viz::counterexample_dot(*p, report);
      if (!drawn) {
        fmt::print("nothing to draw: no deadlock or race in {}\n", args->input);
        result.exit_code = kCheckFailed;
        return;
      }
      dot = *drawn;
    } else { // timeline
      auto p = program_for(args->input);
      if (!p)
        return bad(p.error());
      if (args->topology.spec.empty())
        return bad(fail({}, "a timeline needs the topology: give --topology").value());
      auto t = resolve_topology(args->topology);
      if (!t)
        return bad(t.error());
      auto size = parse_size(args->size);
      if (!size)
        return bad(size.error());
      simulator::ProgramSimOptions o;
      o.size_bytes = *size;
      o.trace = true;
      auto sim = simulator::simulate_program(*p, *t, o);
      if (!sim)
        return bad(sim.error());
      svg = viz::timeline_svg(
          sim->result, fmt::format("{} on {}, {}", p->name(), t->name(), format_size(*size)));
    }
    std::string content = svg;
    if (content.empty()) {
      if (args->format == "dot") {
        content = dot;
      } else {
        viz::Renderer renderer;
        auto image = renderer.render(dot, args->format == "svg" ? viz::ImageFormat::Svg
                                                                : viz::ImageFormat::Png);
        if (!image)
          return bad(image.error());
        content = *image;
      }
    }
    if (auto w = write_output(args->output, content); !w)
      return bad(w.error());
    result.exit_code = kSuccess;
  });
}

} // namespace syncoll::cli
