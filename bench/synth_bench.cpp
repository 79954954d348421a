// Synthesis speed (issue 5): every DGX-1 row of SCCL Table 4, our time against the paper's and
// against the public msccl-tools synthesizer measured on this machine kind (reference/
// synthesis.md 2.1), and the DGX-1 Allgather Pareto search. Usage:
//   synth_bench [--quick] [--limit SECONDS]     (default limit 300 s per row)
#include "model/topology_library.h"
#include "synth/synthesize.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace syncoll;

struct Row {
  CollectiveKind kind;
  int chunks, steps, rounds;
  double paper_s;  ///< SCCL Table 4
  double public_s; ///< msccl-tools here; 0: not measured; negative: not solved in -public_s
};

// Allreduce C counts the whole buffer (8 x the ReduceScatter/Allgather C); the public tool's
// Allreduce time is its ReduceScatter plus its Allgather. Table 4 times its Allgather and
// ReduceScatter rows together, likewise Broadcast/Reduce and Gather/Scatter.
const std::vector<Row> kRows = {
    {CollectiveKind::Allgather, 1, 2, 2, 0.3, 0.3},
    {CollectiveKind::Allgather, 2, 3, 3, 0.8, 0.6},
    {CollectiveKind::Allgather, 3, 4, 4, 1.5, 1.6},
    {CollectiveKind::Allgather, 4, 5, 5, 2.3, 5.6},
    {CollectiveKind::Allgather, 5, 6, 6, 3.3, 15.8},
    {CollectiveKind::Allgather, 6, 7, 7, 4.6, 27.9},
    {CollectiveKind::Allgather, 6, 3, 7, 6.6, 46.5},
    {CollectiveKind::Allgather, 2, 2, 3, 0.9, 0.7},
    {CollectiveKind::ReduceScatter, 1, 2, 2, 0.3, 0.3},
    {CollectiveKind::ReduceScatter, 2, 3, 3, 0.8, 0.5},
    {CollectiveKind::ReduceScatter, 3, 4, 4, 1.5, 1.4},
    {CollectiveKind::ReduceScatter, 4, 5, 5, 2.3, 6.6},
    {CollectiveKind::ReduceScatter, 5, 6, 6, 3.3, 14.6},
    {CollectiveKind::ReduceScatter, 6, 7, 7, 4.6, 28.2},
    {CollectiveKind::ReduceScatter, 6, 3, 7, 6.6, 43.8},
    {CollectiveKind::ReduceScatter, 2, 2, 3, 0.9, 0.6},
    {CollectiveKind::Allreduce, 8, 4, 4, 0.3, 0.7},
    {CollectiveKind::Allreduce, 16, 6, 6, 0.6, 0},
    {CollectiveKind::Allreduce, 24, 8, 8, 1.3, 0},
    {CollectiveKind::Allreduce, 32, 10, 10, 2.9, 0},
    {CollectiveKind::Allreduce, 40, 12, 12, 5.6, 0},
    {CollectiveKind::Allreduce, 48, 14, 14, 12.8, 56.0},
    {CollectiveKind::Allreduce, 48, 6, 14, 23.0, 90.0},
    {CollectiveKind::Allreduce, 16, 4, 6, 0.8, 0},
    {CollectiveKind::Broadcast, 2, 2, 2, 0.1, 0},
    {CollectiveKind::Broadcast, 6, 3, 3, 0.3, 0},
    {CollectiveKind::Broadcast, 12, 4, 4, 1.0, 0},
    {CollectiveKind::Broadcast, 18, 5, 5, 8.5, 0},
    {CollectiveKind::Broadcast, 6, 3, 5, 0.9, 0},
    {CollectiveKind::Reduce, 2, 2, 2, 0.1, 0},
    {CollectiveKind::Reduce, 6, 3, 3, 0.3, 0},
    {CollectiveKind::Reduce, 12, 4, 4, 1.0, 0},
    {CollectiveKind::Reduce, 18, 5, 5, 8.5, 0},
    {CollectiveKind::Reduce, 6, 3, 5, 0.9, 0},
    {CollectiveKind::Gather, 1, 2, 2, 0.3, 0},
    {CollectiveKind::Gather, 2, 3, 3, 0.9, 0},
    {CollectiveKind::Gather, 3, 4, 4, 1.6, 0},
    {CollectiveKind::Gather, 4, 5, 5, 2.7, 0},
    {CollectiveKind::Gather, 5, 6, 6, 3.8, 0},
    {CollectiveKind::Gather, 6, 7, 7, 6.0, 0},
    {CollectiveKind::Gather, 6, 3, 7, 11.4, 0},
    {CollectiveKind::Scatter, 1, 2, 2, 0.3, 0},
    {CollectiveKind::Scatter, 6, 7, 7, 6.0, 0},
    {CollectiveKind::Scatter, 6, 3, 7, 11.4, 0},
    // Alltoall C counts chunks per rank: 8 x the chunks per (source, destination) pair. The
    // table's 2/2/3 row has C = 2, which is no such multiple, and is left out.
    {CollectiveKind::Alltoall, 8, 3, 3, 2.6, 7.9},
    {CollectiveKind::Alltoall, 8, 2, 3, 3.0, 0},
    {CollectiveKind::Alltoall, 24, 2, 8, 24.3, 143.7},
    {CollectiveKind::Alltoall, 24, 8, 8, 133.7, -1200},
};

synth::Target target_of(CollectiveKind kind) {
  synth::Target t;
  t.kind = kind;
  if (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce ||
      kind == CollectiveKind::Gather || kind == CollectiveKind::Scatter)
    t.root = 0;
  return t;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  double limit = 300;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
      limit = std::stod(argv[++i]);
  }
  const Topology dgx1 = syncoll::dgx1();
  synth::SynthOptions options;
  options.backend = synth::Backend::Smt;
  options.time_limit_s = limit;
  std::printf("SCCL Table 4 (DGX-1), SMT backend (z3), limit %.0f s per row\n\n", limit);
  std::printf("%-14s %9s %8s %10s %9s %10s %11s %11s\n", "collective", "C/S/R", "answer",
              "ours (s)", "paper (s)", "public (s)", "paper/ours", "public/ours");
  int slower_than_paper = 0, unsolved = 0;
  for (const Row &row : kRows) {
    if (quick && row.paper_s > 1.0)
      continue;
    const int chunks = row.kind == CollectiveKind::Alltoall ? row.chunks / 8 : row.chunks;
    auto a = synth::synthesize(dgx1, target_of(row.kind), chunks, {row.steps, row.rounds}, options);
    if (!a) {
      std::printf("error: %s\n", a.error().to_string().c_str());
      return 1;
    }
    const std::string csr = std::to_string(row.chunks) + "/" + std::to_string(row.steps) + "/" +
                            std::to_string(row.rounds);
    const double ours = a->seconds;
    char publ[32], publ_ratio[32];
    if (row.public_s > 0) {
      std::snprintf(publ, sizeof publ, "%.1f", row.public_s);
      std::snprintf(publ_ratio, sizeof publ_ratio, "%.1f", row.public_s / ours);
    } else if (row.public_s < 0) {
      std::snprintf(publ, sizeof publ, ">%.0f", -row.public_s);
      std::snprintf(publ_ratio, sizeof publ_ratio, ">%.1f", -row.public_s / ours);
    } else {
      std::snprintf(publ, sizeof publ, "-");
      std::snprintf(publ_ratio, sizeof publ_ratio, "-");
    }
    std::printf("%-14s %9s %8s %10.2f %9.1f %10s %11.1f %11s\n",
                std::string(collective_kind_name(row.kind)).c_str(), csr.c_str(),
                std::string(synth::verdict_name(a->verdict)).c_str(), ours, row.paper_s, publ,
                row.paper_s / ours, publ_ratio);
    if (a->verdict != synth::Verdict::Sat) {
      ++unsolved;
      continue;
    }
    slower_than_paper += ours > row.paper_s;
  }
  std::printf("\nrows slower than the paper: %d; rows not solved within the limit: %d\n",
              slower_than_paper, unsolved);

  if (!quick) {
    const auto start = std::chrono::steady_clock::now();
    synth::ParetoOptions po;
    po.synth = options;
    auto frontier = synth::pareto(dgx1, target_of(CollectiveKind::Allgather), po);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!frontier)
      return 1;
    std::printf("\nDGX-1 Allgather Pareto search: %zu points, %zu instances, %.1f s (msccl-tools "
                "here: 172 s, ratio %.1f)\n",
                frontier->frontier.size(), frontier->attempts.size(), wall, 172.0 / wall);
  }
  return 0;
}
