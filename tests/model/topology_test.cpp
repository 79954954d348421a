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
    else if (entry.name == "torus3d")
      p.shape = std::vector<int>{3, 2, 2};
    else if (entry.parameters.starts_with("--shape"))
      p.shape = std::vector<int>{3, 4};
    else if (entry.name == "multinode")
      p.nodes = 3, p.gpus = 4;
    auto t = make_library_topology(entry.name, p);
    ASSERT_TRUE(t) << entry.name << ": " << t.error().to_string();
    // Check that every rank reaches every other (breadth-first search from rank 0).
    std::vector<bool> seen(size_t(t->num_ranks()), false);
    std::vector<int> queue{0};
    seen[0] = true;
    for (size_t i = 0; i < queue.size(); ++i)
      for (LinkId id : t->out_links(RankId(queue[i])))
        if (!seen[t->link(id).dst.index()])
          seen[t->link(id).dst.index()] = true, queue.push_back(t->link(id).dst.value());
    EXPECT_EQ(queue.size(), size_t(t->num_ranks())) << entry.name;
  }
}

TEST(TopologyTest, SizedShapesHaveExpectedLinkCounts) {
  EXPECT_EQ(hypercube(3)->links().size(), 24u);
  EXPECT_EQ(ring(2)->links().size(), 2u); // both neighbours are the same rank
  EXPECT_EQ(ring(5, false)->links().size(), 5u);
  EXPECT_EQ(torus2d(2, 2)->links().size(), 8u);
  EXPECT_EQ(mesh2d(3, 2)->links().size(), 14u);
  EXPECT_EQ(torus3d(3, 3, 3)->links().size(), 27u * 6u);
  EXPECT_EQ(hub_and_spoke(4)->relations().size(), 8u);
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
  TopologyDraft d{"t", 3, {{RankId(0), RankId(5), 1, {1}, {1}}}, {}, {}};
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

} // namespace
} // namespace syncoll
