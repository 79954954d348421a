// `syncoll verify`: every property of a thread-block program, with counterexamples.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "mscclpp/mscclpp.h"
#include "verifier/verify.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {

namespace {

struct VerifyArgs {
  std::string file;
  std::string collective;
  std::optional<int> chunk_factor;
  std::optional<int> root;
  std::string protocol;
  std::optional<int> sm_budget;
  std::string mode = "strict";
  int iterations = 2;
  std::string sizes;
  bool json = false;
};

// "S" (one size), "A..B" or "A.." (no upper limit): message sizes in the executor's terms.
Expected<verifier::SizeWindow> size_window(const std::string &text) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    SYNCOLL_TRY(size, parse_size(text));
    return verifier::SizeWindow{size, size};
  }
  SYNCOLL_TRY(low, parse_size(text.substr(0, dots)));
  verifier::SizeWindow window{low, std::nullopt};
  if (dots + 2 < text.size()) {
    SYNCOLL_TRY(high, parse_size(text.substr(dots + 2)));
    if (high < low)
      return fail({}, fmt::format("--sizes {}: the window ends before it starts", text));
    window.max_bytes = high;
  }
  return window;
}

Expected<verifier::VerifyOptions> options_for(const VerifyArgs &a, const Program &program) {
  if (a.collective.empty())
    SYNCOLL_CHECK(check_program_root(a.root, program));
  verifier::VerifyOptions options;
  options.root = a.root;
  options.iterations = a.iterations;
  options.race_mode =
      a.mode == "relaxed" ? verifier::RaceMode::Relaxed : verifier::RaceMode::Strict;
  if (a.sm_budget)
    options.limits.sm_budget = *a.sm_budget;
  if (!a.sizes.empty()) {
    SYNCOLL_TRY(window, size_window(a.sizes));
    options.sizes = window;
  }
  if (!a.protocol.empty()) {
    auto p = parse_protocol(a.protocol);
    if (!p)
      return fail({},
                  fmt::format("unknown protocol '{}' (expected Simple, LL or LL128)", a.protocol));
    options.protocol = *p;
  }
  if (!a.collective.empty()) {
    // A standard collective named on the command line takes the program's chunk factor unless
    // -C says otherwise.
    int chunk_factor = a.chunk_factor.value_or(1);
    if (!a.chunk_factor)
      if (auto inferred = collective_for_program(program, a.root))
        chunk_factor = inferred->chunk_factor();
    // A rooted collective named without --root is rooted at 0, as --help says.
    const auto kind = parse_collective_kind(a.collective);
    const std::optional<int> root =
        a.root || !kind || !collective_traits(*kind).rooted ? a.root : std::optional(0);
    SYNCOLL_TRY(c, resolve_collective(a.collective, program.num_ranks(), chunk_factor, root));
    options.collective = std::move(c);
  }
  return options;
}

// 1 when a property is violated, else 3 when one is unknown, else 0: for an MSCCL-IR
// program's report and an MSCCL++ plan's alike.
template <typename Report> int exit_code_of(const Report &report) {
  bool violated = false, unknown = false;
  for (const auto &v : report.verdicts) {
    violated = violated || v.kind == verifier::VerdictKind::Violated;
    unknown = unknown || v.kind == verifier::VerdictKind::Unknown;
  }
  return violated ? kCheckFailed : unknown ? kUnknown : kSuccess;
}

// An MSCCL++ plan: its verdicts under docs/semantics.md's MSCCL++ rules. The MSCCL-IR options
// have no meaning for it and are refused.
Expected<int> verify_mscclpp_plan(const VerifyArgs &a) {
  const std::pair<bool, const char *> msccl_only[] = {
      {!a.collective.empty(), "--collective"},
      {a.chunk_factor.has_value(), "--chunk-factor"},
      {a.root.has_value(), "--root"},
      {!a.protocol.empty(), "--protocol"},
      {a.sm_budget.has_value(), "--sm-budget"},
      {a.mode != "strict", "--mode"},
      {!a.sizes.empty(), "--sizes"},
      {a.iterations != 2, "--iterations"},
      {a.json, "--json"}};
  for (const auto &[given, option] : msccl_only)
    if (given)
      return fail({}, fmt::format("{} applies to MSCCL-IR programs; {} is an MSCCL++ plan, which "
                                  "names its own collective, protocol and message sizes",
                                  option, a.file));
  SYNCOLL_TRY(plan, mscclpp::read_execution_plan_file(a.file));
  const mscclpp::PlanReport report = mscclpp::verify_plan(plan);
  std::cout << fmt::format("{}: MSCCL++ plan '{}', {} GPUs, {}\n", a.file, plan.name,
                           plan.gpus.size(),
                           report.all_hold() ? "every property holds" : "not every property holds")
            << report.to_text();
  return exit_code_of(report);
}

Expected<int> run_verify(const VerifyArgs &a) {
  SYNCOLL_TRY(is_plan, names_mscclpp_plan(a.file));
  if (is_plan)
    return verify_mscclpp_plan(a);
  SYNCOLL_TRY(program, read_program_file(a.file));
  print_diagnostics(program.warnings);
  SYNCOLL_TRY(options, options_for(a, program.value));
  const verifier::Report report = verifier::verify(program.value, options);
  if (a.json)
    std::cout << to_canonical_json(report.to_json());
  else
    std::cout << fmt::format("{}: {} ranks, {}\n", a.file, program.value.num_ranks(),
                             report.all_hold() ? "every property holds"
                                               : "not every property holds")
              << report.to_text();
  return exit_code_of(report);
}

} // namespace

void add_verify_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App *cmd = app.add_subcommand(
      "verify", "check a thread-block program (MSCCL-IR) or an MSCCL++ execution plan: "
                "structure, resources, deadlock freedom, race freedom and the postcondition (exit "
                "0 all hold, 1 a property is violated, 2 bad input, 3 a verdict is unknown)");
  cmd->add_option("program", args->file, "MSCCL-IR XML or JSON file, or an MSCCL++ plan (JSON)")
      ->required();
  cmd->add_option("-c,--collective", args->collective,
                  "collective name or custom collective JSON (default: the XML's coll)");
  cmd->add_option("-C,--chunk-factor", args->chunk_factor,
                  "chunks per rank buffer when --collective names a standard collective");
  cmd->add_option("--root", args->root, "root rank of rooted collectives (default 0)")
      ->check(at_least(0));
  cmd->add_option("--protocol", args->protocol, "check as if run with Simple, LL or LL128");
  cmd->add_option("--sm-budget", args->sm_budget, "thread blocks per rank that can be resident")
      ->check(at_least(1));
  cmd->add_option("--mode", args->mode,
                  "race mode: strict (program order and dependencies) or "
                  "relaxed (also messages)")
      ->check(CLI::IsMember({"strict", "relaxed"}));
  cmd->add_option("-s,--size,--sizes", args->sizes,
                  "message sizes to check (the executor's nBytes): S, A..B or A.. (default: the "
                  "program's minBytes..maxBytes)");
  cmd->add_option("--iterations", args->iterations, "pipeline iterations to explore (>= 2)")
      ->check(CLI::Range(2, 64));
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([&result, args] { result.exit_code = exit_code_or_bad_input(run_verify(*args)); });
}

} // namespace syncoll::cli
