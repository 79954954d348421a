#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "simulator/program_sim.h"
#include "verifier/verify.h"

#include <gtest/gtest.h>

namespace syncoll::nccl {
namespace {

bool is_ring(const Topology &t, const std::vector<RankId> &ring) {
  std::vector<bool> seen(size_t(t.num_ranks()), false);
  for (size_t i = 0; i < ring.size(); ++i) {
    if (seen[ring[i].index()] || !t.find_link(ring[i], ring[(i + 1) % ring.size()]))
      return false;
    seen[ring[i].index()] = true;
  }
  return ring.size() == size_t(t.num_ranks());
}

TEST(BaselinesTest, FindsRingsInLibraryTopologies) {
  for (const Topology &t :
       {dgx1(), amd4(), amd8(), dgx2(), *ring(7), *torus2d(3, 4), *hypercube(4), *mesh2d(4, 4)}) {
    auto ring_order = find_ring(t);
    ASSERT_TRUE(ring_order) << t.name();
    EXPECT_TRUE(is_ring(t, *ring_order)) << t.name();
  }
  EXPECT_FALSE(find_ring(*star(5))); // the hub would be visited twice
  EXPECT_FALSE(find_ring(*line(4)));
}

TEST(BaselinesTest, RingAllreduceCostsRunsNotRanksSquared) {
  // Each thread block's 2n-1 steps are at most seven runs (five ops, each of the two loops cut
  // once where its chunk index wraps), so a 1024-rank program holds a few thousand records, not
  // two million; and it still verifies, read through the same runs.
  for (int n : {8, 1024}) {
    std::vector<RankId> order;
    for (int r = 0; r < n; ++r)
      order.emplace_back((r * 3) % n); // a permutation: 3 is prime to n
    auto p = nccl_ring_program(CollectiveKind::Allreduce, {order}, Protocol::Simple);
    ASSERT_TRUE(p) << p.error().to_string();
    for (const RankProgram &rp : p->ranks()) {
      ASSERT_EQ(rp.thread_blocks[0].steps.size(), size_t(2 * n - 1));
      EXPECT_LE(rp.thread_blocks[0].steps.runs().size(), 7u);
    }
    if (n <= 8) {
      const auto report = verifier::verify(*p, verifier::VerifyOptions{});
      EXPECT_TRUE(report.all_hold()) << report.to_text();
    }
  }
}

TEST(BaselinesTest, EveryRingBaselineVerifies) {
  const Topology t = dgx1();
  const auto ring_order = *find_ring(t);
  for (auto kind : {CollectiveKind::Allreduce, CollectiveKind::Allgather,
                    CollectiveKind::ReduceScatter, CollectiveKind::Broadcast})
    for (int channels : {1, 2, 4})
      for (auto proto : {Protocol::Simple, Protocol::LL128}) {
        auto p = nccl_ring_program(kind, std::vector(size_t(channels), ring_order), proto);
        ASSERT_TRUE(p) << p.error().to_string();
        verifier::VerifyOptions o;
        o.root = ring_order.front().value();
        auto report = verifier::verify(*p, o);
        EXPECT_TRUE(report.all_hold()) << collective_kind_name(kind) << " x" << channels << "\n"
                                       << report.to_text();
        simulator::ProgramSimOptions so;
        so.size_bytes = 8 << 20;
        auto sim = simulator::simulate_program(*p, t, so);
        ASSERT_TRUE(sim) << sim.error().to_string();
        EXPECT_FALSE(sim->deadlocked);
      }
}

TEST(BaselinesTest, TreeAllreduceVerifiesAndBeatsTheRingForSmallMessages) {
  for (const Topology &t : {dgx1(), *fully_connected(5), *ring(6), *hypercube(3)}) {
    auto parent = find_tree(t, RankId(0));
    ASSERT_TRUE(parent) << t.name();
    for (int chunks : {1, 4}) {
      auto p = nccl_tree_allreduce_program(*parent, chunks, Protocol::Simple);
      ASSERT_TRUE(p) << p.error().to_string();
      auto report = verifier::verify(*p, {});
      EXPECT_TRUE(report.all_hold()) << t.name() << " x" << chunks << "\n" << report.to_text();
    }
  }
  // On the DGX-1 the tree's depth (2) beats the ring's 14 hops at 1 KiB.
  const Topology t = dgx1();
  auto tree = nccl_tree_allreduce_program(*find_tree(t, RankId(0)), 1, Protocol::Simple);
  auto ring_p = nccl_ring_program(CollectiveKind::Allreduce, {*find_ring(t)}, Protocol::Simple);
  simulator::ProgramSimOptions o;
  o.size_bytes = 1024;
  auto tree_sim = simulator::simulate_program(*tree, t, o);
  auto ring_sim = simulator::simulate_program(*ring_p, t, o);
  ASSERT_TRUE(tree_sim && ring_sim);
  EXPECT_LT(tree_sim->result.completion, ring_sim->result.completion);
}

TEST(BaselinesTest, NcclFormulaWorkedExamples) {
  // NCCL's own worked example: 8 GPUs, one node, AllReduce, Ring, latency part only.
  NcclRingParameters p;
  p.ranks = 8;
  p.protocol = Protocol::LL;
  EXPECT_NEAR(nccl_ring_time_us(CollectiveKind::Allreduce, 0, p), 15.0, 1e-9);
  p.protocol = Protocol::LL128;
  EXPECT_NEAR(nccl_ring_time_us(CollectiveKind::Allreduce, 0, p), 40.6, 1e-9);
  p.protocol = Protocol::Simple;
  EXPECT_NEAR(nccl_ring_time_us(CollectiveKind::Allreduce, 0, p), 56.0, 1e-9);
  p.nvlink = false;
  EXPECT_NEAR(nccl_ring_time_us(CollectiveKind::Allreduce, 0, p), 88.2, 1e-9);
  // 16 channels x 20 GB/s, Simple, 256 MiB: 56 us + 268,435,456 / (1000 x 320 x 8/14) us.
  p.nvlink = true;
  p.channels = 16;
  EXPECT_NEAR(nccl_ring_time_us(CollectiveKind::Allreduce, 268435456.0, p),
              56.0 + 268435456.0 / (1000 * 320.0 * 8 / 14), 1e-6);
}

} // namespace
} // namespace syncoll::nccl
