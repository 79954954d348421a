// The exact cut bound against the closed forms of regular topologies and switch clusters, against
// brute force over every cut of random small topologies, and its certificate against tampering.
#include "model/cut_certificate.h"
#include "model/topology_library.h"
#include "synth/cut_bound.h"
#include "tests/synth/targets.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::synth {
namespace {

constexpr int64_t kLinkGbps = 50; // every regular topology's links

Fraction bound_of(const Expected<Topology> &topology, CutDirection direction) {
  EXPECT_TRUE(topology.has_value()) << (topology ? "" : topology.error().to_string());
  auto b = cut_bound(*topology, direction);
  EXPECT_TRUE(b.has_value()) << (b ? "" : b.error().to_string());
  EXPECT_EQ(b->flows_checked, topology->num_ranks());
  EXPECT_EQ(check_cut_bound(*topology, *b), std::nullopt);
  return b->bandwidth_gbps;
}

Fraction allgather_bound(const Expected<Topology> &topology) {
  return bound_of(topology, CutDirection::Leaving);
}

// N d b / (N - 1): a d-regular vertex-transitive graph, where one rank's own links bind.
Fraction regular(int64_t ranks, int64_t degree) {
  return Fraction::of(ranks * degree * kLinkGbps, ranks - 1);
}

TEST(CutBoundTest, TorusAndHypercubeAreBoundByOneRanksLinks) {
  EXPECT_EQ(allgather_bound(torus2d(4, 4)), regular(16, 4));
  EXPECT_EQ(allgather_bound(torus2d(16, 16)), regular(256, 4));
  EXPECT_EQ(allgather_bound(torus3d(4, 4, 4)), regular(64, 6));
  EXPECT_EQ(allgather_bound(hypercube(5)), regular(32, 5));
  EXPECT_EQ(allgather_bound(ring(9)), regular(9, 2));
  EXPECT_EQ(allgather_bound(ring(9, /*bidirectional=*/false)), regular(9, 1));
}

TEST(CutBoundTest, AMeshIsBoundByItsCorner) {
  EXPECT_EQ(allgather_bound(mesh2d(8, 8)), Fraction::of(64 * 2 * kLinkGbps, 63));
  EXPECT_EQ(allgather_bound(mesh2d(5, 5)), Fraction::of(25 * 2 * kLinkGbps, 24));
  EXPECT_EQ(allgather_bound(line(6)), Fraction::of(6 * kLinkGbps, 5));
}

// g GPUs per box on NVSwitch (s GB/s each), a NIC of n GB/s per GPU on a non-blocking fabric:
// B* = min(N (s + n) / (N - 1), N g n / (N - g)) (one GPU's links, or one box's NICs).
Fraction boxes(int64_t nodes, int64_t g, int64_t s, int64_t n) {
  const int64_t N = nodes * g;
  const Fraction one_gpu = Fraction::of(N * (s + n), N - 1);
  const Fraction one_box = Fraction::of(N * g * n, N - g);
  return less(one_gpu, one_box) ? one_gpu : one_box;
}

FatTree rails(int nics, double oversubscription) {
  FatTree f;
  f.nics_per_node = nics;
  f.nic_bandwidth = BytesPerNs{50};
  f.oversubscription = oversubscription;
  return f;
}

TEST(CutBoundTest, DgxH100BoxesOnANonBlockingFabricMatchTheClosedForm) {
  for (int nodes : {2, 4, 8, 16}) {
    SCOPED_TRACE(nodes);
    EXPECT_EQ(allgather_bound(fat_tree(nodes, dgx_h100(), rails(8, 1))), boxes(nodes, 8, 450, 50));
  }
  // 533.3 GB/s on two boxes (one GPU binds), 457.1 on eight (one box's NICs bind).
  EXPECT_EQ(allgather_bound(fat_tree(2, dgx_h100(), rails(8, 1))), Fraction::of(1600, 3));
  EXPECT_EQ(allgather_bound(fat_tree(8, dgx_h100(), rails(8, 1))), Fraction::of(3200, 7));
}

TEST(CutBoundTest, AnOversubscribedSpineBindsAtTheLeaf) {
  // Two leaves of four nodes (32 GPUs, 1,600 GB/s of NICs each) with 1/8 of that above: the 32
  // GPUs behind one leaf send through 200 GB/s.
  auto topology = fat_tree(8, dgx_h100(), rails(8, 8));
  auto b = cut_bound(*topology, CutDirection::Leaving);
  ASSERT_TRUE(b.has_value()) << b.error().to_string();
  EXPECT_EQ(b->bandwidth_gbps, Fraction::of(64 * 200, 32));
  EXPECT_EQ(b->value.ranks_inside, 32);
  EXPECT_EQ(b->value.bandwidth, 200 * b->units_per_gbps);
  // Rail-optimized, each group's 8 rail leaves have 25 GB/s above them each: the same 200.
  FatTree with_rails = rails(8, 8);
  with_rails.rails = true;
  auto railed = fat_tree(8, dgx_h100(), with_rails);
  ASSERT_TRUE(railed.has_value());
  EXPECT_EQ(railed->num_switches(), 2 * 8 + 1);
  EXPECT_EQ(allgather_bound(railed), Fraction::of(64 * 200, 32));
  // Non-blocking, rails or not, the box formula holds.
  with_rails.oversubscription = 1;
  EXPECT_EQ(allgather_bound(fat_tree(8, dgx_h100(), with_rails)), boxes(8, 8, 450, 50));
}

TEST(CutBoundTest, ReduceScatterIsAllgatherOnTheReversedLinks) {
  EXPECT_EQ(bound_of(torus2d(4, 4), CutDirection::Entering), regular(16, 4));
  EXPECT_EQ(bound_of(fat_tree(4, dgx_h100(), rails(8, 1)), CutDirection::Entering),
            boxes(4, 8, 450, 50));
  // A star whose spokes are faster inward: the hub receives over them (Allgather's binding
  // cut: everything but the hub), and sends over the slower outward links.
  TopologyDraft d;
  d.name = "fast_in_star";
  d.num_ranks = 4;
  for (int r = 1; r < 4; ++r) {
    d.links.push_back({RankId(r), RankId(0), 1, Nanoseconds{1}, BytesPerNs{30}});
    d.links.push_back({RankId(0), RankId(r), 1, Nanoseconds{1}, BytesPerNs{10}});
  }
  auto star = Topology::create(d);
  // Allgather: a spoke receives 3 shares over 10 GB/s. ReduceScatter: a spoke sends 3 over 30.
  EXPECT_EQ(allgather_bound(star), Fraction::of(4 * 10, 3));
  EXPECT_EQ(bound_of(star, CutDirection::Entering), Fraction::of(4 * 30, 3));
}

TEST(CutBoundTest, ACertificateWithAChangedCutOrRatioIsRejected) {
  auto topology = mesh2d(4, 4);
  auto b = cut_bound(*topology, CutDirection::Leaving);
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(check_cut_bound(*topology, *b), std::nullopt);
  CutBound wrong_ratio = *b;
  wrong_ratio.lambda = Fraction::of(b->lambda.num + 1, b->lambda.den);
  EXPECT_NE(check_cut_bound(*topology, wrong_ratio), std::nullopt);
  CutBound fewer = *b;
  fewer.cut.vertices.pop_back();
  EXPECT_NE(check_cut_bound(*topology, fewer), std::nullopt);
  CutBound everything = *b;
  everything.cut.vertices.clear();
  for (int r = 0; r < topology->num_ranks(); ++r)
    everything.cut.vertices.push_back(RankId(r));
  EXPECT_NE(check_cut_bound(*topology, everything), std::nullopt);
}

TEST(CutBoundTest, ATamperedFlowFailsItsCheck) {
  auto topology = ring(5);
  auto bandwidths = exact_bandwidths(*topology);
  ASSERT_TRUE(bandwidths.has_value());
  auto b = cut_bound(*topology, CutDirection::Leaving);
  ASSERT_TRUE(b.has_value());
  // Rank 0 takes in one unit from each rank over its two 50 GB/s links when lambda = 4/100: one
  // unit per 25 GB/s, split two and two.
  ASSERT_EQ(b->lambda, Fraction::of(4, 100));
  SinkFlow flow{RankId(0), 1, std::vector<int64_t>(topology->links().size(), 0), {1, 1, 1, 1, 1}};
  auto set = [&](int src, int dst, int64_t units) {
    for (size_t l = 0; l < topology->links().size(); ++l)
      if (topology->links()[l].src == RankId(src) && topology->links()[l].dst == RankId(dst))
        flow.links[l] = units;
  };
  set(1, 0, 2);
  set(2, 1, 1);
  set(4, 0, 2);
  set(3, 4, 1);
  EXPECT_EQ(check_sink_flow(*topology, *bandwidths, CutDirection::Leaving, b->lambda, flow),
            std::nullopt);
  // Three units over one link exceed it.
  set(1, 0, 3);
  set(2, 1, 2);
  set(4, 0, 1);
  set(3, 4, 0);
  set(3, 2, 1);
  EXPECT_NE(check_sink_flow(*topology, *bandwidths, CutDirection::Leaving, b->lambda, flow),
            std::nullopt);
  // A unit that vanishes on the way.
  set(1, 0, 2);
  set(2, 1, 1);
  set(4, 0, 1);
  set(3, 2, 0);
  set(3, 4, 1);
  EXPECT_NE(check_sink_flow(*topology, *bandwidths, CutDirection::Leaving, b->lambda, flow),
            std::nullopt);
}

TEST(CutBoundTest, RelationsOutsideAFlowNetworkAreRefusedWithTheReason) {
  // Two GPUs share a NIC whose relation caps links of several sources and destinations.
  auto shared_nic = multinode(2, dgx_h100(), 4, BytesPerNs{50});
  ASSERT_TRUE(shared_nic.has_value());
  auto b = cut_bound(*shared_nic, CutDirection::Leaving);
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.error().to_string().find("several sources and destinations"), std::string::npos)
      << b.error().to_string();
  // One NIC per GPU: each relation has one source (out) or one destination (in).
  EXPECT_EQ(allgather_bound(multinode(2, dgx_h100(), 8, BytesPerNs{50})), boxes(2, 8, 450, 50));
}

TEST(CutBoundTest, ARankWithNoWayOutHasNoBound) {
  TopologyDraft d;
  d.name = "sink";
  d.num_ranks = 3;
  d.links.push_back({RankId(0), RankId(1), 1, Nanoseconds{1}, BytesPerNs{10}});
  d.links.push_back({RankId(1), RankId(0), 1, Nanoseconds{1}, BytesPerNs{10}});
  d.links.push_back({RankId(0), RankId(2), 1, Nanoseconds{1}, BytesPerNs{10}});
  auto topology = Topology::create(d);
  ASSERT_TRUE(topology.has_value());
  auto b = cut_bound(*topology, CutDirection::Leaving);
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.error().to_string().find("rank 2"), std::string::npos) << b.error().to_string();
}

// Brute force: the largest |S ∩ ranks| / B+(S) over every S holding some rank and leaving one
// out, from the links alone (no relations).
Fraction brute_force_bound(const Topology &t) {
  const int v = t.num_vertices();
  Fraction best;
  bool any = false;
  for (uint32_t mask = 1; mask < (1u << v); ++mask) {
    int inside = 0;
    for (int r = 0; r < t.num_ranks(); ++r)
      inside += (mask >> r) & 1;
    if (inside == 0 || inside == t.num_ranks())
      continue;
    int64_t leaving = 0;
    for (const Link &l : t.links())
      if (((mask >> l.src.value()) & 1) && !((mask >> l.dst.value()) & 1))
        leaving += int64_t(l.bandwidth.value);
    if (leaving == 0)
      continue;
    const Fraction ratio = Fraction::of(inside, leaving);
    if (!any || less(best, ratio))
      best = ratio;
    any = true;
  }
  return Fraction::of(int64_t(t.num_ranks()) * best.den, best.num);
}

RC_GTEST_PROP(CutBoundProperty, EqualsTheBestCutFoundByBruteForce, ()) {
  const TopologyDraft d =
      testing::random_connected_draft(*rc::gen::inRange(2, 7), *rc::gen::inRange(0, 3));
  auto topology = Topology::create(d);
  RC_ASSERT(topology.has_value());
  for (const CutDirection direction : {CutDirection::Leaving, CutDirection::Entering}) {
    auto b = cut_bound(*topology, direction);
    RC_ASSERT(b.has_value());
    RC_ASSERT(!check_cut_bound(*topology, *b));
    if (direction == CutDirection::Leaving) {
      RC_ASSERT(b->bandwidth_gbps == brute_force_bound(*topology));
      continue;
    }
    TopologyDraft reversed = d;
    for (Link &l : reversed.links)
      std::swap(l.src, l.dst);
    RC_ASSERT(b->bandwidth_gbps == brute_force_bound(*Topology::create(reversed)));
  }
}

} // namespace
} // namespace syncoll::synth
