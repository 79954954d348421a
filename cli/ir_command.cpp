// `syncoll ir show` and `syncoll ir convert`: MSCCL-IR XML and its JSON form.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/json_document.h"
#include "model/mscclir.h"

#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>

namespace syncoll::cli {
namespace {

std::string describe_size(int64_t bytes) {
  if (bytes == 0)
    return "0";
  static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes % 1024 == 0 && bytes >= 1024)
    bytes /= 1024, ++unit;
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

void print_program(const Program &p) {
  const ProgramDraft &d = p.draft();
  size_t tbs = 0, steps = 0;
  for (const auto &rp : d.ranks) {
    tbs += rp.thread_blocks.size();
    for (const auto &tb : rp.thread_blocks)
      steps += tb.steps.size();
  }
  fmt::print("program '{}': {} on {} ranks, protocol {}, {} channel(s), {} chunks per loop\n",
             d.name, d.collective, d.num_ranks, protocol_name(d.protocol), d.num_channels,
             d.chunks_per_loop);
  fmt::print("calls: in-place {}, out-of-place {}; sizes {} .. {}\n", d.in_place ? "yes" : "no",
             d.out_of_place ? "yes" : "no", describe_size(d.min_bytes),
             d.max_bytes == 0 ? std::string("unbounded") : describe_size(d.max_bytes));
  fmt::print("totals: {} thread blocks, {} steps\n", tbs, steps);
  for (const auto &rp : d.ranks) {
    size_t rank_steps = 0;
    for (const auto &tb : rp.thread_blocks)
      rank_steps += tb.steps.size();
    fmt::print("rank {}: buffers i={} o={} s={} chunks; {} thread blocks, {} steps\n",
               rp.rank.value(), rp.input_chunks, rp.output_chunks, rp.scratch_chunks,
               rp.thread_blocks.size(), rank_steps);
    for (const auto &tb : rp.thread_blocks) {
      std::string ops;
      for (const auto &in : tb.steps)
        ops += fmt::format("{}{}{}", ops.empty() ? "" : " ", op_type_name(in.op),
                           in.dependency ? "*" : "");
      fmt::print("  tb {:>2}: send {:>2} recv {:>2} chan {:>2}, {:>3} steps: {}\n", tb.id.value(),
                 tb.send_peer ? tb.send_peer->value() : -1,
                 tb.recv_peer ? tb.recv_peer->value() : -1, tb.channel.value(), tb.steps.size(),
                 ops);
    }
  }
  fmt::print("(* = step waits on another thread block)\n");
}

} // namespace

void add_ir_commands(CLI::App &app, RunResult &result) {
  CLI::App *ir = app.add_subcommand("ir", "read, show and convert MSCCL-IR programs");
  ir->require_subcommand(1);

  auto show_file = std::make_shared<std::string>();
  CLI::App *show = ir->add_subcommand(
      "show", "summarize a program: ranks, thread blocks, steps, channels, protocol, sizes");
  show->add_option("program", *show_file, "MSCCL-IR XML file (or its JSON form)")->required();
  show->callback([&result, show_file] {
    auto program = read_program_file(*show_file);
    if (!program) {
      print_diagnostics(program.error());
      result.exit_code = kBadInput;
      return;
    }
    print_diagnostics(program->warnings);
    print_program(program->value);
    result.exit_code = kSuccess;
  });

  struct ConvertArgs {
    std::string input;
    std::string output = "-";
  };
  auto args = std::make_shared<ConvertArgs>();
  CLI::App *convert = ir->add_subcommand(
      "convert", "convert MSCCL-IR XML to its JSON form, or JSON back to XML (the executor "
                 "dialect)");
  convert->add_option("input", args->input, "XML or JSON program")->required();
  convert->add_option("-o,--output", args->output, "output file (default: stdout)")
      ->check(writable_file());
  convert->callback([&result, args] {
    auto text_in = read_text_file(args->input);
    if (!text_in) {
      print_diagnostics(text_in.error());
      result.exit_code = kBadInput;
      return;
    }
    auto program = parse_program(*text_in, args->input);
    if (!program) {
      print_diagnostics(program.error());
      result.exit_code = kBadInput;
      return;
    }
    print_diagnostics(program->warnings);
    std::string text = sniff_program_format(*text_in) == ProgramFormat::Xml
                           ? to_canonical_json(program_to_json(program->value))
                           : program_to_mscclir_xml(program->value);
    if (auto written = write_output(args->output, text); !written) {
      print_diagnostics(written.error());
      result.exit_code = kBadInput;
      return;
    }
    result.exit_code = kSuccess;
  });
}

} // namespace syncoll::cli
