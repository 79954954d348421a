// Simulating one rank (or one node) of a program that looks alike from every rank gives the times
// of simulating them all (simulator/rank_symmetry.h): checked here on NCCL's programs, which are
// the ones that run at thousands of ranks, on plain topologies and on calibrated systems.
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <rapidcheck/gtest.h>
#include <set>

namespace syncoll::nccl {
namespace {

struct Runs {
  simulator::SimulationResult symmetric, every_rank;
};

// The run as every command makes it and, where that run found a symmetry, the run over every
// rank; none where no symmetry holds (the two are then one run).
std::optional<Runs> both_ways(const Program &program, const Topology &topology,
                              simulator::ProgramSimOptions o) {
  o.use_symmetry = true;
  auto a = simulator::simulate_program(program, topology, o);
  RC_ASSERT(a.has_value());
  RC_TAG(a->result.simulated_ranks < topology.num_ranks() ? "symmetric" : "whole");
  if (a->result.simulated_ranks == topology.num_ranks())
    return std::nullopt;
  o.use_symmetry = false;
  auto b = simulator::simulate_program(program, topology, o);
  RC_ASSERT(b.has_value());
  RC_ASSERT(a->deadlocked == b->deadlocked);
  return Runs{std::move(a->result), std::move(b->result)};
}

// Every figure a user reads off a run: the time, each link's bytes and busy share, each rank's
// idle time. Bytes are equal; times are equal but where the run over every rank met two events of
// one picosecond in an order that differs between ranks alike (its events have one order over
// all ranks): of 1,537 symmetric runs (six seeds of 600 cases), 4 completions differed, by at
// most 0.04%, ranks' idle times by at most 0.33% of the completion.
void expect_same(const Runs &r) {
  RC_ASSERT(r.every_rank.simulated_ranks == int(r.every_rank.rank_idle.size()));
  const double completion = double(r.every_rank.completion);
  RC_ASSERT(std::abs(double(r.symmetric.completion) - completion) <= 1e-3 * completion);
  RC_TAG(r.symmetric.completion == r.every_rank.completion ? "same" : "a tie apart");
  RC_ASSERT(r.symmetric.links.size() == r.every_rank.links.size());
  for (size_t l = 0; l < r.symmetric.links.size(); ++l) {
    RC_ASSERT(r.symmetric.links[l].bytes == r.every_rank.links[l].bytes);
    RC_ASSERT(std::abs(r.symmetric.links[l].utilization - r.every_rank.links[l].utilization) <=
              1e-3);
  }
  RC_ASSERT(r.symmetric.rank_idle.size() == r.every_rank.rank_idle.size());
  for (size_t i = 0; i < r.symmetric.rank_idle.size(); ++i)
    RC_ASSERT(std::abs(double(r.symmetric.rank_idle[i] - r.every_rank.rank_idle[i])) <=
              1e-2 * completion);
}

int64_t a_size() {
  return int64_t(1) << *rc::gen::inRange(8, 27);
}

RC_GTEST_PROP(RankSymmetryProperty, NcclRingsOnPlainTopologiesTimeAsEveryRankDoes, ()) {
  const std::string family = *rc::gen::element<std::string>(
      "ring", "fully_connected", "torus2d", "hypercube", "hub_and_spoke", "multinode", "fat_tree");
  TopologyParams params;
  if (family == "hypercube")
    params.dims = *rc::gen::inRange(1, 5);
  else if (family == "torus2d")
    params.shape = std::vector<int>{*rc::gen::inRange(2, 5), *rc::gen::inRange(2, 5)};
  else if (family == "multinode" || family == "fat_tree") {
    params.nodes = *rc::gen::inRange(2, 9);
    params.gpus = *rc::gen::element(1, 2, 4);
    params.nics = *rc::gen::element(1, 2);
  } else
    params.n = *rc::gen::inRange(2, 17);
  auto topology = make_library_topology(family, params);
  RC_PRE(topology.has_value());
  const CollectiveKind kind =
      *rc::gen::element(CollectiveKind::Allreduce, CollectiveKind::Allgather,
                        CollectiveKind::ReduceScatter, CollectiveKind::Broadcast);
  const bool rooted = collective_traits(kind).rooted;
  auto rings = nccl_topology_rings(*topology, kind, *rc::gen::inRange(0, 5),
                                   rooted ? std::optional(RankId(0)) : std::nullopt);
  RC_PRE(rings.has_value());
  const Protocol protocol = *rc::gen::element(Protocol::Simple, Protocol::LL, Protocol::LL128);
  auto program = nccl_topology_program(NcclAlgorithm::Ring, kind, *topology, *rings, protocol);
  RC_ASSERT(program.has_value());
  simulator::ProgramSimOptions o;
  o.size_bytes = a_size();
  o.model = nccl_chunked(o.model, kind);
  if (const auto runs = both_ways(*program, *topology, o))
    expect_same(*runs);
}

RC_GTEST_PROP(RankSymmetryProperty, NcclProgramsOnSystemsTimeAsEveryRankDoes, ()) {
  // NCCL's search of each machine once (the search, not the run, would take the test's time).
  static std::map<std::pair<std::string, int>, std::optional<NcclSystem>> machines;
  const std::string preset = *rc::gen::element<std::string>(
      "dgx_h100", "dgx_a100", "dgx1", "aws_p5", "gb200_nvl72", "azure_nd_mi300x_v5");
  const int nodes = *rc::gen::element(1, 2, 4);
  auto [at, first] = machines.try_emplace({preset, nodes});
  if (first) {
    auto made = nccl_system(*find_system_preset(preset), nodes);
    RC_ASSERT(made.has_value());
    at->second = *std::move(made);
  }
  const simulator::SystemModel *system = &at->second->system;
  const NcclMachine *machine = &at->second->nccl;
  RC_PRE(system->topology.num_ranks() <= 64); // every-rank runs of racks take long
  const CollectiveKind kind = *rc::gen::element(
      CollectiveKind::Allreduce, CollectiveKind::Allgather, CollectiveKind::ReduceScatter,
      CollectiveKind::Broadcast, CollectiveKind::Alltoall);
  const int64_t bytes = a_size();
  auto candidates = nccl_candidates(kind, bytes, *system, *machine);
  RC_PRE(candidates.has_value());
  std::vector<NcclEstimate> programs;
  for (const NcclEstimate &e : *candidates)
    if (e.algorithm == NcclAlgorithm::Ring || e.algorithm == NcclAlgorithm::Tree ||
        e.algorithm == NcclAlgorithm::Pat || e.algorithm == NcclAlgorithm::P2p)
      programs.push_back(e);
  RC_PRE(!programs.empty());
  NcclEstimate choice = *rc::gen::elementOf(programs);
  choice.channels = *rc::gen::inRange(1, choice.channels + 1);
  auto program = nccl_program(kind, choice, *system, *machine);
  RC_ASSERT(program.has_value());
  // As simulate_nccl runs it.
  simulator::ProgramSimOptions o;
  o.size_bytes = bytes;
  o.model = nccl_chunked(system->model, kind);
  o.model.efficiency.fill(1.0);
  Topology topology = system->protocol_topology(choice.protocol);
  if (choice.algorithm == NcclAlgorithm::P2p)
    topology = simulator::with_fair_ports(topology);
  if (const auto runs = both_ways(*program, topology, o))
    expect_same(*runs);
}

TEST(RankSymmetryTest, ARingRunsOneRankAndATreeEveryRank) {
  // NCCL's rings on a ring of 64: every rank does what its neighbour does, one rank runs.
  TopologyParams params;
  params.n = 64;
  auto ring = make_library_topology("ring", params);
  ASSERT_TRUE(ring);
  auto rings = nccl_topology_rings(*ring, CollectiveKind::Allreduce, 0, std::nullopt);
  ASSERT_TRUE(rings);
  auto program = nccl_topology_program(NcclAlgorithm::Ring, CollectiveKind::Allreduce, *ring,
                                       *rings, Protocol::Simple);
  ASSERT_TRUE(program);
  simulator::ProgramSimOptions o;
  o.size_bytes = int64_t(64) << 20;
  auto sim = simulator::simulate_program(*program, *ring, o);
  ASSERT_TRUE(sim);
  EXPECT_EQ(sim->result.simulated_ranks, 1);
  // A trace is spread from the simulated rank over all 64, each link's spans on that link.
  o.trace = true;
  auto traced = simulator::simulate_program(*program, *ring, o);
  ASSERT_TRUE(traced);
  EXPECT_EQ(traced->result.simulated_ranks, 1);
  EXPECT_EQ(traced->result.completion, sim->result.completion);
  std::set<int> processes;
  for (const simulator::TraceSpan &span : traced->result.trace) {
    processes.insert(span.process);
    if (span.thread_name.starts_with("link ")) {
      EXPECT_EQ(span.thread_name.substr(5, span.thread_name.find('-') - 5),
                std::to_string(span.process));
    }
  }
  EXPECT_EQ(processes.size(), 64u);
  o.trace = false;
  o.use_symmetry = false;
  auto every = simulator::simulate_program(*program, *ring, o);
  ASSERT_TRUE(every);
  EXPECT_EQ(every->result.simulated_ranks, 64);
  EXPECT_EQ(every->result.completion, sim->result.completion);
  EXPECT_LT(sim->result.events * 32, every->result.events);
  // A tree's root, inner ranks and leaves differ: every rank runs.
  auto tree = make_library_topology("fully_connected", params);
  ASSERT_TRUE(tree);
  auto trees = nccl_topology_rings(*tree, CollectiveKind::Allreduce, 2, std::nullopt);
  ASSERT_TRUE(trees);
  auto tree_program = nccl_topology_program(NcclAlgorithm::Tree, CollectiveKind::Allreduce, *tree,
                                            *trees, Protocol::Simple);
  ASSERT_TRUE(tree_program) << tree_program.error().to_string();
  o.use_symmetry = true;
  auto tree_sim = simulator::simulate_program(*tree_program, *tree, o);
  ASSERT_TRUE(tree_sim);
  EXPECT_EQ(tree_sim->result.simulated_ranks, 64);
}

TEST(RankSymmetryTest, NodesOfASystemRunOneNodeWhereTheNetworkIsAlike) {
  // Rings across 4 DGX H100 nodes: each node does what the node before it does, over NICs alike.
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 4);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  NcclRunOptions ring;
  ring.algorithm = NcclAlgorithm::Ring;
  auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(256) << 20, *system, *machine, ring);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(run->result.simulated_ranks, 8);
}

} // namespace
} // namespace syncoll::nccl
