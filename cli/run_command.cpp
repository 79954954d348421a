// `syncoll run`: a verified program executed with real data (backend/): inputs from a
// seeded pattern, every defined output checked against a host reference, time and bandwidth
// printed as nccl-tests prints them. A program that does not verify is refused with its report.
#include "backend/cuda_executor.h"
#include "backend/executor.h"
#include "backend/nccl_transport.h"
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/collective_traits.h"
#include "model/mscclir.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {
namespace {

struct RunArgs {
  std::string file;
  std::string backend = "cpu";
  bool emulate = false;
  std::optional<int> rank;
  std::string id_file;
  int device = -1;
  std::string size = "1MiB";
  std::string dtype = "i32";
  std::string op = "sum";
  int iters = 1;
  uint64_t seed = 1;
  std::optional<int> root;
  int watchdog_ms = 3000;
};

int sends(const backend::ExecutableProgram &e) {
  int n = 0;
  for (const backend::device::Step &s : e.steps())
    n += (s.bits & backend::device::kSends) ? 1 : 0;
  return n;
}

Expected<int> run_program(const RunArgs &a) {
  SYNCOLL_TRY(program, read_program_file(a.file));
  print_diagnostics(program.warnings);
  SYNCOLL_TRY(size, parse_size(a.size));
  const auto type = backend::parse_data_type(a.dtype);
  if (!type)
    return fail({}, fmt::format("unknown --dtype '{}' (expected i32, f32, f16 or bf16)", a.dtype));
  const auto op = backend::parse_reduce_op(a.op);
  if (!op)
    return fail({}, fmt::format("unknown --op '{}' (expected sum, prod, max or min)", a.op));
  if (a.emulate && a.backend != "cuda")
    return fail({}, "--emulate is an option of --backend cuda");
  if (a.backend == "cuda" && !a.emulate && (!a.rank || a.id_file.empty()))
    return fail({}, "--backend cuda runs one process per GPU and rank: give --rank and --id-file "
                    "(or --emulate to run every rank on this GPU)");
  if ((a.rank || !a.id_file.empty()) && (a.backend != "cuda" || a.emulate))
    return fail({}, "--rank and --id-file are options of --backend cuda without --emulate");
  if (a.device >= 0 && !a.rank)
    return fail({}, "--device picks the GPU of one rank's process: it goes with --rank");
  SYNCOLL_CHECK(check_program_root(a.root, program.value));
  verifier::VerifyOptions vo;
  vo.root = a.root;
  auto verified = verifier::certify(program.value, vo);
  if (!verified) {
    std::cout << fmt::format("{}: not verified, so not run\n", a.file)
              << verified.error().to_text();
    return int(kCheckFailed);
  }
  const backend::ExecutableProgram executable = backend::ExecutableProgram::lower(*verified);
  backend::RunOptions ro;
  ro.size_bytes = size;
  ro.type = *type;
  ro.op = *op;
  ro.seed = a.seed;
  ro.watchdog = std::chrono::milliseconds(a.watchdog_ms);
  std::string cuda_note;
  const CollectiveSpec &spec = executable.collective();
  // One report per printed row: the CPU executor runs afresh each time; the CUDA executor checks
  // its first launch and times --iters more.
  auto next_run = [&]() -> Expected<backend::RunReport> {
    if (a.backend == "cpu")
      return backend::run_on_cpu(executable, ro);
    backend::CudaRunOptions co;
    co.run = ro;
    co.timed_launches = a.iters;
    backend::CudaReport report;
    if (a.emulate) {
      SYNCOLL_TRY(emulated, backend::run_emulated_on_cuda(executable, co));
      report = std::move(emulated);
    } else {
      backend::NcclRunOptions no;
      no.cuda = co;
      no.rank = *a.rank;
      no.id_file = a.id_file;
      no.device = a.device;
      SYNCOLL_TRY(on_nccl, backend::run_on_nccl(executable, no));
      report = std::move(on_nccl);
    }
    cuda_note = fmt::format("{}{}: {} CUDA blocks (at most {} resident), {} of {} sends put "
                            "directly; time per launch over {} launches after the checked one",
                            a.emulate ? "" : fmt::format("rank {}: ", *a.rank), report.device,
                            report.blocks, report.co_resident_blocks, executable.direct_puts(),
                            sends(executable), a.iters);
    report.run.seconds = report.seconds_per_launch;
    return report.run;
  };
  const int rows = a.backend == "cpu" ? a.iters : 1;
  for (int i = 0; i < rows; ++i) {
    SYNCOLL_TRY(run, next_run());
    if (i == 0) {
      // After the first run, which rejects a size that does not cut into elements: bad input
      // prints nothing but its one line.
      fmt::print("{}: {} on {} ranks, {} backend{}, seed {}, {} {}, watchdog {} ms\n", a.file,
                 program.value.collective(), program.value.num_ranks(), a.backend,
                 a.emulate ? " (emulated on one GPU)" : "", a.seed, a.iters,
                 a.backend == "cpu" ? "checked run(s)" : "timed launch(es)", a.watchdog_ms);
      if (!cuda_note.empty())
        fmt::print("{}\n", cuda_note);
      fmt::print("{:>12} {:>12} {:>6} {:>6} {:>10} {:>10} {:>10} {:>8}\n", "size (B)", "count",
                 "type", "redop", "time (us)", "algbw GB/s", "busbw GB/s", "#wrong");
    }
    if (!run.completed) {
      fmt::print("hung: no step completed for {} ms; where each unfinished thread block waits:\n",
                 a.watchdog_ms);
      for (const backend::BlockedBlock &b : run.blocked)
        fmt::print("  rank {} tb {} step {} (iteration {}): {}\n", b.rank.value(), b.tb.value(),
                   b.step, b.iteration, b.waiting_for);
      return int(kCheckFailed);
    }
    const double us = run.seconds * 1e6;
    const double algbw = double(size) / (us * 1e3);
    fmt::print("{:>12} {:>12} {:>6} {:>6} {:>10.1f} {:>10.3f} {:>10.3f} {:>8}\n", size,
               size / backend::data_type_bytes(*type), a.dtype, a.op, us, algbw,
               algbw * bus_bandwidth_factor(spec.kind(), spec.num_ranks()), run.mismatches);
    for (const std::string &m : run.first_mismatches)
      fmt::print("  {}\n", m);
    if (run.mismatches > 0)
      return int(kCheckFailed);
  }
  return int(kSuccess);
}

} // namespace

void add_run_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<RunArgs>();
  CLI::App *cmd = app.add_subcommand(
      "run", "execute a verified program with real data and check every output against a host "
             "reference (exit 0 correct, 1 not verified, hung or wrong, 2 bad input)");
  cmd->add_option("program", args->file, "MSCCL-IR XML file (or its JSON form)")->required();
  cmd->add_option("--backend", args->backend,
                  "where it runs: cpu (host threads, one per thread block, running the GPU "
                  "interpreter's code) or cuda (the interpreter kernel on a GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_flag("--emulate", args->emulate,
                "with --backend cuda: every rank's buffers on this one GPU, all thread blocks "
                "launched as one cooperative grid");
  cmd->add_option("--rank", args->rank,
                  "with --backend cuda: this process's rank (one process per GPU, NCCL symmetric "
                  "memory)");
  cmd->add_option("--id-file", args->id_file,
                  "with --rank: rank 0 writes NCCL's unique id here, the others wait for it (a "
                  "path that does not exist yet)");
  cmd->add_option("--device", args->device,
                  "with --rank: the CUDA device of this process (default: rank modulo devices)")
      ->check(at_least(0));
  cmd->add_option("-s,--size,--sizes", args->size,
                  "one size, as nccl-tests counts it (4096, 64KiB, 1MiB)");
  cmd->add_option("--dtype", args->dtype, "element type: i32, f32, f16 or bf16");
  cmd->add_option("--op", args->op, "reduction: sum, prod, max or min");
  cmd->add_option("--iters", args->iters,
                  "cpu: runs, each checked; cuda: launches timed after the checked one")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", args->seed, "seed of the input pattern");
  cmd->add_option("--root", args->root, "root rank of rooted collectives (default 0)")
      ->check(at_least(0));
  cmd->add_option("--watchdog-ms", args->watchdog_ms,
                  "declare the run hung after this long without progress")
      ->check(CLI::Range(10, 600000));
  cmd->callback([&result, args] { result.exit_code = exit_code_or_bad_input(run_program(*args)); });
}

} // namespace syncoll::cli
