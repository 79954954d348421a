// `syncoll verify`: every property of a thread-block program, with counterexamples.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "verifier/verify.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {

void add_verify_command(CLI::App &app, RunResult &result) {
  struct Args {
    std::string file;
    std::string collective;
    std::optional<int> chunk_factor;
    std::optional<int> root;
    std::string protocol;
    std::optional<int> sm_budget;
    std::string mode = "strict";
    int iterations = 2;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App *cmd = app.add_subcommand(
      "verify", "check a thread-block program: structure, resources, deadlock freedom, race "
                "freedom and the postcondition (exit 0 all hold, 1 a property is violated, 2 bad "
                "input, 3 a verdict is unknown)");
  cmd->add_option("program", args->file, "MSCCL-IR XML file")->required();
  cmd->add_option("-c,--collective", args->collective,
                  "collective name or custom collective JSON (default: the XML's coll)");
  cmd->add_option("-C,--chunk-factor", args->chunk_factor,
                  "chunks per rank buffer when --collective names a standard collective");
  cmd->add_option("--root", args->root, "root rank of rooted collectives (default 0)");
  cmd->add_option("--protocol", args->protocol, "check as if run with Simple, LL or LL128");
  cmd->add_option("--sm-budget", args->sm_budget, "thread blocks per rank that can be resident");
  cmd->add_option("--mode", args->mode,
                  "race mode: strict (program order and dependencies) or "
                  "relaxed (also messages)")
      ->check(CLI::IsMember({"strict", "relaxed"}));
  cmd->add_option("--iterations", args->iterations, "pipeline iterations to explore (>= 2)")
      ->check(CLI::Range(2, 64));
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([&result, args] {
    auto bad = [&](const Diagnostics &d) {
      print_diagnostics(d);
      result.exit_code = kBadInput;
    };
    auto program = read_program_file(args->file);
    if (!program)
      return bad(program.error());
    print_diagnostics(program->warnings);
    verifier::VerifyOptions options;
    options.root = args->root;
    options.iterations = args->iterations;
    options.race_mode =
        args->mode == "relaxed" ? verifier::RaceMode::Relaxed : verifier::RaceMode::Strict;
    if (args->sm_budget)
      options.limits.sm_budget = *args->sm_budget;
    if (!args->protocol.empty()) {
      auto p = parse_protocol(args->protocol);
      if (!p)
        return bad(Diagnostics({Severity::Error,
                                {},
                                fmt::format("unknown protocol '{}' (expected "
                                            "Simple, LL or LL128)",
                                            args->protocol),
                                {}}));
      options.protocol = *p;
    }
    if (!args->collective.empty()) {
      int chunk_factor = args->chunk_factor.value_or(1);
      if (!args->chunk_factor) {
        auto inferred = collective_for_program(program->value, args->root);
        if (inferred)
          chunk_factor = inferred->chunk_factor();
      }
      auto c = resolve_collective(args->collective, program->value.num_ranks(), chunk_factor,
                                  args->root);
      if (!c)
        return bad(c.error());
      options.collective = *c;
    }
    verifier::Report report = verifier::verify(program->value, options);
    if (args->json)
      std::cout << to_canonical_json(report.to_json());
    else
      std::cout << fmt::format("{}: {} ranks, {}\n", args->file, program->value.num_ranks(),
                               report.all_hold() ? "every property holds"
                                                 : "not every property holds")
                << report.to_text();
    bool violated = false, unknown = false;
    for (const auto &v : report.verdicts) {
      violated = violated || v.kind == verifier::VerdictKind::Violated;
      unknown = unknown || v.kind == verifier::VerdictKind::Unknown;
    }
    result.exit_code = violated ? kCheckFailed : unknown ? kUnknown : kSuccess;
  });
}

} // namespace syncoll::cli
