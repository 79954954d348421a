// MSCCL++ plans timed: an operation starts when its thread block's previous one and what it waits
// for are done, a put's bytes cross the link, a signal lands after the link's latency.
#include "mscclpp/mscclpp.h"

#include <fstream>
#include <gtest/gtest.h>

namespace syncoll::mscclpp {
namespace {

Topology two_gpus() {
  TopologyDraft d;
  d.name = "pair";
  d.num_ranks = 2;
  d.links = {{RankId(0), RankId(1), 1, Nanoseconds{1000}, BytesPerNs{10}},
             {RankId(1), RankId(0), 1, Nanoseconds{1000}, BytesPerNs{10}}};
  auto t = Topology::create(std::move(d));
  EXPECT_TRUE(t) << t.error().to_string();
  return *std::move(t);
}

// The in-place Allgather of 2 GPUs: a relaxed handshake (lands after 1 us), the put of one
// 10,000-byte chunk (1 us of latency and 1 us on the wire), the closing signal (1 us): 4 us.
TEST(MscclppSimulateTest, APutWaitsForTheHandshakeAndTheWaitForTheSignalsArrival) {
  auto plan = read_execution_plan_file(std::string(SYNCOLL_SOURCE_DIR) +
                                       "/tests/data/mscclpp/allgather_2gpu_memory.json");
  ASSERT_TRUE(plan) << plan.error().to_string();
  auto sim = simulate_plan(*plan, two_gpus(), 20000, simulator::CostModel{});
  ASSERT_TRUE(sim) << sim.error().to_string();
  EXPECT_FALSE(sim->deadlocked);
  EXPECT_EQ(sim->result.completion, 4'000'000); // picoseconds
  EXPECT_DOUBLE_EQ(sim->result.algbw_gbps, 5.0);
  // Twice the bytes: the put's wire time doubles, the latencies stay.
  auto twice = simulate_plan(*plan, two_gpus(), 40000, simulator::CostModel{});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->result.completion, 5'000'000);
}

TEST(MscclppSimulateTest, APlanOnAnotherNumberOfRanksIsRefused) {
  auto plan = read_execution_plan_file(std::string(SYNCOLL_SOURCE_DIR) +
                                       "/tests/data/mscclpp/allreduce_allpairs_4gpu_memory.json");
  ASSERT_TRUE(plan);
  auto sim = simulate_plan(*plan, two_gpus(), 1 << 20, simulator::CostModel{});
  ASSERT_FALSE(sim);
  EXPECT_EQ(sim.error().to_string(), "the plan runs on 4 GPUs and 'pair' has 2 ranks\n");
}

} // namespace
} // namespace syncoll::mscclpp
