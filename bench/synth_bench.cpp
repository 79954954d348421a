// Synthesis speed (issues 5 and 6): every DGX-1 row of SCCL Table 4 with both backends side by
// side, against the paper's time and the public msccl-tools synthesizer measured on this machine
// kind (docs/synthesis.md, "Measured"); the DGX-1 Allgather Pareto search; and with --families the
// the SAT paper's benchmark families. Usage:
//   synth_bench [--quick] [--limit SECONDS]      Table 4 and the Pareto search (300 s per row)
//   synth_bench --families [--limit SECONDS] [--backend sat|smt|both] [--only ROWS_FILE]
//                                                the families alone, the limit per instance
#include "model/topology_library.h"
#include "synth/synthesize.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <set>
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

// The SAT paper's benchmark: five collectives on seven topologies, 1-5 chunks, the
// bandwidth-optimal (least R with R = S, from the steps bound: SCCL's 0-synchronous class) and
// latency-optimal (least S with rounds left open up to S + 4) algorithms, with both backends.
int run_families(double limit, const std::vector<synth::Backend> &backends,
                 const std::set<std::string> &only) {
  struct Family {
    std::string name;
    Topology topology;
  };
  const std::vector<Family> topologies = {{"DGX-1", dgx1()},
                                          {"DGX-2", dgx2()},
                                          {"AMD8", amd8()},
                                          {"Line8", *line(8)},
                                          {"Ring8", *ring(8)},
                                          {"FullyConnected8", *fully_connected(8)},
                                          {"Hypercube3", *hypercube(3)}};
  const CollectiveKind kinds[] = {CollectiveKind::Allgather, CollectiveKind::Gather,
                                  CollectiveKind::Broadcast, CollectiveKind::Alltoall,
                                  CollectiveKind::Allreduce};
  std::printf("\nSAT paper families, limit %.0f s per instance (S, R found, \"?\" when a smaller S "
              "was unknown; times in s)\n\n",
              limit);
  std::printf("%-16s %-10s %2s %-10s", "topology", "collective", "C", "objective");
  for (synth::Backend b : backends)
    std::printf(" %16s", b == synth::Backend::Smt ? "smt" : "sat");
  std::printf("\n");
  int solved[2] = {0, 0}, total = 0;
  double slowest[2] = {0, 0};
  for (const Family &f : topologies)
    for (CollectiveKind kind : kinds)
      for (int c = 1; c <= 5; ++c)
        for (bool latency : {false, true}) {
          const std::string row = fmt::format("{} {} {} {}", f.name, collective_kind_name(kind), c,
                                              latency ? "latency" : "bandwidth");
          if (!only.empty() && !only.contains(row))
            continue;
          synth::Target target = target_of(kind);
          const int chunks = kind == CollectiveKind::Allreduce ? c * f.topology.num_ranks() : c;
          std::string cells[2];
          for (size_t b = 0; b < backends.size(); ++b) {
            synth::SynthOptions o;
            o.backend = backends[b];
            o.time_limit_s = limit;
            o.search_time_limit_s = limit; // the limit is per instance, all of its calls
            const auto start = std::chrono::steady_clock::now();
            auto r = synth::least_steps(f.topology, target, chunks, std::nullopt, latency ? 4 : 0,
                                        16, o);
            const double wall =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (r && r->found) {
              ++solved[b];
              slowest[b] = std::max(slowest[b], wall);
              char cell[64];
              std::snprintf(cell, sizeof cell, "S%d%s R%d %.2f", r->found->algorithm->num_steps(),
                            r->proven_least ? "" : "?", r->found->algorithm->total_rounds(), wall);
              cells[b] = cell;
            } else if (!r) {
              cells[b] = "error";
            } else {
              // No algorithm up to 16 steps, or the limit ran out first.
              const bool unknown = r->attempts.empty() ||
                                   r->attempts.back().verdict == synth::Verdict::Unknown ||
                                   wall >= limit;
              char cell[64];
              std::snprintf(cell, sizeof cell, "%s %.2f", unknown ? "unknown" : "none", wall);
              cells[b] = cell;
            }
          }
          ++total;
          std::printf("%-16s %-10s %2d %-10s", f.name.c_str(),
                      std::string(collective_kind_name(kind)).c_str(), c,
                      latency ? "latency" : "bandwidth");
          for (size_t b = 0; b < backends.size(); ++b)
            std::printf(" %16s", cells[b].c_str());
          std::printf("\n");
          std::fflush(stdout);
        }
  std::printf("\nsolved:");
  for (size_t b = 0; b < backends.size(); ++b)
    std::printf(" %s %d of %d (slowest solved %.2f s)",
                backends[b] == synth::Backend::Smt ? "smt" : "sat", solved[b], total, slowest[b]);
  std::printf("\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false, families = false;
  double limit = 300;
  std::vector<synth::Backend> backends = {synth::Backend::Smt, synth::Backend::Sat};
  std::set<std::string> only;
  const auto refuse = [](const std::string &what) {
    std::fprintf(stderr,
                 "synth_bench: %s; usage: synth_bench [--quick] [--families] [--limit SECONDS] "
                 "[--only ROWS_FILE] [--backend smt|sat|both]\n",
                 what.c_str());
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--quick")
      quick = true;
    else if (arg == "--families")
      families = true;
    else if (arg == "--limit" && has_value) {
      const std::string value = argv[++i];
      char *end = nullptr;
      limit = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(limit > 0))
        return refuse("--limit: '" + value + "' is not a positive number of seconds");
    } else if (arg == "--only" && has_value) {
      // Rows to run, one per line as "TOPOLOGY COLLECTIVE C OBJECTIVE" (e.g. the ones a run
      // with a shorter limit left unknown).
      const std::string path = argv[++i];
      std::ifstream in(path);
      if (!in)
        return refuse("--only: cannot read '" + path + "'");
      for (std::string line; std::getline(in, line);)
        if (!line.empty())
          only.insert(line);
    } else if (arg == "--backend" && has_value) {
      const std::string b = argv[++i];
      if (b != "smt" && b != "sat" && b != "both")
        return refuse("--backend: '" + b + "' is not smt, sat or both");
      backends.clear();
      if (b != "sat")
        backends.push_back(synth::Backend::Smt);
      if (b != "smt")
        backends.push_back(synth::Backend::Sat);
    } else if (arg == "--help") {
      std::printf("usage: synth_bench [--quick] [--families] [--limit SECONDS] [--only ROWS_FILE] "
                  "[--backend smt|sat|both]\n");
      return 0;
    } else {
      return refuse("'" + arg + "' is not an option, or its value is missing");
    }
  }
  if (families)
    return run_families(limit, backends, only);
  const Topology dgx1 = syncoll::dgx1();
  auto options_for = [&](synth::Backend b) {
    synth::SynthOptions o;
    o.backend = b;
    o.time_limit_s = limit;
    return o;
  };
  std::printf("SCCL Table 4 (DGX-1), both backends, limit %.0f s per row and backend\n\n", limit);
  std::printf("%-14s %9s %8s %9s %8s %9s %9s %10s %9s %9s %9s\n", "collective", "C/S/R", "answer",
              "smt (s)", "", "sat (s)", "paper (s)", "public (s)", "paper/smt", "paper/sat",
              "public/sat");
  int smt_slower = 0, sat_short_of_10x = 0, unsolved = 0;
  for (const Row &row : kRows) {
    if (quick && row.paper_s > 1.0)
      continue;
    const int chunks = row.kind == CollectiveKind::Alltoall ? row.chunks / 8 : row.chunks;
    const std::string csr = std::to_string(row.chunks) + "/" + std::to_string(row.steps) + "/" +
                            std::to_string(row.rounds);
    double seconds[2] = {0, 0};
    synth::Verdict verdict[2] = {synth::Verdict::Unknown, synth::Verdict::Unknown};
    int i = 0;
    for (synth::Backend b : {synth::Backend::Smt, synth::Backend::Sat}) {
      auto a = synth::synthesize(dgx1, target_of(row.kind), chunks, {row.steps, row.rounds},
                                 options_for(b));
      if (!a) {
        std::printf("error: %s\n", a.error().to_string().c_str());
        return 1;
      }
      seconds[i] = a->seconds;
      verdict[i] = a->verdict;
      ++i;
    }
    char publ[32], publ_ratio[32];
    if (row.public_s > 0) {
      std::snprintf(publ, sizeof publ, "%.1f", row.public_s);
      std::snprintf(publ_ratio, sizeof publ_ratio, "%.0f", row.public_s / seconds[1]);
    } else if (row.public_s < 0) {
      std::snprintf(publ, sizeof publ, ">%.0f", -row.public_s);
      std::snprintf(publ_ratio, sizeof publ_ratio, ">%.0f", -row.public_s / seconds[1]);
    } else {
      std::snprintf(publ, sizeof publ, "-");
      std::snprintf(publ_ratio, sizeof publ_ratio, "-");
    }
    std::printf("%-14s %9s %8s %9.2f %8s %9.3f %9.1f %10s %9.1f %9.0f %9s\n",
                std::string(collective_kind_name(row.kind)).c_str(), csr.c_str(),
                std::string(synth::verdict_name(verdict[1])).c_str(), seconds[0],
                verdict[0] == verdict[1] ? "" : synth::verdict_name(verdict[0]).data(), seconds[1],
                row.paper_s, publ, row.paper_s / seconds[0], row.paper_s / seconds[1], publ_ratio);
    unsolved += (verdict[0] != synth::Verdict::Sat) + (verdict[1] != synth::Verdict::Sat);
    smt_slower += verdict[0] != synth::Verdict::Sat || seconds[0] > row.paper_s;
    sat_short_of_10x += verdict[1] != synth::Verdict::Sat || seconds[1] * 10 > row.paper_s;
  }
  std::printf("\nrows where smt is not at least as fast as the paper: %d; rows where sat is not "
              "10x faster: %d; answers not sat within the limit: %d\n",
              smt_slower, sat_short_of_10x, unsolved);

  if (!quick)
    for (synth::Backend b : {synth::Backend::Smt, synth::Backend::Sat}) {
      const auto start = std::chrono::steady_clock::now();
      synth::ParetoOptions po;
      po.synth = options_for(b);
      auto frontier = synth::pareto(dgx1, target_of(CollectiveKind::Allgather), po);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!frontier)
        return 1;
      std::printf("DGX-1 Allgather Pareto search, %s: %zu points, %zu instances, %.2f s "
                  "(msccl-tools here: 172 s, ratio %.0f)\n",
                  b == synth::Backend::Sat ? "sat" : "smt", frontier->frontier.size(),
                  frontier->attempts.size(), wall, 172.0 / wall);
    }
  return 0;
}
