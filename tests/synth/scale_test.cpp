// Breadth-first Allgather schedules: optimal in diameter steps where the topology is regular
// enough, never better than the cut bound anywhere, and always passing the independent check.
#include "model/topology_library.h"
#include "synth/scale.h"
#include "tests/synth/targets.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::synth {
namespace {

ScaleSchedule checked_schedule(const Expected<Topology> &topology, int chunks) {
  EXPECT_TRUE(topology.has_value());
  auto schedule = breadth_first_allgather(*topology, chunks);
  EXPECT_TRUE(schedule.has_value()) << (schedule ? "" : schedule.error().to_string());
  auto collective = make_collective(CollectiveKind::Allgather, topology->num_ranks(), chunks);
  EXPECT_TRUE(collective.has_value());
  const AlgorithmCheck check = check_algorithm(schedule->algorithm, *topology, *collective);
  EXPECT_TRUE(check.holds()) << check.violations.front().message;
  return *schedule;
}

TEST(BreadthFirstAllgatherTest, MeshesReachTheCutBoundPipelined) {
  // Step by step no mesh step is balanced; with every step in flight the busiest link carries
  // exactly the corner's share.
  for (auto [w, h] : {std::pair{8, 8}, {5, 7}}) {
    SCOPED_TRACE(fmt::format("{}x{}", w, h));
    const ScaleSchedule s = checked_schedule(mesh2d(w, h), 2);
    EXPECT_TRUE(less(s.efficiency, Fraction{1, 1}));
    EXPECT_EQ(s.pipelined_efficiency, (Fraction{1, 1}));
  }
}

TEST(BreadthFirstAllgatherTest, ToriAndHypercubesReachTheCutBoundInDiameterSteps) {
  // Enough pieces that every step's chunks split evenly over a rank's links.
  const struct {
    Expected<Topology> topology;
    int chunks, diameter;
  } cases[] = {{torus2d(4, 4), 4, 4},     {torus2d(8, 8), 4, 8}, {torus2d(4, 8), 8, 6},
               {torus3d(4, 4, 4), 12, 6}, {hypercube(4), 4, 4},  {ring(8), 2, 4}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.topology->name());
    const ScaleSchedule s = checked_schedule(c.topology, c.chunks);
    EXPECT_EQ(s.algorithm.num_steps(), c.diameter);
    EXPECT_EQ(s.efficiency, (Fraction{1, 1}));
    EXPECT_EQ(s.cost, s.lambda);
  }
}

TEST(BreadthFirstAllgatherTest, ReduceScatterAndAllreduceReachTheirBoundsOnATorus) {
  const Topology torus = *torus2d(4, 8);
  for (const CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::Allreduce}) {
    SCOPED_TRACE(collective_kind_name(kind));
    auto s = breadth_first(torus, kind, 8);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    auto collective = make_collective(kind, torus.num_ranks(), s->algorithm.target.chunk_factor);
    ASSERT_TRUE(collective.has_value());
    const AlgorithmCheck check = check_algorithm(s->algorithm, torus, *collective);
    EXPECT_TRUE(check.holds()) << check.violations.front().message;
    EXPECT_EQ(s->efficiency, (Fraction{1, 1}));
    EXPECT_EQ(s->algorithm.num_steps(), kind == CollectiveKind::Allreduce ? 12 : 6);
    EXPECT_EQ(s->bounds.size(), kind == CollectiveKind::Allreduce ? 2u : 1u);
    EXPECT_EQ(s->bounds.front().direction, CutDirection::Entering);
  }
  auto too_big = breadth_first(*torus2d(16, 32), CollectiveKind::Allreduce, 1);
  ASSERT_FALSE(too_big.has_value());
  EXPECT_NE(too_big.error().to_string().find("2^24"), std::string::npos);
  EXPECT_FALSE(breadth_first(torus, CollectiveKind::Alltoall, 1).has_value());
}

TEST(BreadthFirstAllgatherTest, TooFewPiecesLoseToRoundingAndSaySo) {
  // 8 ranks on a ring: the one rank 4 hops away arrives over two links, half a share each.
  const ScaleSchedule whole = checked_schedule(ring(8), 1);
  EXPECT_EQ(whole.efficiency, Fraction::of(7, 8));
  EXPECT_EQ(whole.algorithm.total_rounds(), 4);
}

TEST(BreadthFirstAllgatherTest, LargerMeshesStayBelowTheBoundAlongShortestPaths) {
  // On 4 x 4 the corner's 15 shares still arrive evenly over its 2 links; on 8 x 8 shortest
  // paths bring too many of them in the middle steps, when the centre's links set the pace.
  EXPECT_EQ(checked_schedule(mesh2d(4, 4), 2).efficiency, (Fraction{1, 1}));
  const ScaleSchedule s = checked_schedule(mesh2d(8, 8), 2);
  EXPECT_EQ(s.algorithm.num_steps(), 14);
  EXPECT_TRUE(less(s.efficiency, Fraction::of(95, 100))) << to_string(s.efficiency);
  EXPECT_TRUE(less(Fraction::of(9, 10), s.efficiency)) << to_string(s.efficiency);
}

TEST(BreadthFirstAllgatherTest, RefusesSwitchesAndOversizedSchedules) {
  FatTree fabric;
  fabric.nics_per_node = 8;
  auto switched = breadth_first_allgather(*fat_tree(2, dgx_h100(), fabric), 1);
  ASSERT_FALSE(switched.has_value());
  EXPECT_NE(switched.error().to_string().find("has switches"), std::string::npos);
  auto oversized = breadth_first_allgather(*torus2d(64, 64), 2);
  ASSERT_FALSE(oversized.has_value());
  EXPECT_NE(oversized.error().to_string().find("2^24"), std::string::npos);
  EXPECT_FALSE(breadth_first_allgather(*ring(4), 0).has_value());
}

TEST(BreadthFirstAllgatherTest, TheSameTopologyGivesTheSameSchedule) {
  EXPECT_EQ(breadth_first_allgather(*mesh2d(3, 5), 3)->algorithm,
            breadth_first_allgather(*mesh2d(3, 5), 3)->algorithm);
}

RC_GTEST_PROP(BreadthFirstAllgatherProperty, ChecksAndNeverBeatsTheCutBound, ()) {
  const auto topology =
      Topology::create(testing::random_connected_draft(*rc::gen::inRange(2, 9), 0));
  RC_ASSERT(topology.has_value());
  const int chunks = *rc::gen::inRange(1, 5);
  auto schedule = breadth_first_allgather(*topology, chunks);
  RC_ASSERT(schedule.has_value());
  auto collective = make_collective(CollectiveKind::Allgather, topology->num_ranks(), chunks);
  RC_ASSERT(check_algorithm(schedule->algorithm, *topology, *collective).holds());
  // The cost again, from the sends alone.
  const std::optional<Fraction> cost =
      testing::cost_from_sends(schedule->algorithm, *topology, chunks);
  RC_ASSERT(cost.has_value());
  RC_ASSERT(*cost == schedule->cost);
  // A schedule that checks is a schedule, so the bound holds for it: efficiency <= 1.
  RC_ASSERT(!less(Fraction{1, 1}, schedule->efficiency));
  RC_ASSERT(!less(*cost, schedule->lambda));
}

RC_GTEST_PROP(BreadthFirstAllgatherProperty, ReductionsCheckAndNeverBeatTheirBounds, ()) {
  const auto topology =
      Topology::create(testing::random_connected_draft(*rc::gen::inRange(2, 7), 0));
  RC_ASSERT(topology.has_value());
  const CollectiveKind kind =
      *rc::gen::element(CollectiveKind::ReduceScatter, CollectiveKind::Allreduce);
  const int chunks = *rc::gen::inRange(1, 4);
  auto schedule = breadth_first(*topology, kind, chunks);
  RC_ASSERT(schedule.has_value());
  auto collective =
      make_collective(kind, topology->num_ranks(), schedule->algorithm.target.chunk_factor);
  RC_ASSERT(collective.has_value());
  RC_ASSERT(check_algorithm(schedule->algorithm, *topology, *collective).holds());
  RC_ASSERT(!less(Fraction{1, 1}, schedule->efficiency));
}

} // namespace
} // namespace syncoll::synth
