// Switch fabrics (docs/cost-model.md, "Links and bandwidth relations"): transfers between ranks
// without a direct link cross the fewest switches, flows between two leaves spread over the
// spines, and a sender goes on once its own link has carried a transfer.
#include "model/topology_library.h"
#include "nccl/steps.h"
#include "simulator/algorithm_sim.h"
#include "simulator/network.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <rapidcheck/gtest.h>
#include <set>

namespace syncoll::simulator {
namespace {

// Two nodes of `gpus` GPUs with a NIC each, one node per leaf: `gpus` spines.
Topology two_leaf_fabric(int gpus) {
  FatTree fabric;
  fabric.nics_per_node = gpus;
  fabric.nic_bandwidth = BytesPerNs{50};
  fabric.nodes_per_leaf = 1;
  return *fat_tree(2, *fully_connected(gpus), fabric);
}

TEST(FabricTest, RoutesCrossTheFewestSwitches) {
  FatTree fabric;
  fabric.nics_per_node = 4;
  fabric.nodes_per_leaf = 2;
  const Topology t = *fat_tree(4, *fully_connected(4), fabric);
  Network network(t, 1.0);
  // Same node: the NVLink-like direct link. Same leaf: up and down. Other leaf: up to a spine.
  EXPECT_EQ(network.route(RankId(0), RankId(1)).size(), 1u);
  const auto same_leaf = network.route(RankId(0), RankId(4));
  ASSERT_EQ(same_leaf.size(), 2u);
  EXPECT_EQ(t.vertex_name(t.link(same_leaf[0]).dst), "leaf0");
  const auto across = network.route(RankId(0), RankId(8));
  ASSERT_EQ(across.size(), 4u);
  EXPECT_EQ(t.vertex_name(t.link(across[0]).dst), "leaf0");
  EXPECT_TRUE(t.vertex_name(t.link(across[1]).dst).starts_with("spine"));
  EXPECT_EQ(t.vertex_name(t.link(across[2]).dst), "leaf1");
  EXPECT_EQ(t.link(across[3]).dst, RankId(8));
  for (size_t i = 1; i < across.size(); ++i)
    EXPECT_EQ(t.link(across[i - 1]).dst, t.link(across[i]).src) << "hop " << i;
}

TEST(FabricTest, FlowsBetweenTwoLeavesSpreadOverTheSpines) {
  // 8 GPUs per node with a NIC each, one node per leaf: 8 spines, 64 flows from leaf 0 to leaf 1.
  const Topology t = two_leaf_fabric(8);
  Network network(t, 1.0);
  std::map<int, int> flows_per_spine;
  for (int a = 0; a < 8; ++a)
    for (int b = 8; b < 16; ++b)
      ++flows_per_spine[t.link(network.route(RankId(a), RankId(b))[1]).dst.value()];
  EXPECT_EQ(flows_per_spine.size(), 8u) << "every spine carries some of the flows";
  for (auto [spine, flows] : flows_per_spine)
    EXPECT_LE(flows, 16) << t.vertex_name(RankId(spine)) << " carries twice its share";
}

TEST(FabricTest, ASenderGoesOnWhenItsLinkHasCarriedTheTransfer) {
  const Topology t = two_leaf_fabric(2);
  Network network(t, 1.0);
  const auto route = network.route(RankId(0), RankId(2));
  ASSERT_EQ(route.size(), 4u);
  EXPECT_FALSE(network.start(route, 1'000'000, 0, Switching::StoreAndForward, 5));
  std::vector<Delivery> reports;
  network.advance(kNever, reports);
  ASSERT_EQ(reports.size(), 2u);
  // 1 MB at 50 GB/s is 20 us per link: the sender's NIC is done at 20 us, the transfer is
  // through four store-and-forward links (and their latencies) after.
  EXPECT_FALSE(reports[0].arrived);
  EXPECT_EQ(reports[0].first_hop_end, 20'000'000);
  EXPECT_TRUE(reports[1].arrived);
  Picoseconds latencies = 0;
  for (LinkId l : route)
    latencies += to_ps(t.link(l).alpha);
  EXPECT_EQ(reports[1].times.arrival, 4 * 20'000'000 + latencies);
}

RC_GTEST_PROP(FabricProperty, AlltoallTakesAtLeastItsNicAndUplinkBounds, ()) {
  const int gpus = *rc::gen::inRange(2, 5);
  const int nodes = *rc::gen::inRange(2, 9);
  FatTree fabric;
  fabric.nics_per_node = gpus;
  fabric.nic_bandwidth = BytesPerNs{50};
  fabric.nodes_per_leaf = *rc::gen::inRange(1, 4);
  fabric.oversubscription = *rc::gen::element(1.0, 2.0, 4.0);
  fabric.tiers = *rc::gen::element(2, 3);
  fabric.leaves_per_pod = *rc::gen::inRange(1, 3);
  const auto t = fat_tree(nodes, *fully_connected(gpus), fabric);
  RC_ASSERT(t.has_value());
  const int64_t chunk = 1 << 20;
  const int n = t->num_ranks();
  auto r = simulate_steps(nccl::AlltoallSteps(n), *t, chunk, 1.0);
  RC_ASSERT(r.has_value());
  // Each GPU sends a chunk to each GPU of another node through its own NIC, and each leaf sends
  // the chunks of its nodes to the nodes of other leaves through its uplinks.
  const double ns_per_byte = 1.0 / 50.0;
  const double nic_bound_ns = double(gpus * (nodes - 1)) * double(chunk) * ns_per_byte;
  RC_ASSERT(double(r->completion) / 1000.0 >= nic_bound_ns);
  const int per_leaf = fabric.nodes_per_leaf;
  const int leaves = (nodes + per_leaf - 1) / per_leaf;
  if (leaves > 1) {
    // The first leaf is full: its uplinks carry its GPUs' chunks to every GPU outside it.
    const double out_bytes = double(per_leaf * gpus) * double(n - per_leaf * gpus) * double(chunk);
    const double uplink_gbps = double(per_leaf * gpus) * 50.0 / fabric.oversubscription;
    RC_ASSERT(double(r->completion) / 1000.0 >= out_bytes / uplink_gbps * (1 - 1e-9));
  }
}

} // namespace
} // namespace syncoll::simulator
