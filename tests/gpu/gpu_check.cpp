// gpu_check: the GPU checks of the bundle (scripts/gpu-bundle.sh), one executable that needs no
// library of this project's build machine on the machine it runs on.
//
//   gpu_check write-programs DIR [--conformance MANIFEST]
//                                  at bundle time: the programs the checks run, as MSCCL-IR files
//                                  (DIR/programs: every DSL example in each aliasing mode, NCCL's
//                                  rings and trees in Simple, LL and LL128, the conformance
//                                  corpus's correct programs; DIR/deadlock is the script's copy of
//                                  the verifier's deadlock example)
//   gpu_check run DIR [--cpu] [--only SUBSTRING] [--report FILE]
//                                  on the GPU machine: every program verified, lowered with direct
//                                  puts and all staged, run at three sizes (one per count-splitting
//                                  regime) with every output checked against the host reference;
//                                  the deadlock example stopped by the watchdog on its cycle; a
//                                  grid too large refused before launch; NCCL's device API on one
//                                  rank where the machine's NCCL (loaded at run time) is 2.28 or
//                                  newer. --cpu runs the same programs through the CPU executor
//                                  (what CI runs).
//
// Exit codes: 0 every check passed; 1 a wrong result; 2 bad input; 77 no GPU (and no --cpu).
#include "backend/backend.h"
#include "examples/programs/programs.h"
#include "lowering/lowering.h"
#include "model/collective_traits.h"
#include "model/mscclir.h"
#include "model/runtime_constants.h"
#include "nccl/algorithms.h"
#include "verifier/verify.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace syncoll;

namespace {

constexpr int kBadInput = 2;
constexpr int kNoGpu = 77;

bool write_file(const fs::path &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
  return bool(out);
}

// The conformance corpus's programs whose manifest entry lists no violated property (and their
// collective files), copied beside the bundle's own.
int copy_conformance(const fs::path &manifest, const fs::path &programs) {
  std::ifstream in(manifest);
  nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
  if (m.is_discarded() || !m.contains("entries")) {
    std::cerr << fmt::format("{}: not a conformance manifest\n", manifest.string());
    return -1;
  }
  int copied = 0;
  for (const auto &entry : m["entries"]) {
    if (!entry.value("violated", nlohmann::json::array()).empty())
      continue;
    std::vector<std::string> files{entry.at("file").get<std::string>()};
    if (entry.contains("collective") && entry["collective"].is_string())
      files.push_back(entry["collective"].get<std::string>());
    for (const std::string &f : files) {
      std::error_code ec;
      fs::copy_file(manifest.parent_path() / f, programs / ("conformance_" + f),
                    fs::copy_options::overwrite_existing, ec);
      if (ec) {
        std::cerr << fmt::format("{}: {}\n", (manifest.parent_path() / f).string(), ec.message());
        return -1;
      }
    }
    ++copied;
  }
  return copied;
}

// The bundle's own programs: each verified here, so that only verified programs travel.
int write_programs(const fs::path &dir, const std::optional<fs::path> &conformance) {
  const fs::path programs = dir / "programs";
  std::error_code ec;
  fs::create_directories(programs, ec);
  if (ec) {
    std::cerr << fmt::format("{}: cannot create: {}\n", programs.string(), ec.message());
    return kBadInput;
  }
  int written = 0;
  // A custom collective travels beside its program, as `syncoll lower` writes it.
  auto emit = [&](const std::string &name,
                  const tl::expected<verifier::VerifiedProgram, verifier::Report> &verified,
                  const std::optional<CollectiveSpec> &custom = std::nullopt) {
    if (!verified) {
      std::cerr << fmt::format("gpu_check: {} does not verify:\n{}\n", name,
                               verified.error().to_text());
      return false;
    }
    if (!write_file(programs / (name + ".xml"), lowering::write_deployment_xml(*verified))) {
      std::cerr << fmt::format("{}: cannot write\n", (programs / (name + ".xml")).string());
      return false;
    }
    if (custom && !write_file(programs / (name + ".collective.json"),
                              collective_to_json(*custom).dump(2) + "\n")) {
      std::cerr << fmt::format("{}: cannot write\n", name + ".collective.json");
      return false;
    }
    ++written;
    return true;
  };
  for (const examples::ProgramExample &ex : examples::program_examples())
    for (bool in_place : ex.in_place_modes) {
      examples::ExampleParams params;
      params.options.in_place = in_place;
      auto dsl = ex.build(params);
      if (!dsl) {
        std::cerr << fmt::format("gpu_check: example {}: {}\n", ex.name, dsl.error().to_string());
        return 1;
      }
      auto lowered = lowering::lower(*dsl);
      if (!lowered) {
        std::cerr << fmt::format("gpu_check: example {}: {}\n", ex.name,
                                 lowered.error().to_string());
        return 1;
      }
      const bool custom = lowered->program.collective() == "custom";
      if (!emit(fmt::format("example_{}_{}", ex.name, in_place ? "inplace" : "outofplace"),
                lowered->verified, custom ? std::optional(lowered->collective) : std::nullopt))
        return 1;
    }
  // 4 ranks on 2 channels: every protocol's tiling regimes at a few MiB, so that the CPU half
  // (CI) stays within minutes.
  const std::vector<RankId> ring{RankId(0), RankId(1), RankId(2), RankId(3)};
  const std::vector<std::vector<RankId>> rings(2, ring);
  for (Protocol protocol : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
    const std::string proto(protocol_traits(protocol).name);
    for (CollectiveKind kind :
         {CollectiveKind::Allreduce, CollectiveKind::Allgather, CollectiveKind::ReduceScatter}) {
      auto p = nccl::nccl_ring_program(kind, rings, protocol);
      if (!p || !emit(fmt::format("nccl_ring_{}_4r_2ch_{}", collective_kind_name(kind), proto),
                      verifier::certify(*p, {})))
        return 1;
    }
    auto tree = nccl::nccl_tree_allreduce_program(nccl::nccl_tree_parents(2, 2), 4, protocol, 2);
    if (!tree ||
        !emit(fmt::format("nccl_tree_allreduce_4r_2ch_{}", proto), verifier::certify(*tree, {})))
      return 1;
  }
  std::cout << fmt::format("gpu_check: {} verified programs written to {}\n", written,
                           programs.string());
  if (conformance) {
    const int copied = copy_conformance(*conformance, programs);
    if (copied < 0)
      return kBadInput;
    std::cout << fmt::format("gpu_check: {} correct programs of the conformance corpus copied\n",
                             copied);
  }
  return 0;
}

struct Row {
  std::string check;
  bool ok = false;
  std::string detail;
  bool not_run = false; ///< what this machine cannot run (detail says why): not a wrong result
  std::string_view result() const { return not_run ? "not run" : ok ? "ok" : "WRONG"; }
};

// One executor for every run: the CPU executor's threads or every rank emulated on this GPU.
Expected<backend::RunReport> run_once(const backend::ExecutableProgram &e,
                                      const backend::RunOptions &o, bool cpu) {
  if (cpu)
    return backend::run_on_cpu(e, o);
  backend::CudaRunOptions co;
  co.run = o;
  SYNCOLL_TRY(report, backend::run_emulated_on_cuda(e, co));
  return report.run;
}

// A program at three sizes, one per count-splitting regime (fewer elements than the executor's
// threads, a partial last tile, several tiles), with direct puts and all staged.
Row check_program(const fs::path &file, bool cpu) {
  Row row{file.stem().string(), false, ""};
  auto read = read_program_file(file.string());
  if (!read)
    return {row.check, false, read.error().to_string()};
  verifier::VerifyOptions vo;
  fs::path spec = file;
  spec.replace_extension(".collective.json");
  if (fs::exists(spec)) {
    auto custom = read_collective_file(spec.string());
    if (!custom)
      return {row.check, false, custom.error().to_string()};
    vo.collective = *custom;
  }
  auto verified = verifier::certify(read->value, vo);
  if (!verified)
    return {row.check, false, "does not verify: " + verified.error().to_text()};
  const Program &p = read->value;
  auto collective = vo.collective ? Expected<CollectiveSpec>(*vo.collective)
                                  : collective_for_program(p, std::nullopt);
  if (!collective)
    return {row.check, false, collective.error().to_string()};
  const int64_t unit = int64_t(nccl_tests_chunks(*collective)) * 4;
  const int64_t tile = protocol_traits(p.protocol()).executor_tile_bytes;
  const std::pair<backend::DataType, backend::ReduceOp> kinds[] = {
      {backend::DataType::I32, backend::ReduceOp::Sum},
      {backend::DataType::F32, backend::ReduceOp::Max},
      {backend::DataType::F16, backend::ReduceOp::Sum}};
  std::vector<int64_t> sizes{unit * 8, unit * (tile / 4 / 4 / 4 + 1), unit * (tile / 4 + 1)};
  // A program for a size window none of the three sizes is in runs at the window's top (or its
  // bottom, when it has none): the largest size in it that cuts into elements.
  const ProgramDraft &d = p.draft();
  auto inside = [&](int64_t size) {
    return size >= d.min_bytes && (d.max_bytes == 0 || size <= d.max_bytes);
  };
  if (std::none_of(sizes.begin(), sizes.end(), inside)) {
    const int64_t edge =
        d.max_bytes > 0 ? d.max_bytes / unit * unit : (d.min_bytes + unit - 1) / unit * unit;
    if (edge > 0 && inside(edge))
      sizes = {edge};
  }
  // Every rank's buffers, its host reference and the check share one memory: a size whose
  // buffers over all ranks pass the executor's budget is left out and counted. On host threads
  // 96 MiB; on the GPU 2 GiB (a 64-rank program's several-tiles size is 8 GiB, whose host
  // reference and check alone took most of run.sh's 4 minutes on an H200).
  const int64_t budget_bytes = cpu ? int64_t(96) << 20 : int64_t(2) << 30;
  int runs = 0, outside = 0, over_budget = 0;
  std::optional<std::string> not_resident;
  for (bool direct : {true, false}) {
    const backend::ExecutableProgram e =
        backend::ExecutableProgram::lower(*verified, backend::LoweringOptions{direct});
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (!inside(sizes[i])) {
        ++outside; // the program declares it does not run at this size
        continue;
      }
      if (sizes[i] * p.num_ranks() > budget_bytes) {
        ++over_budget;
        continue;
      }
      backend::RunOptions o;
      o.size_bytes = sizes[i];
      o.type = kinds[i].first;
      o.op = kinds[i].second;
      o.seed = 11;
      if (!cpu) {
        // Every rank's thread blocks in one grid: a program with more than the GPU holds at once
        // runs on as many GPUs as it has ranks, not here (the CPU half runs it).
        auto co_resident = backend::co_resident_blocks(o.type, o.op);
        if (!co_resident)
          return {row.check, false, co_resident.error().to_string()};
        if (int(e.blocks().size()) > *co_resident) {
          not_resident = fmt::format(
              "not runnable under single-GPU emulation: its {} ranks have {} thread blocks, "
              "this GPU holds {} at once (the CPU half runs it)",
              p.num_ranks(), e.blocks().size(), *co_resident);
          continue;
        }
      }
      auto run = run_once(e, o, cpu);
      const std::string where =
          fmt::format("{} B {} {} direct puts {}", sizes[i], backend::data_type_name(o.type),
                      backend::reduce_op_name(o.op), direct ? "on" : "off");
      if (!run)
        return {row.check, false, where + ": " + run.error().to_string()};
      if (!run->completed)
        return {row.check, false, where + ": hung (the watchdog stopped it)"};
      if (run->mismatches > 0)
        return {row.check, false,
                fmt::format("{}: {} wrong elements, first {}", where, run->mismatches,
                            run->first_mismatches.empty() ? "" : run->first_mismatches.front())};
      ++runs;
    }
  }
  if (runs == 0 && not_resident)
    return {row.check, true, *not_resident, true};
  if (runs == 0 && over_budget == 0)
    return {row.check, false, "no size of the three is inside its size window"};
  row.ok = true;
  row.detail = fmt::format("{} runs correct ({} sizes x direct puts on, off)", runs, sizes.size());
  if (outside)
    row.detail += fmt::format("; {} outside its size window", outside);
  if (over_budget)
    row.detail += fmt::format("; {} over the {} MiB of buffers this half allows{}", over_budget,
                              budget_bytes >> 20, cpu ? " (the GPU runs them)" : "");
  if (not_resident)
    row.detail += "; an element type's kernel " + *not_resident;
  return row;
}

// The verifier's deadlock example with the gate bypassed: the executor must stop it, and every
// thread block left waiting must be on the counterexample's wait-for cycle.
Row check_deadlock(const fs::path &file, bool cpu) {
  Row row{"deadlock " + file.stem().string(), false, ""};
  auto read = read_program_file(file.string());
  if (!read)
    return {row.check, false, read.error().to_string()};
  const Program &p = read->value;
  const verifier::Report report = verifier::verify(p, {});
  const verifier::Verdict &deadlock = report.verdict(verifier::Property::DeadlockFreedom);
  if (deadlock.kind != verifier::VerdictKind::Violated)
    return {row.check, false, "the verifier no longer finds its deadlock"};
  auto collective = collective_for_program(p, std::nullopt);
  if (!collective)
    return {row.check, false, collective.error().to_string()};
  backend::RunOptions o;
  o.size_bytes = int64_t(nccl_tests_chunks(*collective)) * 4 * 16;
  o.watchdog = std::chrono::milliseconds(200);
  auto run = run_once(backend::detail::lower_unchecked(p, *collective), o, cpu);
  if (!run)
    return {row.check, false, run.error().to_string()};
  if (run->completed || run->blocked.empty())
    return {row.check, false, "ran to the end; the verifier says it deadlocks"};
  const auto &cycle = std::get<verifier::DeadlockCounterexample>(deadlock.counterexample).cycle;
  for (const backend::BlockedBlock &b : run->blocked) {
    const bool named = std::any_of(cycle.begin(), cycle.end(), [&](const verifier::Wait &w) {
      return w.waiter.rank == b.rank && w.waiter.tb == b.tb;
    });
    if (!named)
      return {row.check, false,
              fmt::format("rank {} tb {} waits for {}, off the counterexample's cycle",
                          b.rank.value(), b.tb.value(), b.waiting_for)};
  }
  row.ok = true;
  row.detail = fmt::format("stopped by the watchdog; {} thread blocks waiting, all on the "
                           "counterexample's cycle of {}",
                           run->blocked.size(), cycle.size());
  return row;
}

// 32 ranks x 32 rings (NCCL's most channels): 1024 thread blocks, more than a GPU holds at
// once; refused before launch.
Row check_grid_refused() {
  Row row{"grid too large", false, ""};
  std::vector<RankId> ring;
  for (int r = 0; r < 32; ++r)
    ring.emplace_back(r);
  auto p = nccl::nccl_ring_program(CollectiveKind::Allgather,
                                   std::vector<std::vector<RankId>>(32, ring), Protocol::Simple);
  if (!p)
    return {row.check, false, p.error().to_string()};
  auto verified = verifier::certify(*p, {});
  if (!verified)
    return {row.check, false, verified.error().to_text()};
  backend::CudaRunOptions o;
  o.run.size_bytes = 32 * 4 * 32;
  auto run = backend::run_emulated_on_cuda(backend::ExecutableProgram::lower(*verified), o);
  if (run)
    return {row.check, false, "a 1024-block grid was launched"};
  row.ok = run.error().to_string().find("holds at once") != std::string::npos;
  row.detail = run.error().to_string();
  return row;
}

// NCCL's first warning in the file NCCL_DEBUG_FILE named, or nothing.
std::optional<std::string> nccl_warning(const fs::path &log) {
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);)
    if (auto at = line.find("NCCL WARN "); at != std::string::npos)
      return line.substr(at + 10);
  return std::nullopt;
}

// NCCL's device API on one rank with the NCCL this machine has (loaded at run time: the library
// path's, or SYNCOLL_NCCL_LIBRARY's). Not run, saying why, without a device API this build can
// call, or where NCCL itself says its communicator has no symmetric memory (NCCL 2.28.3 on an
// H200 virtual machine did: the device API needs CUDA VMM memory every peer maps). NCCL's
// warnings go to a file of their own (unless NCCL_DEBUG is already set), so that the row can
// carry NCCL's reason rather than "invalid usage".
Row check_nccl_device_api() {
  const std::string check = "NCCL device API (one rank)";
  auto release = backend::nccl_release();
  if (!release)
    return {check, true, release.error().to_string(), true};
  const fs::path log =
      fs::temp_directory_path() / fmt::format("syncoll-gpu-check-nccl-{}.log", ::getpid());
  if (!std::getenv("NCCL_DEBUG")) {
    ::setenv("NCCL_DEBUG", "WARN", 1);
    ::setenv("NCCL_DEBUG_FILE", log.c_str(), 1);
  }
  auto api = backend::nccl_device_api_check();
  const std::optional<std::string> warning = nccl_warning(log);
  std::error_code ec;
  fs::remove(log, ec);
  if (!api) {
    std::string why = api.error().to_string();
    const bool unavailable = why.find("has no device API") != std::string::npos;
    const bool no_symmetric_memory =
        warning && warning->find("does not support symmetric memory") != std::string::npos;
    if (warning)
      why += fmt::format(" (NCCL {}: {})", *release, *warning);
    return {check, unavailable || no_symmetric_memory, why, unavailable || no_symmetric_memory};
  }
  return {check, true,
          "NCCL " + *release +
              ": symmetric window, device communicator, LSA barrier and "
              "pointer in a kernel, the values read back"};
}

// A detail as one table cell: a verifier's report spans lines (and a rule per thread block).
std::string one_line(const std::string &text) {
  constexpr size_t kMost = 400;
  std::string out;
  for (char c : text)
    out += c == '\n' ? std::string("; ") : c == '|' ? std::string("/") : std::string(1, c);
  if (out.size() > kMost)
    out = out.substr(0, kMost) + " ...";
  return out;
}

std::vector<fs::path> files_in(const fs::path &dir, const std::string &only) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".xml" &&
        entry.path().filename().string().find(only) != std::string::npos)
      out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

int run_checks(const fs::path &dir, bool cpu, const std::string &only, const fs::path &report) {
  if (!fs::is_directory(dir / "programs")) {
    std::cerr << fmt::format("{}: no programs folder (gpu_check write-programs makes one)\n",
                             (dir / "programs").string());
    return kBadInput;
  }
  const std::vector<fs::path> programs = files_in(dir / "programs", only);
  const std::vector<fs::path> deadlocks = files_in(dir / "deadlock", only);
  if (programs.empty() && deadlocks.empty()) {
    std::cerr << fmt::format("gpu_check: no program in {} matches '{}'\n", dir.string(), only);
    return kBadInput;
  }
  if (!cpu) {
    if (auto why = backend::cuda_unavailable()) {
      while (!why->empty() && why->back() == '\n')
        why->pop_back();
      std::cout << "gpu_check: no GPU: " << *why << "\n";
      return kNoGpu;
    }
  }
  const std::string executor = cpu ? "CPU executor (host threads)" : backend::cuda_device_facts();
  std::cout << "gpu_check: " << executor << "\n";
  std::vector<Row> rows;
  // A row as it finishes, with its seconds (stdout only; the report holds no times): the whole
  // run takes minutes, and the slow rows are what bound run.sh's 4.
  auto since = std::chrono::steady_clock::now();
  auto note = [&](Row row) {
    const auto now = std::chrono::steady_clock::now();
    std::cout << fmt::format("{:<7} {:<58} {} [{:.1f} s]", row.result(), row.check, row.detail,
                             std::chrono::duration<double>(now - since).count())
              << std::endl;
    since = now;
    rows.push_back(std::move(row));
  };
  for (const fs::path &file : programs)
    note(check_program(file, cpu));
  for (const fs::path &file : deadlocks)
    note(check_deadlock(file, cpu));
  if (!cpu && only.empty()) {
    note(check_grid_refused());
    note(check_nccl_device_api());
  }
  const auto wrong = std::count_if(rows.begin(), rows.end(), [](const Row &r) { return !r.ok; });
  std::string table = fmt::format("| check | executor | result | detail |\n| --- | --- | --- | --- "
                                  "|\n");
  for (const Row &r : rows)
    table +=
        fmt::format("| {} | {} | {} | {} |\n", r.check, executor, r.result(), one_line(r.detail));
  if (!report.empty() && !write_file(report, table)) {
    std::cerr << fmt::format("{}: cannot write the report\n", report.string());
    return kBadInput;
  }
  std::cout << fmt::format("gpu_check: {} checks, {} wrong\n", rows.size(), wrong);
  return wrong == 0 ? 0 : 1;
}

int usage(const std::string &why) {
  std::cerr << "gpu_check: " << why
            << "\nusage: gpu_check write-programs DIR [--conformance MANIFEST] | gpu_check run "
               "DIR [--cpu] [--only SUBSTRING] [--report FILE]\n";
  return kBadInput;
}

} // namespace

int main(int argc, char **argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    usage("the bundle's GPU checks");
    return 0;
  }
  if (args.size() == 2 && args[0] == "write-programs")
    return write_programs(args[1], std::nullopt);
  if (args.size() == 4 && args[0] == "write-programs" && args[2] == "--conformance")
    return write_programs(args[1], fs::path(args[3]));
  if (args.size() < 2 || args[0] != "run")
    return usage("expected a command");
  bool cpu = false;
  std::string only;
  fs::path report;
  for (size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--cpu")
      cpu = true;
    else if (args[i] == "--only" && i + 1 < args.size())
      only = args[++i];
    else if (args[i] == "--report" && i + 1 < args.size())
      report = args[++i];
    else
      return usage("unknown option '" + args[i] + "'");
  }
  return run_checks(args[1], cpu, only, report);
}
