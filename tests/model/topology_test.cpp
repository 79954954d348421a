#include "model/json_document.h"
#include "model/topology.h"
#include "model/topology_json.h"
#include "model/topology_library.h"

#include <gtest/gtest.h>

namespace syncoll {
namespace {

// SCCL's DGX-1 link multiplicities (msccl-tools' known topologies).
constexpr int kSccldgx1[8][8] = {{0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0},
                                 {1, 1, 0, 2, 0, 0, 2, 0}, {1, 2, 2, 0, 0, 0, 0, 1},
                                 {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
                                 {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0}};

TEST(TopologyTest, Dgx1CapacitiesEqualSccl) {
  Topology t = dgx1();
  ASSERT_EQ(t.num_ranks(), 8);
  // Check that every ordered pair has exactly SCCL's multiplicity, doubled links included.
  for (int s = 0; s < 8; ++s)
    for (int d = 0; d < 8; ++d)
      EXPECT_EQ(t.capacity(RankId(s), RankId(d)), kSccldgx1[d][s]) << s << "->" << d;
  // Check that bandwidth scales with multiplicity (25 GB/s per NVLink).
  EXPECT_DOUBLE_EQ(t.link(*t.find_link(RankId(0), RankId(1))).bandwidth.value, 50.0);
  EXPECT_DOUBLE_EQ(t.link(*t.find_link(RankId(0), RankId(2))).bandwidth.value, 25.0);
}

TEST(TopologyTest, MultinodeHasTwoLevelHierarchy) {
  TopologyParams p;
  p.nodes = 2;
  p.gpus = 8;
  auto t = make_library_topology("multinode", p);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->num_ranks(), 16);
  ASSERT_EQ(t->hierarchy().levels.size(), 2u);
  EXPECT_EQ(t->hierarchy().levels[0].size, 2);
  EXPECT_EQ(t->hierarchy().levels[1].size, 8);
  // Check that cross-node links exist and are capped by the node's NIC relations.
  auto cross = t->find_link(RankId(3), RankId(12));
  ASSERT_TRUE(cross);
  int relations_with_cross = 0;
  for (const auto &rel : t->relations())
    for (LinkId id : rel.links)
      relations_with_cross += id == *cross;
  EXPECT_EQ(relations_with_cross, 2); // node0.nic0.out and node1.nic0.in
}

TEST(TopologyTest, MultinodeWithDgx1Intra) {
  TopologyParams p;
  p.nodes = 2;
  p.gpus = 8;
  p.intra = "dgx1";
  p.nics = 4;
  auto t = make_library_topology("multinode", p);
  ASSERT_TRUE(t) << t.error().to_string();
  // Check that node 1 is a copy of the DGX-1 shifted by 8 ranks.
  EXPECT_EQ(t->capacity(RankId(8), RankId(9)), 2);
  EXPECT_EQ(t->capacity(RankId(8), RankId(13)), 0);
  EXPECT_EQ(t->relations().size(), 2u * 4u * 2u);
}

TEST(TopologyTest, EveryLibraryTopologyBuildsAndIsConnected) {
  for (const auto &entry : topology_library()) {
    TopologyParams p;
    if (entry.parameters.starts_with("-n"))
      p.n = 5;
    else if (entry.parameters.starts_with("--dims"))
      p.dims = 3;
    else if (entry.name == "torus3d" || entry.name == "mesh3d")
      p.shape = std::vector<int>{3, 2, 2};
    else if (entry.parameters.starts_with("--shape"))
      p.shape = std::vector<int>{3, 4};
    else if (entry.name == "multinode" || entry.name == "fat_tree")
      p.nodes = 3, p.gpus = 4;
    auto t = make_library_topology(entry.name, p);
    ASSERT_TRUE(t) << entry.name << ": " << t.error().to_string();
    // Check that every vertex (rank or switch) reaches every other (breadth first from rank 0).
    std::vector<bool> seen(size_t(t->num_vertices()), false);
    std::vector<int> queue{0};
    seen[0] = true;
    for (size_t i = 0; i < queue.size(); ++i)
      for (LinkId id : t->out_links(RankId(queue[i])))
        if (!seen[t->link(id).dst.index()])
          seen[t->link(id).dst.index()] = true, queue.push_back(t->link(id).dst.value());
    EXPECT_EQ(queue.size(), size_t(t->num_vertices())) << entry.name;
  }
}

TEST(TopologyTest, SizedShapesHaveExpectedLinkCounts) {
  EXPECT_EQ(hypercube(3)->links().size(), 24u);
  EXPECT_EQ(ring(2)->links().size(), 2u); // both neighbours are the same rank
  EXPECT_EQ(ring(5, false)->links().size(), 5u);
  EXPECT_EQ(torus2d(2, 2)->links().size(), 8u);
  EXPECT_EQ(mesh2d(3, 2)->links().size(), 14u);
  EXPECT_EQ(torus3d(3, 3, 3)->links().size(), 27u * 6u);
  EXPECT_EQ(mesh3d(3, 3, 3)->links().size(), 2u * 3u * (2u * 3u * 3u)); // 18 edges per axis
  EXPECT_EQ(hub_and_spoke(4)->relations().size(), 8u);
}

TEST(TopologyTest, ARailOptimizedFatTreeCablesEachNicToItsRailsLeaf) {
  FatTree fabric;
  fabric.nics_per_node = 4;
  fabric.nodes_per_leaf = 2;
  fabric.rails = true;
  auto t = fat_tree(4, *fully_connected(8), fabric);
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  // Two groups of two nodes, four rail leaves each (two ports down, two up), two spines.
  EXPECT_EQ(t->num_switches(), 2 * 4 + 2);
  EXPECT_EQ(t->switches()[1 * 4 + 3], "leaf1.rail3");
  // GPU 6 of node 2 uses NIC 3, so it cables to group 1's rail-3 leaf; GPUs 6 and 7 share it.
  EXPECT_TRUE(t->find_link(RankId(2 * 8 + 6), RankId(t->num_ranks() + 1 * 4 + 3)).has_value());
  EXPECT_FALSE(t->find_link(RankId(2 * 8 + 6), RankId(t->num_ranks() + 1 * 4 + 2)).has_value());
  fabric.tiers = 3;
  EXPECT_FALSE(fat_tree(4, *fully_connected(8), fabric).has_value());
}

TEST(TopologyTest, SccLSpellingsAreAccepted) {
  EXPECT_TRUE(make_library_topology("DGX1", {}));
  TopologyParams p;
  p.n = 4;
  EXPECT_TRUE(make_library_topology("FullyConnected", p));
  EXPECT_TRUE(make_library_topology("HubAndSpoke", p));
}

TEST(TopologyTest, BadParametersAreErrors) {
  EXPECT_FALSE(line(1));
  EXPECT_FALSE(hypercube(0));
  TopologyParams p;
  p.n = 4;
  auto e = make_library_topology("dgx1", p);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().to_string().find("does not take -n"), std::string::npos);
  EXPECT_FALSE(make_library_topology("ring", {}));
  EXPECT_FALSE(make_library_topology("nosuch", {}));
}

TEST(TopologyTest, CreateRejectsInvalidDrafts) {
  TopologyDraft d{"t", 3, {}, {{RankId(0), RankId(5), 1, {1}, {1}}}, {}, {}};
  auto t = Topology::create(d);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().items().front().pointer, "/links/0/dst");
  d.links = {{RankId(0), RankId(1), -2, {1}, {1}}};
  EXPECT_EQ(Topology::create(d).error().items().front().pointer, "/links/0/capacity");
  d.links = {{RankId(0), RankId(1), 1, {1}, {1}}, {RankId(0), RankId(1), 1, {1}, {1}}};
  EXPECT_EQ(Topology::create(d).error().items().front().pointer, "/links/1");
}

TEST(TopologyTest, JsonRoundTripOfLibraryTopologies) {
  for (const Topology &t : {dgx1(), dgx2(), amd8(), ndv2(), *torus2d(3, 3)}) {
    std::string text = to_canonical_json(topology_to_json(t));
    auto back = parse_topology_json(text, "mem.json");
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(*back, t);
    EXPECT_EQ(to_canonical_json(topology_to_json(*back)), text);
  }
}

TEST(TopologyTest, JsonErrorsAreLocated) {
  const std::string text = "{\n  \"name\": \"x\",\n  \"ranks\": 2,\n  \"links\": [\n"
                           "    {\"src\": 0, \"dst\": 1, \"capacity\": 0, \"alpha_ns\": 1, "
                           "\"bandwidth_gbps\": 1}\n  ]\n}\n";
  auto t = parse_topology_json(text, "x.json");
  ASSERT_FALSE(t);
  const Diagnostic &d = t.error().items().front();
  EXPECT_EQ(d.location.line, 5);
  EXPECT_EQ(d.location.column, 38); // the value 0 after "capacity":
  EXPECT_EQ(d.to_string().substr(0, 12), "x.json:5:38:");
}

TEST(TopologyTest, SwitchesAreVerticesAfterTheRanks) {
  // Ranks 0 and 1 behind switch "sw", which is vertex 2.
  TopologyDraft d;
  d.name = "two_behind_a_switch";
  d.num_ranks = 2;
  d.switches = {"sw"};
  for (int r = 0; r < 2; ++r) {
    d.links.push_back({RankId(r), RankId(2), 1, Nanoseconds{100}, BytesPerNs{50}});
    d.links.push_back({RankId(2), RankId(r), 1, Nanoseconds{100}, BytesPerNs{50}});
  }
  auto t = Topology::create(d);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->num_vertices(), 3);
  EXPECT_TRUE(t->is_switch(RankId(2)));
  EXPECT_EQ(t->vertex_name(RankId(2)), "sw");
  EXPECT_FALSE(t->find_link(RankId(0), RankId(1)));
  EXPECT_TRUE(t->reaches(RankId(0), RankId(1)));
  EXPECT_EQ(t->out_links(RankId(2)).size(), 2u);
  // The switches survive the JSON form.
  auto back = parse_topology_json(to_canonical_json(topology_to_json(*t)), "mem.json");
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, *t);
  // Check that a link past the last switch, and a second switch of the same name, are errors.
  d.links.push_back({RankId(0), RankId(3), 1, Nanoseconds{100}, BytesPerNs{50}});
  EXPECT_EQ(Topology::create(d).error().items().front().pointer, "/links/4/dst");
  d.links.pop_back();
  d.switches.push_back("sw");
  EXPECT_EQ(Topology::create(d).error().items().front().pointer, "/switches/1");
}

TEST(TopologyTest, SwitchFabricsThatDoNotMeetDoNotReach) {
  // Rank 0 sends into switch A, rank 1 receives from switch B; A and B are not joined.
  TopologyDraft d;
  d.name = "split";
  d.num_ranks = 2;
  d.switches = {"A", "B"};
  d.links.push_back({RankId(0), RankId(2), 1, Nanoseconds{100}, BytesPerNs{50}});
  d.links.push_back({RankId(3), RankId(1), 1, Nanoseconds{100}, BytesPerNs{50}});
  auto t = Topology::create(d);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->reaches(RankId(0), RankId(1)));
  d.links.push_back({RankId(2), RankId(3), 1, Nanoseconds{100}, BytesPerNs{50}});
  EXPECT_TRUE(Topology::create(d)->reaches(RankId(0), RankId(1)));
}

TEST(TopologyTest, FatTreeHasLeavesSpinesAndOversubscribedUplinks) {
  FatTree fabric;
  fabric.nics_per_node = 4;
  fabric.nic_bandwidth = BytesPerNs{50};
  fabric.nodes_per_leaf = 2;
  fabric.oversubscription = 2;
  auto t = fat_tree(8, *fully_connected(4), fabric);
  ASSERT_TRUE(t) << t.error().to_string();
  // 4 leaves of 2 nodes: 8 NIC ports each, 8 / 2 = 4 uplinks, so 4 spines.
  EXPECT_EQ(t->num_ranks(), 32);
  EXPECT_EQ(t->num_switches(), 8);
  EXPECT_EQ(t->switches().front(), "leaf0");
  EXPECT_EQ(t->switches().back(), "spine3");
  // Links: 12 per node inside, a NIC cable each way per GPU, a cable each way per leaf and spine.
  EXPECT_EQ(t->links().size(), size_t(8 * 12 + 32 * 2 + 4 * 4 * 2));
  const RankId leaf0(32), spine0(36);
  // An uplink carries the leaf's 8 x 50 GB/s of NICs over 2, spread over 4 spines.
  EXPECT_DOUBLE_EQ(t->link(*t->find_link(leaf0, spine0)).bandwidth.value, 50.0);
  EXPECT_DOUBLE_EQ(t->link(*t->find_link(RankId(0), leaf0)).bandwidth.value, 50.0);
  EXPECT_TRUE(t->reaches(RankId(0), RankId(31)));

  // Three tiers: 2 pods of 2 leaves, 4 aggregation switches per pod, 4 core groups of 2.
  fabric.tiers = 3;
  fabric.leaves_per_pod = 2;
  auto three = fat_tree(8, *fully_connected(4), fabric);
  ASSERT_TRUE(three) << three.error().to_string();
  EXPECT_EQ(three->num_switches(), 4 + 2 * 4 + 4 * 2);
  EXPECT_EQ(three->switches().back(), "core3.1");
  EXPECT_EQ(three->links().size(), size_t(8 * 12 + 32 * 2 + 4 * 4 * 2 + 2 * 4 * 2 * 2));
}

TEST(TopologyTest, FatTreeSharesANicBetweenItsGpus) {
  FatTree fabric;
  fabric.nics_per_node = 2;
  auto t = fat_tree(2, *fully_connected(4), fabric);
  ASSERT_TRUE(t) << t.error().to_string();
  // GPUs 0 and 1 share NIC 0: one relation for each direction of each NIC.
  EXPECT_EQ(t->relations().size(), size_t(2 * 2 * 2));
  EXPECT_EQ(t->relations().front().name, "node0.nic0.out");
  EXPECT_EQ(t->relations().front().links.size(), 2u);
}

TEST(TopologyTest, FatTreeRejectsImpossibleFabrics) {
  FatTree fabric;
  fabric.tiers = 4;
  EXPECT_FALSE(fat_tree(4, *fully_connected(4), fabric));
  fabric.tiers = 2;
  fabric.oversubscription = 0.5;
  EXPECT_FALSE(fat_tree(4, *fully_connected(4), fabric));
  fabric.oversubscription = 1;
  fabric.nodes_per_leaf = 0;
  EXPECT_FALSE(fat_tree(4, *fully_connected(4), fabric));
  fabric.nodes_per_leaf = 4;
  fabric.nics_per_node = 5;
  EXPECT_FALSE(fat_tree(4, *fully_connected(4), fabric));
  TopologyParams p;
  p.nodes = 2, p.gpus = 4, p.tiers = 2;
  EXPECT_FALSE(make_library_topology("multinode", p)) << "--tiers is a fat_tree option";
}

} // namespace
} // namespace syncoll
