// NCCL's ring and tree as streamed step schedules (nccl/steps.h), and the step engine's
// repeated steps: timing a repeated step once gives what simulating every step gives.
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/preset.h"
#include "nccl/search.h"
#include "nccl/steps.h"
#include "simulator/algorithm_sim.h"
#include "simulator/program_sim.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <rapidcheck/gtest.h>

namespace syncoll::nccl {
namespace {

std::vector<RankId> ranks(std::initializer_list<int> ids) {
  std::vector<RankId> out;
  for (int r : ids)
    out.emplace_back(r);
  return out;
}

TEST(NcclStepsTest, RingStepsSendAlongEveryChannelsRing) {
  auto ring =
      NcclRingSteps::create(CollectiveKind::Allreduce, {ranks({0, 1, 2, 3}), ranks({0, 2, 1, 3})});
  ASSERT_TRUE(ring) << ring.error().to_string();
  EXPECT_EQ(ring->num_steps(), 6);
  EXPECT_EQ(ring->chunk_bytes(8 << 20), 1 << 20);
  std::vector<Send> sends;
  for (int step = 0; step < ring->num_steps(); ++step) {
    ring->sends(step, sends);
    ASSERT_EQ(sends.size(), 8u);
    std::map<std::pair<int, int>, int> pairs;
    for (const Send &s : sends)
      ++pairs[{s.src.value(), s.dst.value()}];
    // Channel 0 runs 0->1->2->3->0, channel 1 runs 0->2->1->3->0.
    EXPECT_EQ(pairs[std::make_pair(0, 1)], 1);
    EXPECT_EQ(pairs[std::make_pair(2, 1)], 1);
    EXPECT_EQ(pairs[std::make_pair(3, 0)], 2);
    EXPECT_EQ(sends.front().op, step < 3 ? SendOp::Reduce : SendOp::Copy);
  }
  EXPECT_EQ(NcclRingSteps::create(CollectiveKind::Allgather, {ranks({0, 1})})->num_steps(), 1);
  EXPECT_FALSE(NcclRingSteps::create(CollectiveKind::Alltoall, {ranks({0, 1})}));
  EXPECT_FALSE(NcclRingSteps::create(CollectiveKind::Allreduce, {ranks({0, 1}), ranks({0})}));
  EXPECT_FALSE(NcclRingSteps::create(CollectiveKind::Allreduce, {}));
}

TEST(NcclStepsTest, TreeStepsReduceUpAndBroadcastDownInPipeline) {
  // A chain 3 -> 2 -> 1 -> 0 (root): height 3, two chunks: 2 + 2 x 3 - 1 = 7 steps.
  auto tree = NcclTreeSteps::create({{-1, 0, 1, 2}}, 2);
  ASSERT_TRUE(tree) << tree.error().to_string();
  EXPECT_EQ(tree->num_steps(), 7);
  std::vector<Send> sends;
  std::vector<std::vector<std::pair<int, int>>> by_step;
  for (int step = 0; step < tree->num_steps(); ++step) {
    tree->sends(step, sends);
    by_step.emplace_back();
    for (const Send &s : sends)
      by_step.back().emplace_back(s.src.value(), s.dst.value());
    std::sort(by_step.back().begin(), by_step.back().end());
  }
  using Edges = std::vector<std::pair<int, int>>;
  EXPECT_EQ(by_step[0], (Edges{{3, 2}}));
  EXPECT_EQ(by_step[1], (Edges{{2, 1}, {3, 2}}));
  EXPECT_EQ(by_step[2], (Edges{{1, 0}, {2, 1}}));
  // Chunk 0 reached the root at step 2 and comes down from step 3, while chunk 1 still goes up.
  EXPECT_EQ(by_step[3], (Edges{{0, 1}, {1, 0}}));
  EXPECT_EQ(by_step[6], (Edges{{2, 3}}));
  EXPECT_FALSE(NcclTreeSteps::create({{-1, -1}}, 2)) << "two roots";
  EXPECT_FALSE(NcclTreeSteps::create({{1, 0}}, 2)) << "a cycle";
  EXPECT_FALSE(NcclTreeSteps::create({{-1, 0}}, 0)) << "no chunks";
}

RC_GTEST_PROP(NcclStepsProperty, EveryChunkMovesOnlyAfterItArrived, ()) {
  // A random tree: each rank's parent is an earlier rank.
  const int n = *rc::gen::inRange(2, 24);
  std::vector<int> parent(size_t(n), -1);
  for (int v = 1; v < n; ++v)
    parent[size_t(v)] = *rc::gen::inRange(0, v);
  const int chunks = *rc::gen::inRange(1, 6);
  auto tree = NcclTreeSteps::create({parent}, chunks);
  RC_ASSERT(tree.has_value());
  // For each chunk: when each rank has its subtree's partial, and when it has the result.
  std::vector<std::vector<int>> partial(size_t(chunks), std::vector<int>(size_t(n), -1));
  std::vector<std::vector<int>> result(size_t(chunks), std::vector<int>(size_t(n), -1));
  std::vector<Send> sends;
  for (int step = 0; step < tree->num_steps(); ++step) {
    tree->sends(step, sends);
    for (const Send &s : sends) {
      const int j = s.chunk.value(), from = s.src.value(), to = s.dst.value();
      if (s.op == SendOp::Reduce) {
        // Up: every child of `from` has sent this chunk in an earlier step.
        for (int c = 0; c < n; ++c)
          if (parent[size_t(c)] == from)
            RC_ASSERT(partial[size_t(j)][size_t(c)] >= 0 && partial[size_t(j)][size_t(c)] < step);
        RC_ASSERT(to == parent[size_t(from)]);
        partial[size_t(j)][size_t(from)] = step;
      } else {
        RC_ASSERT(parent[size_t(to)] == from);
        if (parent[size_t(from)] >= 0)
          RC_ASSERT(result[size_t(j)][size_t(from)] >= 0 && result[size_t(j)][size_t(from)] < step);
        result[size_t(j)][size_t(to)] = step;
      }
    }
  }
  // Every non-root rank sent each chunk up once and got it back down.
  for (int j = 0; j < chunks; ++j)
    for (int v = 1; v < n; ++v)
      RC_ASSERT(partial[size_t(j)][size_t(v)] >= 0 && result[size_t(j)][size_t(v)] >= 0);
}

// The same schedule without its repetitions declared: every step simulated.
class EveryStep final : public simulator::StepSource {
public:
  explicit EveryStep(const simulator::StepSource &inner) : inner_(inner) {}
  int num_steps() const override { return inner_.num_steps(); }
  void sends(int step, std::vector<Send> &out) const override { inner_.sends(step, out); }

private:
  const simulator::StepSource &inner_;
};

RC_GTEST_PROP(NcclStepsProperty, RepeatedStepsTimedOnceEqualEveryStepSimulated, ()) {
  const int nodes = *rc::gen::inRange(2, 6);
  const int gpus = *rc::gen::inRange(2, 5);
  FatTree fabric;
  fabric.nics_per_node = *rc::gen::inRange(1, gpus + 1);
  fabric.nodes_per_leaf = *rc::gen::inRange(1, 3);
  fabric.oversubscription = *rc::gen::element(1.0, 3.0);
  const bool fair = *rc::gen::arbitrary<bool>();
  auto built = fat_tree(nodes, *fully_connected(gpus), fabric);
  RC_ASSERT(built.has_value());
  auto t = with_sharing(*built, fair ? RelationSharing::Fair : RelationSharing::Fifo);
  RC_ASSERT(t.has_value());
  const int channels = *rc::gen::inRange(1, 5);
  const auto graph = nccl_search_rings(*t, nccl_generation_for(*t));
  RC_ASSERT(graph.has_value());
  const auto ring =
      NcclRingSteps::create(CollectiveKind::Allreduce, graph->channel_rings(channels));
  const auto tree = NcclTreeSteps::create(
      nccl_channel_trees(nodes, gpus, fabric.nics_per_node, channels), *rc::gen::inRange(1, 20));
  RC_ASSERT(ring.has_value() && tree.has_value());
  const int64_t chunk = *rc::gen::element(int64_t(4096), int64_t(1) << 20);
  for (const simulator::StepSource *source : {static_cast<const simulator::StepSource *>(&*ring),
                                              static_cast<const simulator::StepSource *>(&*tree)}) {
    auto once = simulator::simulate_steps(*source, *t, chunk, 1.0);
    auto every = simulator::simulate_steps(EveryStep(*source), *t, chunk, 1.0);
    RC_ASSERT(once.has_value() && every.has_value());
    RC_ASSERT(once->completion == every->completion);
    RC_ASSERT(once->links.size() == every->links.size());
    for (size_t l = 0; l < once->links.size(); ++l) {
      RC_ASSERT(once->links[l].bytes == every->links[l].bytes);
      RC_ASSERT(once->links[l].utilization == every->links[l].utilization);
    }
  }
}

// One engine, one answer: NCCL's ring streamed step by step takes the time its thread-block
// program takes on the same rings (within 0.1%), or refuses the call; both outcomes occur.
RC_GTEST_PROP(NcclStepsProperty, StreamedRingIsItsProgramOrRefuses, ()) {
  const int n = *rc::gen::inRange(2, 40);
  const int pick = *rc::gen::inRange(0, 5);
  FatTree fabric;
  fabric.nics_per_node = *rc::gen::element(1, 2);
  fabric.nodes_per_leaf = *rc::gen::inRange(1, 3);
  fabric.tiers = *rc::gen::element(2, 3);
  fabric.leaves_per_pod = 2;
  auto topology = pick == 0   ? ring(n)
                  : pick == 1 ? fully_connected(n)
                  : pick == 2 ? hub_and_spoke(n)
                  : pick == 3 ? Expected<Topology>(dgx_h100())
                              : fat_tree(*rc::gen::inRange(2, 9), *fully_connected(2), fabric);
  RC_ASSERT(topology.has_value());
  const auto kind = *rc::gen::element(CollectiveKind::Allreduce, CollectiveKind::Allgather,
                                      CollectiveKind::ReduceScatter);
  const Protocol protocol = *rc::gen::element(Protocol::Simple, Protocol::LL, Protocol::LL128);
  const int channels = *rc::gen::inRange(1, 5);
  const int64_t size = int64_t(1) << *rc::gen::inRange(10, 31);
  const bool nccl_costs = *rc::gen::element(false, false, false, true);
  const simulator::CostModel model = nccl_costs ? nccl_preset() : simulator::CostModel{};
  const auto graph = nccl_search_rings(*topology, nccl_generation_for(*topology));
  RC_ASSERT(graph.has_value());
  const auto rings = graph->channel_rings(channels);
  const auto steps = NcclRingSteps::create(kind, rings);
  RC_ASSERT(steps.has_value());
  const auto streamed = simulate_streamed_ring(*steps, *topology, size, model, protocol);
  RC_CLASSIFY(streamed.has_value(), "streamed");
  if (!streamed)
    return;
  RC_ASSERT(!nccl_costs);
  const auto program = nccl_ring_program(kind, rings, protocol);
  RC_ASSERT(program.has_value());
  simulator::ProgramSimOptions options;
  options.size_bytes = size;
  options.model = model;
  options.protocol = protocol;
  const auto run = simulator::simulate_program(*program, *topology, options);
  RC_ASSERT(run.has_value());
  const double ratio = double(streamed->completion) / double(run->result.completion);
  RC_LOG() << topology->name() << " " << collective_kind_name(kind) << " "
           << protocol_traits(protocol).name << " " << channels << " ch " << size << " B: streamed "
           << streamed->completion << " ps, program " << run->result.completion << " ps\n";
  RC_ASSERT(std::abs(ratio - 1.0) <= 1e-3);
}

// The cases the streamed ring refuses, each with its reason.
TEST(NcclStepsTest, StreamedRingRefusesWhatItDoesNotModel) {
  const Topology t = *ring(8);
  const auto graph = nccl_search_rings(t, nccl_generation_for(t));
  ASSERT_TRUE(graph.has_value());
  const auto one = NcclRingSteps::create(CollectiveKind::Allreduce, graph->channel_rings(1));
  ASSERT_TRUE(one.has_value());
  EXPECT_TRUE(simulate_streamed_ring(*one, t, 1 << 20, {}, Protocol::Simple));
  const auto piece = simulate_streamed_ring(*one, t, int64_t(1) << 30, {}, Protocol::Simple);
  ASSERT_FALSE(piece);
  EXPECT_NE(piece.error().to_string().find("pipelines in pieces of 2 MiB"), std::string::npos)
      << piece.error().to_string();
  const auto costs = simulate_streamed_ring(*one, t, 1 << 20, nccl_preset(), Protocol::Simple);
  ASSERT_FALSE(costs);
  EXPECT_NE(costs.error().to_string().find("per-message latency"), std::string::npos);
  simulator::CostModel proxied;
  proxied.proxy_message_cost = 10'000'000;
  const auto proxy = simulate_streamed_ring(*one, t, 1 << 20, proxied, Protocol::Simple);
  ASSERT_FALSE(proxy);
  EXPECT_NE(proxy.error().to_string().find("proxy's cost per message"), std::string::npos);
  const auto four = NcclRingSteps::create(CollectiveKind::Allreduce, graph->channel_rings(4));
  ASSERT_TRUE(four.has_value());
  const auto shared = simulate_streamed_ring(*four, t, 1 << 20, {}, Protocol::Simple);
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().to_string().find("share link"), std::string::npos)
      << shared.error().to_string();
}

} // namespace
} // namespace syncoll::nccl
