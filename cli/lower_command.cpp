// `syncoll lower`: an algorithm JSON or a DSL example through the lowering passes and the
// verifier to MSCCL-IR XML. Only a program that passes every check is written (exit 1 and the
// report otherwise; no file).
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "examples/programs/programs.h"
#include "lowering/by_connection.h"
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/algorithm.h"

#include <fmt/format.h>
#include <memory>

namespace syncoll::cli {
namespace {

struct LowerArgs {
  std::string file;
  std::string example;
  bool in_place = false;
  TopologyOptions topology;
  std::string collective;
  std::optional<int> chunk_factor;
  std::optional<int> root;
  std::string protocol = "Simple";
  int instances = 1;
  std::string passes = "connection";
  bool passes_given = false;
  std::string output;
  std::string format = "xml";
  bool list = false;
};

void summarize(const lowering::Lowered &l) {
  size_t tbs = 0, steps = 0;
  for (const RankProgram &rp : l.program.ranks()) {
    tbs += rp.thread_blocks.size();
    for (const ThreadBlock &tb : rp.thread_blocks)
      steps += tb.steps.size();
  }
  size_t fused = 0;
  for (const auto &in : l.instruction_dag.instructions)
    fused += !in.removed && in.operations.size() > 1;
  fmt::print("program '{}': {} on {} ranks in {}; {} operations -> {} instructions ({} fused); "
             "{} thread blocks, {} channel(s), {} steps\n",
             l.program.name(), l.program.collective(), l.program.num_ranks(),
             protocol_traits(l.program.protocol()).name, l.chunk_dag.operations.size(),
             std::count_if(l.instruction_dag.instructions.begin(),
                           l.instruction_dag.instructions.end(),
                           [](auto &x) { return !x.removed; }),
             fused, tbs, l.program.num_channels(), steps);
}

// A DSL example: an example written for one aliasing mode is lowered in it; one written for
// both takes --in-place.
Expected<lowering::DslProgram> example_program(const LowerArgs &a,
                                               lowering::DslOptions dsl_options) {
  SYNCOLL_TRY(example, examples::require_program_example(a.example));
  // An example is built for -n ranks on --nodes nodes; what shapes a topology or names a
  // collective belongs to an algorithm file.
  if (!a.topology.spec.empty() || !a.topology.shape.empty())
    return fail({}, fmt::format("{} names an algorithm's topology; --example '{}' takes -n and "
                                "--nodes",
                                a.topology.spec.empty() ? "--shape" : "-t", example->name));
  for (std::string_view option : given_topology_options(a.topology.params))
    if (option != "-n" && option != "--nodes")
      return fail({}, fmt::format("{} shapes an algorithm's topology; --example '{}' takes -n "
                                  "and --nodes",
                                  option, example->name));
  if (a.topology.params.nodes && !example->takes_nodes)
    return fail({}, fmt::format("--nodes: example '{}' is not hierarchical (it has no nodes)",
                                example->name));
  if (!a.collective.empty() || a.chunk_factor || a.root)
    return fail({}, fmt::format("{} applies to an algorithm file; --example '{}' implements its "
                                "own collective",
                                !a.collective.empty() ? "-c"
                                : a.chunk_factor      ? "-C"
                                                      : "--root",
                                example->name));
  if (example->in_place_modes.size() == 1) {
    if (a.in_place && !example->in_place_modes.front())
      return fail({}, fmt::format("example '{}' is written out of place only", example->name));
    dsl_options.in_place = example->in_place_modes.front();
  }
  examples::ExampleParams params;
  params.ranks = a.topology.params.n.value_or(8); // -n, shared with the topology options
  if (params.ranks < 2 || params.ranks > 64)
    return fail({}, fmt::format("-n {}: examples take 2 to 64 ranks", params.ranks));
  params.nodes = a.topology.params.nodes.value_or(2);
  params.options = dsl_options;
  return example->build(params);
}

Expected<Protocol> protocol_of(const LowerArgs &a) {
  auto protocol = parse_protocol(a.protocol);
  if (!protocol)
    return fail({},
                fmt::format("unknown protocol '{}' (expected Simple, LL or LL128)", a.protocol));
  return *protocol;
}

Expected<lowering::DslProgram> dsl_program(const LowerArgs &a) {
  if (a.file.empty() == a.example.empty())
    return fail({}, "give either an algorithm JSON or --example NAME");
  SYNCOLL_TRY(protocol, protocol_of(a));
  lowering::DslOptions dsl_options;
  dsl_options.protocol = protocol;
  dsl_options.in_place = a.in_place;
  if (!a.example.empty())
    return example_program(a, dsl_options);
  SYNCOLL_TRY(input,
              read_algorithm_input(a.file, a.topology, a.collective, a.chunk_factor, a.root));
  return lowering::algorithm_to_dsl(input.algorithm, input.topology, input.collective, dsl_options);
}

// Prints the verdict and writes the XML of a verified program only.
Expected<int> finish(const tl::expected<verifier::VerifiedProgram, verifier::Report> &verified,
                     const Program &program, const Topology &topology,
                     const std::vector<std::string> &advice, const std::string &output,
                     const std::string &format) {
  if (!verified) {
    const verifier::Report &report = verified.error();
    fmt::print("{}", report.to_text());
    // Only the executor's limits broken (a thread block past id 127 cannot be waited for: the
    // device's depid is an int8): the program is too big for the executor, not wrong.
    bool only_resources = true;
    for (const verifier::Verdict &v : report.verdicts) {
      if (v.kind != verifier::VerdictKind::Violated || v.property == verifier::Property::Resources)
        continue;
      const auto *issues = std::get_if<std::vector<verifier::StructuralIssue>>(&v.counterexample);
      only_resources = only_resources && v.property == verifier::Property::Structure && issues &&
                       std::all_of(issues->begin(), issues->end(),
                                   [](const auto &i) { return i.code == "depid-range"; });
    }
    const bool resources_violated =
        report.verdict(verifier::Property::Resources).kind == verifier::VerdictKind::Violated;
    only_resources = only_resources && resources_violated;
    if (!only_resources) {
      fmt::print("not written: the program fails verification (a lowering bug: please report)\n");
      return kCheckFailed;
    }
    for (const std::string &line : advice)
      fmt::print("  {}\n", line);
    const bool correct =
        report.verdict(verifier::Property::Postcondition).kind == verifier::VerdictKind::Holds;
    fmt::print("not written: the program {}does not fit the executor's limits{}{}\n",
               correct ? "is correct but " : "",
               advice.empty() ? " (the lowering gives each concurrent use of a connection its "
                                "own thread block; fewer pieces per rank or fewer steps in "
                                "flight fit)"
                              : "",
               correct ? "" : "; its deadlock freedom, races and result were not checked");
    return kCheckFailed;
  }
  fmt::print("verified: structure, resources, deadlock freedom, race freedom, postcondition "
             "({})\n",
             program.in_place() ? "in place" : "out of place");
  return write_verified_program(*verified, topology, output, format);
}

// Sends from which lowering takes about a second: stages go to stderr from there.
constexpr size_t kLongLowering = 200'000;

// An algorithm file by connection (lowering/by_connection.h).
Expected<int> run_lower_by_connection(const LowerArgs &a) {
  SYNCOLL_TRY(protocol, protocol_of(a));
  const StageProgress progress("lower");
  SYNCOLL_TRY(input,
              read_algorithm_input(a.file, a.topology, a.collective, a.chunk_factor, a.root));
  lowering::ConnectionLoweringOptions options;
  options.protocol = protocol;
  options.instances = a.instances;
  // A schedule of many sends takes seconds: say where the time goes.
  if (input.algorithm.num_sends() >= kLongLowering)
    options.progress = progress;
  SYNCOLL_TRY(lowered, lowering::lower_by_connection(input.algorithm, input.topology,
                                                     input.collective, options));
  const lowering::ConnectionLoweringStats &s = lowered.stats;
  fmt::print("program '{}': {} on {} ranks in {}, by connection; {} sends -> {} steps; {} "
             "channel(s), at most {} thread blocks per rank, {} steps per thread block, {} "
             "scratch chunks\n",
             lowered.program.name(), lowered.program.collective(), lowered.program.num_ranks(),
             protocol_traits(lowered.program.protocol()).name, s.transfers, s.steps,
             lowered.program.num_channels(), s.max_thread_blocks, s.longest_thread_block,
             s.scratch_chunks);
  return finish(lowered.verified, lowered.program, input.topology, lowered.advice, a.output,
                a.format);
}

// Lowers, prints the summary and the verdict, and writes the XML of a verified program only.
Expected<int> run_lower(const LowerArgs &a) {
  // Either lowering of an algorithm writes it out of place (the GC3 path once took the flag and
  // dropped it).
  if (!a.file.empty() && a.in_place)
    return fail({}, "--in-place applies to an example; an algorithm lowers out of place");
  if (!a.file.empty() && a.example.empty() && a.passes == "connection")
    return run_lower_by_connection(a);
  if (!a.example.empty() && a.passes_given && a.passes == "connection")
    return fail({}, "--passes connection applies to an algorithm file; a DSL example lowers "
                    "through the GC3 passes");
  SYNCOLL_TRY(dsl, dsl_program(a));
  lowering::LowerOptions lower_options;
  lower_options.instances = a.instances;
  SYNCOLL_TRY(lowered, lowering::lower(dsl, lower_options));
  summarize(lowered);
  return finish(lowered.verified, lowered.program, dsl.topology(), {}, a.output, a.format);
}

} // namespace

void add_lower_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<LowerArgs>();
  CLI::App *cmd = app.add_subcommand(
      "lower",
      "lower an algorithm JSON or a DSL example (-n ranks) to MSCCL-IR XML, verified first");
  cmd->add_option("algorithm", args->file, "algorithm JSON (from `syncoll synth ... -o`)");
  cmd->add_option("--example", args->example, "a DSL example program (--list names them)");
  cmd->add_flag("--list", args->list, "list the DSL examples");
  cmd->add_flag("--in-place", args->in_place, "example: the in-place form, where it has both");
  args->topology.add_to(*cmd, /*positional=*/false, /*required=*/false);
  cmd->add_option("-c,--collective", args->collective,
                  "algorithm: collective name or JSON (default: the file's)");
  cmd->add_option("-C,--chunk-factor", args->chunk_factor,
                  "algorithm: chunks per rank buffer (default: the file's)");
  cmd->add_option("--root", args->root, "algorithm: root rank (default: the file's)")
      ->check(at_least(0));
  cmd->add_option("--protocol", args->protocol, "Simple, LL or LL128")->capture_default_str();
  cmd->add_option("--instances", args->instances, "replicate the program (GC3, section 5.3)")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  cmd->add_option("--passes", args->passes,
                  "algorithm: 'connection' (a thread block per connection and lane, for any "
                  "size) or 'gc3' (the DSL passes: a thread block per concurrent use of a "
                  "connection, receives fused with the sends that forward them)")
      ->capture_default_str()
      ->check(CLI::IsMember({"connection", "gc3"}))
      ->each([args](const std::string &) { args->passes_given = true; });
  cmd->add_option("--format", args->format,
                  "what -o writes: xml (MSCCL-IR, the default) or mscclpp (an MSCCL++ execution "
                  "plan, written only when it verifies too)")
      ->check(CLI::IsMember({"xml", "mscclpp"}));
  cmd->add_option("-o,--output", args->output, "write the XML (or plan) here ('-' for stdout)")
      ->check(writable_file());
  cmd->callback([&result, args] {
    if (args->list) {
      for (const auto &e : examples::program_examples())
        fmt::print("{:<30} {}\n", e.name, e.summary);
      result.exit_code = kSuccess;
      return;
    }
    result.exit_code = exit_code_or_bad_input(run_lower(*args));
  });
}

} // namespace syncoll::cli
