// Synthesized schedules of 16 to 1,024 GPUs through lowering by connection and the verifier: wall
// time, peak memory (each row in a process of its own), thread blocks per rank, channels, steps
// per thread block and the verdict; where the program is small enough to simulate, its time
// against the schedule's own cost (steps x alpha + share x ns per byte). The GC3 passes beside
// it on 16 ranks, the largest they lower.
//
//   ./build/default/bench/lowering_bench [--quick]
#include "bench/quick_flag.h"
#include "lowering/by_connection.h"
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "synth/cluster.h"
#include "synth/scale_choice.h"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace syncoll::bench {
namespace {

/// A schedule as `synth scale` makes it by default, and the cost it plans for a size.
struct Schedule {
  Algorithm algorithm;
  Fraction cost; ///< ns per byte of one rank's share, over all steps
  int pieces = 1;
};

struct Row {
  std::string name;
  std::function<Expected<Topology>()> topology;
  CollectiveKind kind;
  std::optional<std::vector<int>> mesh_shape;
  std::optional<int> pieces; ///< -C; default: synth scale's
  bool quick;                ///< in --quick
  bool gc3;                  ///< also lower through the GC3 passes
  bool simulate;
};

Expected<Schedule> schedule_of(const Row &row, const Topology &t) {
  if (auto cluster = synth::box_cluster(t)) {
    const int pieces = row.pieces.value_or(synth::default_cluster_pieces(*cluster));
    SYNCOLL_TRY(c, synth::box_cluster_collective(t, row.kind,
                                                 synth::default_cluster_steps(t.num_ranks()),
                                                 pieces, synth::ClusterPlanGoal::StepSynchronous));
    return Schedule{synth::cluster_collective_algorithm(c, t), c.cost, pieces};
  }
  synth::ScaleRequest request;
  request.pieces = row.pieces;
  request.mesh_shape = row.mesh_shape;
  SYNCOLL_TRY(choice, synth::choose_direct_schedule(t, row.kind, request));
  return Schedule{std::move(choice.schedule.algorithm), choice.schedule.cost, choice.pieces};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string verdict_of(const lowering::LoweredAlgorithm &l) {
  if (l.verified)
    return "verified";
  const verifier::Report &r = l.verified.error();
  if (r.verdict(verifier::Property::Resources).kind == verifier::VerdictKind::Violated &&
      !l.advice.empty())
    return "resources: " + l.advice.front().substr(0, l.advice.front().find(':'));
  return "FAILS: " + r.to_text().substr(0, 60);
}

// The row's cells after the name, computed in this (child) process.
std::string run_row(const Row &row) {
  auto t = row.topology();
  if (!t)
    return "topology: " + t.error().to_string();
  auto schedule = schedule_of(row, *t);
  if (!schedule)
    return fmt::format("{:>6} schedule: {}", t->num_ranks(),
                       schedule.error().items().front().message);
  const int n = t->num_ranks();
  const int chunk_factor =
      row.kind == CollectiveKind::Allreduce ? n * schedule->pieces : schedule->pieces;
  if (auto fits = fits_collective_model(row.kind, n, chunk_factor); !fits)
    return fmt::format("{:>6} {}", n, fits.error().items().front().message);
  auto spec = make_collective(row.kind, n, chunk_factor);
  if (!spec)
    return spec.error().to_string();
  std::string gc3 = "-";
  if (row.gc3) {
    const auto start = std::chrono::steady_clock::now();
    auto dsl = lowering::algorithm_to_dsl(schedule->algorithm, *t, *spec);
    auto lowered = dsl ? lowering::lower(*dsl) : tl::unexpected(dsl.error());
    if (!lowered)
      gc3 = fmt::format("fails: {}", lowered.error().items().front().message.substr(0, 40));
    else
      gc3 = fmt::format("{:.2f} s, {} tb/rank, {} ch", seconds_since(start),
                        lowered->program.ranks().front().thread_blocks.size(),
                        lowered->program.num_channels());
  }
  const auto start = std::chrono::steady_clock::now();
  auto lowered = lowering::lower_by_connection(schedule->algorithm, *t, *spec);
  const double seconds = seconds_since(start);
  if (!lowered)
    return fmt::format("{:>6} lowering fails: {}", n, lowered.error().to_string());
  const lowering::ConnectionLoweringStats &s = lowered->stats;
  std::string timing = "-";
  if (row.simulate) {
    const int64_t bytes = int64_t(256) << 20;
    const double planned_us =
        synth::planned_ns(*t, schedule->algorithm.num_steps(), schedule->cost, double(bytes) / n) /
        1000;
    simulator::ProgramSimOptions o;
    o.size_bytes = bytes;
    auto sim = simulator::simulate_program(lowered->program, *t, o);
    if (sim && !sim->deadlocked) {
      const double us = double(sim->result.completion) / 1e6;
      timing =
          fmt::format("{:.1f} / {:.1f} us ({:+.2f}%)", us, planned_us, 100 * (us / planned_us - 1));
    }
  }
  return fmt::format("{:>6} {:>9} {:>8.3f} {{rss}} {:>7} {:>4} {:>8}  {:<44} {:<28} {}", n,
                     s.transfers, seconds, s.max_thread_blocks, lowered->program.num_channels(),
                     s.longest_thread_block, verdict_of(*lowered), timing, gc3);
}

// Runs the row in a child process and reports its cells with the child's peak resident memory.
std::string run_isolated(const Row &row) {
  int fds[2];
  if (pipe(fds) != 0)
    return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    const std::string cells = run_row(row);
    const ssize_t wrote = write(fds[1], cells.data(), cells.size());
    _exit(wrote == ssize_t(cells.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string cells;
  char buffer[4096];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;)
    cells.append(buffer, size_t(got));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return cells + " (the row's process failed)";
  const std::string rss = fmt::format("{:>8.0f}", double(usage.ru_maxrss) / 1024);
  if (const size_t at = cells.find("{rss}"); at != std::string::npos)
    cells.replace(at, 5, rss);
  return cells;
}

} // namespace
} // namespace syncoll::bench

int main(int argc, char **argv) {
  using namespace syncoll;
  const bool quick = bench::quick_flag(argc, argv, "lowering_bench");
  const auto torus = [](int w, int h) { return [=] { return torus2d(w, h); }; };
  const auto mesh = [](int w, int h) { return [=] { return mesh2d(w, h); }; };
  const auto boxes = [](int n) {
    return [=] { return multinode(n, dgx_h100(), 8, BytesPerNs{50.0}); };
  };
  using K = CollectiveKind;
  const std::vector<bench::Row> rows = {
      {"torus 4x4 allgather", torus(4, 4), K::Allgather, {}, {}, true, true, true},
      {"torus 4x4 reducescatter", torus(4, 4), K::ReduceScatter, {}, {}, true, true, true},
      {"torus 4x4 allreduce", torus(4, 4), K::Allreduce, {}, {}, true, true, true},
      {"torus 8x8 allgather", torus(8, 8), K::Allgather, {}, {}, true, false, true},
      {"torus 8x8 allgather -C 1", torus(8, 8), K::Allgather, {}, 1, true, false, true},
      {"torus 8x8 reducescatter", torus(8, 8), K::ReduceScatter, {}, {}, false, false, true},
      {"torus 8x8 allreduce", torus(8, 8), K::Allreduce, {}, {}, false, false, true},
      {"torus 32x32 allgather", torus(32, 32), K::Allgather, {}, {}, false, false, false},
      {"torus 32x32 allgather -C 1", torus(32, 32), K::Allgather, {}, 1, false, false, false},
      {"torus 32x32 reducescatter -C 1",
       torus(32, 32),
       K::ReduceScatter,
       {},
       1,
       false,
       false,
       false},
      {"torus 32x32 allreduce", torus(32, 32), K::Allreduce, {}, 1, false, false, false},
      {"mesh 32x32 allgather (paced)",
       mesh(32, 32),
       K::Allgather,
       std::vector<int>{32, 32},
       {},
       false,
       false,
       false},
      {"mesh 32x32 allgather -C 1", mesh(32, 32), K::Allgather, std::vector<int>{32, 32}, 1, false,
       false, false},
      {"DGX H100 x128 allgather", boxes(128), K::Allgather, {}, {}, false, false, false},
      {"DGX H100 x128 allgather -C 1", boxes(128), K::Allgather, {}, 1, false, false, false},
  };
  fmt::print("Lowering by connection: synth scale's schedules to verified programs (each row in "
             "its own process; simulated at 256 MiB against the schedule's own cost)\n");
  fmt::print("{:<32} {:>6} {:>9} {:>8} {:>8} {:>7} {:>4} {:>8}  {:<44} {:<28} {}\n", "schedule",
             "GPUs", "sends", "lower s", "peak MiB", "tb/rank", "ch", "steps/tb", "verdict",
             "simulated / planned", "GC3 passes");
  for (const bench::Row &row : rows) {
    if (quick && !row.quick)
      continue;
    std::fprintf(stderr, "lowering_bench: %s ...\n", row.name.c_str());
    fmt::print("{:<32} {}\n", row.name, bench::run_isolated(row));
    std::fflush(stdout);
  }
  fmt::print("(lower s: lowering and the verifier together; a program past the executor's limits "
             "is decided by its static rules alone)\n");
  return 0;
}
