// Simulator speed, six tables: NCCL's ring and tree streamed step by step (the peer's 4096-rank
// ring, and 8192 GPUs on a fat tree); ring Allreduce of 256 MiB per rank over 8 to 4096 ranks on
// a bidirectional ring of 50 GB/s, 500 ns links, the setting in which ASTRA-sim's analytical
// backend was measured on this machine kind (docs/references.md, ASTRA-sim: 9.0 s and 67 M events
// for 4096 ranks); a direct Alltoall routed hop by hop against the same peer; a congestion-heavy
// direct Alltoall through a switch; direct Alltoall across fat trees of switches; and the ring
// Allreduce as a thread-block program (its steps held as runs; Mevents/s is the program engine's
// rate, one event per step). Peak MiB is each row's own resident high-water mark.
//
//   ./build/ci/bench/simulator_bench [--quick] [streamed|ring-allreduce|ring-alltoall|congested|
//                                               fat-tree|program ...]
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "nccl/steps.h"
#include "simulator/algorithm_sim.h"
#include "simulator/network.h"
#include "simulator/program_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <malloc.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace syncoll;

long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

// The resident high-water mark starts again from what is resident now (freed heap handed back
// first), so that each row's peak is its own (Linux: clear_refs 5).
void reset_peak() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
}

// Wall seconds of `run()`; the peak memory from here on is the row's.
template <typename F> double seconds(F &&run) {
  reset_peak();
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_mib() {
  return double(peak_rss_kib()) / 1024.0;
}

constexpr int64_t kBytes = int64_t(256) << 20;

// Ring Allreduce, generated step by step: reduce-scatter then allgather, rank r sending to r+1.
class RingAllreduce final : public simulator::StepSource {
public:
  explicit RingAllreduce(int n) : n_(n) {}
  int num_steps() const override { return 2 * (n_ - 1); }
  void sends(int step, std::vector<Send> &out) const override {
    out.clear();
    const bool gather = step >= n_ - 1;
    const int s = gather ? step - (n_ - 1) : step;
    for (int r = 0; r < n_; ++r) {
      const int chunk = (((gather ? r + 1 - s : r - s) % n_) + n_) % n_;
      out.push_back({ChunkId(chunk), RankId(r), RankId((r + 1) % n_),
                     gather ? SendOp::Copy : SendOp::Reduce});
    }
  }

private:
  int n_;
};

// ASTRA-sim's analytical backend on the same ring Allreduce (docs/references.md).
bool ring_allreduce_table(bool quick) {
  struct Peer {
    int ranks;
    double astra_seconds;
  };
  const std::vector<Peer> cases =
      quick ? std::vector<Peer>{{8, 0.0005}, {64, 0.003}}
            : std::vector<Peer>{{8, 0.0005}, {64, 0.003}, {512, 0.12}, {4096, 9.0}};
  std::printf("ring Allreduce, 256 MiB per rank, ring of 50 GB/s and 500 ns links "
              "(step-synchronous; ASTRA-sim wall times for <1 ms runs shown as 0.0005 s)\n\n");
  std::printf("%6s %12s %12s %14s %6s %10s %10s %8s %14s %14s %10s\n", "ranks", "traversals",
              "events", "simulated ms", "exact", "wall s", "astra s", "speedup", "traversals/s",
              "events/s", "peak MiB");
  for (const Peer &c : cases) {
    const Topology t = *ring(c.ranks);
    const int64_t chunk = kBytes / c.ranks;
    Expected<simulator::SimulationResult> r = tl::unexpected(Diagnostics{});
    const double wall =
        seconds([&] { r = simulator::simulate_steps(RingAllreduce(c.ranks), t, chunk, 1.0); });
    if (!r)
      return false;
    // 2(N-1)(alpha + chunk / B), alpha = 500 ns, B = 50 GB/s.
    const simulator::Picoseconds hop = 500'000 + simulator::transfer_ps(chunk, 50.0);
    const bool exact = r->completion == 2 * (c.ranks - 1) * hop;
    const double traversals = 2.0 * (c.ranks - 1) * c.ranks;
    std::printf("%6d %12.0f %12llu %14.3f %6s %10.3f %10.4f %8.1f %14.3g %14.3g %10.1f\n", c.ranks,
                traversals, static_cast<unsigned long long>(r->events), double(r->completion) / 1e9,
                exact ? "yes" : "NO", wall, c.astra_seconds, c.astra_seconds / wall,
                traversals / wall, double(r->events) / wall, peak_mib());
    if (!exact)
      return false;
  }
  std::printf("\n(ASTRA-sim counts two events per traversal, an arrival and a link-free event; "
              "here a link's free time is a number, not an event, so there is one event per "
              "traversal. traversals/s compares like with like.)\n\n");
  return true;
}

// The peer's hop-by-hop network on the same problem: every rank sends 1 MiB to every other over
// shortest routes of a bidirectional ring of 500 ns, 50 GiB/s links, all injected at t = 0
// (docs/references.md). The busiest link carries 8256 chunks: 161.25 ms is also the bound.
bool ring_alltoall_table(bool quick) {
  std::printf("direct Alltoall over shortest routes, bidirectional ring, 1 MiB chunks, 500 ns and "
              "50 GiB/s links, hop-by-hop booking\n\n");
  std::printf("%6s %12s %14s %14s %8s %10s %10s %8s %10s\n", "ranks", "transfers", "simulated ms",
              "peer ms", "error", "wall s", "peer s", "speedup", "peak MiB");
  struct RingPeer {
    int ranks;
    double peer_ms; ///< 0: no peer figure (the quick run)
    double peer_seconds;
  };
  const std::vector<RingPeer> ring_peers =
      quick ? std::vector<RingPeer>{{16, 0, 0}} : std::vector<RingPeer>{{256, 161.25, 3.1}};
  constexpr double kGiBps = 1.073741824; // GB/s per GiB/s
  for (const RingPeer &c : ring_peers) {
    TopologyDraft draft = ring(c.ranks)->to_draft();
    for (Link &link : draft.links)
      link.bandwidth = BytesPerNs{50.0 * kGiBps};
    const Topology t = *Topology::create(draft);
    Expected<simulator::SimulationResult> r = tl::unexpected(Diagnostics{});
    const double wall = seconds(
        [&] { r = simulator::simulate_steps(nccl::AlltoallSteps(c.ranks), t, 1 << 20, 1.0); });
    if (!r)
      return false;
    const double ms = double(r->completion) / 1e9;
    const double transfers = double(c.ranks) * (c.ranks - 1);
    if (c.peer_ms > 0)
      std::printf("%6d %12.0f %14.3f %14.2f %+7.2f%% %10.3f %10.1f %8.1f %10.1f\n", c.ranks,
                  transfers, ms, c.peer_ms, 100 * (ms / c.peer_ms - 1), wall, c.peer_seconds,
                  c.peer_seconds / wall, peak_mib());
    else
      std::printf("%6d %12.0f %14.3f %14s %8s %10.3f %10s %8s %10.1f\n", c.ranks, transfers, ms,
                  "-", "-", wall, "-", "-", peak_mib());
  }
  std::printf("\n");
  return true;
}

// Every rank's chunks queue at one switch's ports, FIFO or max-min fair.
bool congested_alltoall_table(bool quick) {
  std::printf("congested direct Alltoall, 1 MiB chunks, hub_and_spoke (one chunk per round in "
              "and out of each rank)\n\n");
  std::printf("%6s %8s %12s %14s %10s %14s %10s\n", "ranks", "sharing", "transfers", "simulated ms",
              "wall s", "transfers/s", "peak MiB");
  struct Congested {
    int ranks;
    RelationSharing sharing;
  };
  // Max-min fair sharing recomputes the rates of every concurrent fair transfer once per instant
  // at which transfers start or end (docs/cost-model.md).
  const std::vector<Congested> congested =
      quick ? std::vector<Congested>{{16, RelationSharing::Fifo}, {16, RelationSharing::Fair}}
            : std::vector<Congested>{{64, RelationSharing::Fifo},   {256, RelationSharing::Fifo},
                                     {1024, RelationSharing::Fifo}, {32, RelationSharing::Fair},
                                     {64, RelationSharing::Fair},   {256, RelationSharing::Fair},
                                     {1024, RelationSharing::Fair}};
  for (const Congested &c : congested) {
    TopologyDraft draft = hub_and_spoke(c.ranks)->to_draft();
    for (auto &relation : draft.relations)
      relation.sharing = c.sharing;
    const Topology t = *Topology::create(draft);
    Expected<simulator::SimulationResult> r = tl::unexpected(Diagnostics{});
    const double wall = seconds(
        [&] { r = simulator::simulate_steps(nccl::AlltoallSteps(c.ranks), t, 1 << 20, 1.0); });
    if (!r)
      return false;
    const double transfers = double(c.ranks) * (c.ranks - 1);
    std::printf("%6d %8s %12.0f %14.3f %10.3f %14.3g %10.1f\n", c.ranks,
                c.sharing == RelationSharing::Fair ? "fair" : "fifo", transfers,
                double(r->completion) / 1e9, wall, transfers / wall, peak_mib());
  }
  std::printf("\n");
  return true;
}

// A cluster's fabric: direct Alltoall across nodes of 8 GPUs whose 8 NICs of 50 GB/s hang off a
// fat tree (switch vertices; routes spread over the spines as ECMP spreads flows), each chunk
// taking each link when it gets there; FIFO links, or every link and port shared max-min fair.
bool fat_tree_alltoall_table(bool quick) {
  std::printf("direct Alltoall on a fat tree, 1 MiB chunks: DGX H100 nodes, 8 NICs of 50 GB/s "
              "per node, leaves of 4 nodes, every chunk injected at once; the NIC bound is a "
              "GPU's chunks to other nodes over its NIC\n\n");
  std::printf("%6s %5s %7s %8s %9s %12s %13s %9s %8s %8s %9s\n", "ranks", "tiers", "oversub",
              "sharing", "switches", "transfers", "simulated ms", "NIC bound", "wall s", "limit s",
              "peak MiB");
  struct Case {
    int nodes, tiers;
    double oversubscription;
    RelationSharing sharing;
  };
  const auto fair = RelationSharing::Fair, fifo = RelationSharing::Fifo;
  const std::vector<Case> cases =
      quick ? std::vector<Case>{{4, 2, 1.0, fifo}, {4, 2, 1.0, fair}}
            : std::vector<Case>{{16, 2, 1.0, fifo},  {16, 2, 1.0, fair},  {128, 2, 1.0, fifo},
                                {128, 2, 1.0, fair}, {128, 2, 4.0, fair}, {128, 3, 1.0, fair}};
  for (const Case &c : cases) {
    FatTree fabric;
    fabric.nics_per_node = 8;
    fabric.nic_bandwidth = BytesPerNs{50};
    fabric.tiers = c.tiers;
    fabric.leaves_per_pod = 8;
    fabric.oversubscription = c.oversubscription;
    auto built = fat_tree(c.nodes, dgx_h100(), fabric);
    if (!built)
      return false;
    auto t = with_sharing(*built, c.sharing);
    if (!t)
      return false;
    Expected<simulator::SimulationResult> r = tl::unexpected(Diagnostics{});
    const int ranks = t->num_ranks();
    const double wall = seconds(
        [&] { r = simulator::simulate_steps(nccl::AlltoallSteps(ranks), *t, 1 << 20, 1.0); });
    if (!r)
      return false;
    const double nic_bound_ms = double(ranks - 8) * double(1 << 20) / 50.0 / 1e6;
    std::printf("%6d %5d %7.0f %8s %9d %12.0f %13.3f %9.3f %8.3f %8.1f %9.1f\n", ranks, c.tiers,
                c.oversubscription, c.sharing == fair ? "fair" : "fifo", t->num_switches(),
                double(ranks) * (ranks - 1), double(r->completion) / 1e9, nic_bound_ms, wall, 10.0,
                peak_mib());
  }
  std::printf("\n");
  return true;
}

// NCCL's ring and tree as step schedules generated one step at a time, repeated steps timed once:
// the engine's speed. First the peer's ring (one channel on a ring of 4096, 256 MiB), which
// `syncoll simulate --baseline nccl-ring --streamed` runs and which equals its program; then 1024
// DGX H100 nodes on a fat tree, whose unlike hops make lockstep another model than NCCL's
// programs (the CLI refuses them; docs/cost-model.md, "NCCL at cluster scale").
bool streamed_nccl_table(bool quick) {
  std::printf("NCCL ring and tree Allreduce streamed step by step (the step engine; the CLI's "
              "--streamed runs the plain ring), topology and NCCL's search included in the wall "
              "time\n\n");
  std::printf("%-34s %6s %9s %10s %13s %8s %8s %8s %9s\n", "machine", "ranks", "channels",
              "algorithm", "simulated ms", "wall s", "target s", "peer s", "peak MiB");
  struct Case {
    const char *machine;
    int nodes; ///< 0: a plain ring of `ranks`
    int ranks;
    bool tree;
    int64_t bytes;
    double target_seconds, peer_seconds;
  };
  const std::vector<Case> cases =
      quick ? std::vector<Case>{{"ring, 500 ns, 50 GB/s", 0, 64, false, kBytes, 0, 0},
                                {"fat tree of DGX H100, 8 x 50 GB/s", 4, 32, false, 1 << 30, 0, 0},
                                {"fat tree of DGX H100, 8 x 50 GB/s", 4, 32, true, 1 << 30, 0, 0}}
            : std::vector<Case>{
                  {"ring, 500 ns, 50 GB/s", 0, 4096, false, kBytes, 1.0, 6.11},
                  {"fat tree of DGX H100, 8 x 50 GB/s", 1024, 8192, false, 1 << 30, 5.0, 0},
                  {"fat tree of DGX H100, 8 x 50 GB/s", 1024, 8192, true, 1 << 30, 5.0, 0}};
  for (const Case &c : cases) {
    Expected<simulator::SimulationResult> r = tl::unexpected(Diagnostics{});
    int channels = 1;
    const double wall = seconds([&] {
      FatTree fabric;
      fabric.nics_per_node = 8;
      fabric.nic_bandwidth = BytesPerNs{50};
      auto t = c.nodes == 0 ? ring(c.ranks) : fat_tree(c.nodes, dgx_h100(), fabric);
      if (!t)
        return;
      std::vector<std::vector<RankId>> rings(1);
      for (int i = 0; i < c.ranks; ++i)
        rings[0].emplace_back(i);
      if (c.nodes > 0) {
        const auto graph = nccl::nccl_search_rings(*t, nccl::nccl_generation_for(*t));
        if (!graph)
          return;
        channels = graph->runtime_channels();
        rings = graph->channel_rings(channels);
      }
      if (c.tree) {
        auto tree = nccl::NcclTreeSteps::create(
            nccl::nccl_channel_trees(c.nodes, 8, fabric.nics_per_node, channels), 64);
        if (tree)
          r = simulator::simulate_steps(*tree, *t, tree->chunk_bytes(c.bytes), 1.0);
        return;
      }
      auto steps = nccl::NcclRingSteps::create(CollectiveKind::Allreduce, rings);
      if (steps)
        r = simulator::simulate_steps(*steps, *t, steps->chunk_bytes(c.bytes), 1.0);
    });
    if (!r)
      return false;
    auto figure = [](double v) { return v > 0 ? fmt::format("{:.2f}", v) : std::string("-"); };
    std::printf("%-34s %6d %9d %10s %13.3f %8.3f %8s %8s %9.1f\n", c.machine, c.ranks, channels,
                c.tree ? "tree" : "ring", double(r->completion) / 1e9, wall,
                figure(c.target_seconds).c_str(), figure(c.peer_seconds).c_str(), peak_mib());
  }
  std::printf("\n(the ring's chunk is the peer's 256 MiB per rank; the fat tree's calls are 1 GiB "
              "as nccl-tests counts them)\n\n");
  return true;
}

// The ring Allreduce as `syncoll simulate --baseline nccl-ring --channels 1` runs it: NCCL's ring
// as a thread-block program, built and then simulated by the program engine.
// The program simulated at 256 MiB, and the wall time it took (`seconds`); none when it fails or
// deadlocks. `symmetry`: one rank simulated where every rank runs alike (what every command does);
// false: every rank, the engine's own rate.
std::optional<simulator::ProgramSimulation> simulated_at_256_mib(const Program &program,
                                                                 const Topology &t, double &took,
                                                                 bool symmetry = true) {
  simulator::ProgramSimOptions o;
  o.size_bytes = kBytes;
  o.use_symmetry = symmetry;
  Expected<simulator::ProgramSimulation> r = tl::unexpected(Diagnostics{});
  took = seconds([&] { r = simulator::simulate_program(program, t, o); });
  if (!r || r->deadlocked)
    return std::nullopt;
  return std::move(*r);
}

bool ring_program_table(bool quick) {
  std::printf("NCCL ring Allreduce as a thread-block program (the CLI's path), one channel, same "
              "ring and size\n\n");
  std::printf("%6s %14s %8s %5s %8s %10s %10s %12s %12s %9s %8s %10s %10s\n", "ranks",
              "instructions", "runs", "run", "events", "build s", "sim s", "all: events",
              "all: sim s", "Mevents/s", "peer s", "ratio", "peak MiB");
  struct ProgramPeer {
    int ranks;
    double peer_seconds; ///< 0: no peer figure (the quick run)
  };
  const std::vector<ProgramPeer> program_peers =
      quick ? std::vector<ProgramPeer>{{64, 0}}
            : std::vector<ProgramPeer>{{1024, 0.36}, {2048, 1.42}, {4096, 6.11}};
  for (const ProgramPeer &c : program_peers) {
    const Topology t = *ring(c.ranks);
    std::vector<std::vector<RankId>> one_ring(1);
    for (int r = 0; r < c.ranks; ++r)
      one_ring[0].push_back(RankId(r));
    Expected<Program> program = tl::unexpected(Diagnostics{});
    const double build = seconds([&] {
      program = nccl::nccl_ring_program(CollectiveKind::Allreduce, one_ring, Protocol::Simple);
    });
    if (!program)
      return false;
    double sim = 0, every_sim = 0;
    const auto r = simulated_at_256_mib(*program, t, sim);
    const auto every = simulated_at_256_mib(*program, t, every_sim, false);
    if (!r || !every || every->result.completion != r->result.completion)
      return false;
    size_t instructions = 0, runs = 0;
    for (const RankProgram &rp : program->ranks())
      for (const ThreadBlock &tb : rp.thread_blocks)
        instructions += tb.steps.size(), runs += tb.steps.runs().size();
    const auto events = static_cast<unsigned long long>(r->result.events);
    const auto every_events = static_cast<unsigned long long>(every->result.events);
    const double rate = double(every_events) / every_sim / 1e6;
    const std::string peer =
        c.peer_seconds > 0 ? fmt::format("{:.2f}", c.peer_seconds) : std::string("-");
    const std::string ratio =
        c.peer_seconds > 0 ? fmt::format("{:.3f}x", (build + sim) / c.peer_seconds) : "-";
    std::printf("%6d %14zu %8zu %5d %8llu %10.3f %10.3f %12llu %12.3f %9.1f %8s %10s %10.1f\n",
                c.ranks, instructions, runs, r->result.simulated_ranks, events, build, sim,
                every_events, every_sim, rate, peer.c_str(), ratio.c_str(), peak_mib());
  }
  std::printf("\n(run: ranks simulated, the others alike by symmetry, as every command runs it; "
              "all: every rank simulated, the engine's own event rate, the same time; ratio: our "
              "build and simulation over the peer's wall time; above 1 is slower.)\n");
  return true;
}

} // namespace

// Usage: simulator_bench [--quick] [table...], tables named streamed, ring-allreduce,
// ring-alltoall, congested, fat-tree, program (all by default).
// What users type: `syncoll simulate --baseline nccl-ring -c allreduce -t ring -n N --size
// 256MiB`, NCCL's own channel search included (its rings, its channels, the program, the
// simulation), and how the wall time grows per doubling of the ranks (exponent: log2 of the
// ratio). Every rank simulated, the work is ranks x steps x channels and grows as 2; the ring runs
// alike on every rank, so one rank is simulated (steps x channels) and the search and the program
// (ranks x channels) set the growth, 1. The peer: ASTRA-sim's analytical backend on the same
// 4,096-rank ring, measured on this machine.
bool nccl_default_table(bool quick) {
  std::printf("NCCL ring Allreduce with NCCL's channels (the CLI's default path), 256 MiB\n\n");
  std::printf("%6s %9s %5s %12s %10s %10s %10s %9s %8s %9s %10s\n", "ranks", "channels", "run",
              "simulated us", "search s", "sim s", "total s", "exponent", "peer s", "ratio",
              "peak MiB");
  struct Row {
    int ranks;
    double peer_seconds; ///< 0: no peer figure
  };
  const std::vector<Row> rows = quick ? std::vector<Row>{{64, 0}, {128, 0}}
                                      : std::vector<Row>{{1024, 0}, {2048, 0}, {4096, 7.5}};
  double last = 0;
  for (const Row &c : rows) {
    const Topology t = *ring(c.ranks);
    Expected<nccl::TopologyRings> rings = tl::unexpected(Diagnostics{});
    Expected<Program> program = tl::unexpected(Diagnostics{});
    const double search = seconds([&] {
      rings = nccl::nccl_topology_rings(t, CollectiveKind::Allreduce, 0, RankId(0));
      if (rings)
        program = nccl::nccl_topology_program(nccl::NcclAlgorithm::Ring, CollectiveKind::Allreduce,
                                              t, *rings, Protocol::Simple);
    });
    if (!program)
      return false;
    double sim = 0;
    const auto r = simulated_at_256_mib(*program, t, sim);
    if (!r)
      return false;
    const double total = search + sim;
    const std::string exponent = last > 0 ? fmt::format("{:.2f}", std::log2(total / last)) : "-";
    last = total;
    std::printf("%6d %9d %5d %12.3f %10.3f %10.3f %10.3f %9s %8s %9s %10.1f\n", c.ranks,
                rings->channels, r->result.simulated_ranks, double(r->result.completion) / 1e6,
                search, sim, total, exponent.c_str(),
                c.peer_seconds > 0 ? fmt::format("{:.1f}", c.peer_seconds).c_str() : "-",
                c.peer_seconds > 0 ? fmt::format("{:.3f}x", total / c.peer_seconds).c_str() : "-",
                peak_mib());
  }
  std::printf("\n(ratio: ours over the peer's wall time; above 1 is slower. Same figures through "
              "the CLI: /usr/bin/time -f \"%%e s %%M KB\" syncoll simulate --baseline nccl-ring -c "
              "allreduce -t ring -n N --size 256MiB)\n\n");
  return true;
}

int main(int argc, char **argv) {
  bool quick = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else
      only.emplace_back(argv[i]);
  }
  const std::vector<std::pair<std::string, bool (*)(bool)>> tables = {
      {"streamed", streamed_nccl_table},      {"ring-allreduce", ring_allreduce_table},
      {"ring-alltoall", ring_alltoall_table}, {"congested", congested_alltoall_table},
      {"fat-tree", fat_tree_alltoall_table},  {"program", ring_program_table},
      {"nccl-default", nccl_default_table}};
  for (const std::string &name : only)
    if (std::none_of(tables.begin(), tables.end(),
                     [&](const auto &t) { return t.first == name; })) {
      std::fprintf(
          stderr,
          "simulator_bench: unknown table '%s'; usage: simulator_bench [--quick] "
          "[streamed|ring-allreduce|ring-alltoall|congested|fat-tree|program|nccl-default ...]\n",
          name.c_str());
      return 2;
    }
  // The streamed runs first, on a fresh heap (peak memory is the process's high-water mark);
  // then the peer comparisons; the largest runs last.
  for (const auto &[name, table] : tables)
    if ((only.empty() || std::find(only.begin(), only.end(), name) != only.end()) && !table(quick))
      return 1;
  return 0;
}
