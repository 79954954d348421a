// Paced Allgather: meshes of every shape meet their cut bound in diameter steps where breadth-first
// and dimension-ordered schedules cannot, every schedule of every allowed step count passes the
// independent check and never beats the bound, and what a paced schedule cannot run on is refused.
#include "model/topology_library.h"
#include "synth/bounds.h"
#include "synth/grid.h"
#include "synth/paced.h"
#include "tests/synth/targets.h"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::synth {
namespace {

void expect_checks(const ScaleSchedule &s, const Topology &t, CollectiveKind kind) {
  auto collective = make_collective(kind, t.num_ranks(), s.algorithm.target.chunk_factor);
  ASSERT_TRUE(collective.has_value());
  const AlgorithmCheck check = check_algorithm(s.algorithm, t, *collective);
  EXPECT_TRUE(check.holds()) << check.violations.front().message;
}

TEST(PacedAllgatherTest, MeshesOfEveryShapeMeetTheBoundInDiameterSteps) {
  const struct {
    Expected<Topology> topology;
    int pieces, diameter;
  } cases[] = {{mesh2d(7, 12), 2, 17}, {mesh2d(3, 9), 2, 10},   {mesh2d(2, 8), 2, 8},
               {mesh2d(5, 5), 2, 8},   {mesh3d(3, 4, 5), 3, 9}, {mesh3d(4, 2, 3), 3, 6}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.topology->name());
    auto s = paced_allgather(*c.topology, c.pieces, c.diameter);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    EXPECT_EQ(s->algorithm.num_steps(), c.diameter);
    EXPECT_EQ(s->efficiency, (Fraction{1, 1}));
    EXPECT_EQ(s->cost, s->lambda);
    expect_checks(*s, *c.topology, CollectiveKind::Allgather);
  }
}

TEST(PacedAllgatherTest, BeatsBreadthFirstAndDimensionOrderedOnANonSquareMesh) {
  const Topology t = *mesh2d(7, 12);
  auto paced = paced_allgather(t, 2, 17);
  auto breadth = breadth_first_allgather(t, 2);
  auto grid = dimension_ordered_allgather(t, {7, 12}, 2);
  ASSERT_TRUE(paced && breadth && grid);
  EXPECT_TRUE(less(paced->cost, breadth->cost));
  EXPECT_TRUE(less(paced->cost, grid->schedule.cost));
}

TEST(PacedAllgatherTest, EveryStepCountChecksAndNeverBeatsTheBound) {
  const struct {
    Expected<Topology> topology;
    int pieces;
  } cases[] = {{mesh2d(4, 6), 1}, {mesh2d(3, 5), 3}, {torus2d(4, 4), 4},  {hypercube(4), 4},
               {ring(6), 1},      {line(5), 2},      {mesh3d(2, 2, 3), 2}};
  for (const auto &c : cases) {
    const Topology &t = *c.topology;
    const Distances hops = hop_distances(t);
    const int diameter = *std::max_element(hops.hops.begin(), hops.hops.end());
    for (int steps = diameter; steps <= diameter + 2; ++steps) {
      SCOPED_TRACE(fmt::format("{} in {} steps", t.name(), steps));
      auto s = paced_allgather(t, c.pieces, steps);
      ASSERT_TRUE(s.has_value()) << s.error().to_string();
      EXPECT_LE(s->algorithm.num_steps(), steps);
      EXPECT_FALSE(less(s->cost, s->lambda));
      EXPECT_FALSE(less(s->pipelined_cost, s->lambda));
      expect_checks(*s, t, CollectiveKind::Allgather);
    }
  }
}

TEST(PacedAllgatherTest, ReduceScatterAndAllreduceMeetTheirBoundsOnANonSquareMesh) {
  const Topology t = *mesh2d(3, 5);
  for (CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::Allreduce}) {
    SCOPED_TRACE(collective_kind_name(kind));
    auto s = paced(t, kind, 2, 6);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    EXPECT_EQ(s->efficiency, (Fraction{1, 1}));
    EXPECT_EQ(s->algorithm.num_steps(), kind == CollectiveKind::Allreduce ? 12 : 6);
    expect_checks(*s, t, kind);
  }
}

TEST(PacedAllgatherTest, PiecesAreTheBindingRanksIncomingBandwidth) {
  EXPECT_EQ(*paced_pieces(*mesh2d(3, 7)), 2);
  EXPECT_EQ(*paced_pieces(*mesh3d(3, 3, 4)), 3);
  EXPECT_EQ(*paced_pieces(*torus2d(4, 4)), 4);
  EXPECT_EQ(*paced_pieces(*hypercube(5)), 5);
}

TEST(PacedAllgatherTest, RefusesWhatItCannotRunOn) {
  const Topology mesh = *mesh2d(4, 4);
  auto short_of_diameter = paced_allgather(mesh, 2, 5);
  ASSERT_FALSE(short_of_diameter.has_value());
  EXPECT_NE(short_of_diameter.error().to_string().find("from its diameter, 6"), std::string::npos);
  auto no_pieces = paced_allgather(mesh, 0, 6);
  ASSERT_FALSE(no_pieces.has_value());
  EXPECT_EQ(no_pieces.error().to_string(), "a share is cut into at least 1 piece, not 0\n");
  EXPECT_FALSE(paced_allgather(*mesh2d(64, 65), 5, 127).has_value()); // past 2^24 chunk copies
  // An NVSwitch box's links share each GPU's port through bandwidth relations.
  auto box = paced_allgather(dgx_h100(), 1, 1);
  ASSERT_FALSE(box.has_value());
  EXPECT_NE(box.error().to_string().find("bandwidth relations"), std::string::npos);
  EXPECT_FALSE(paced(mesh, CollectiveKind::Broadcast, 2, 6).has_value());
}

RC_GTEST_PROP(PacedAllgatherProperty, ChecksAndNeverBeatsTheCutBound, ()) {
  const auto topology =
      Topology::create(testing::random_connected_draft(*rc::gen::inRange(2, 9), 0));
  RC_ASSERT(topology.has_value());
  const int pieces = *rc::gen::inRange(1, 5);
  const Distances hops = hop_distances(*topology);
  const int steps = *std::max_element(hops.hops.begin(), hops.hops.end()) + *rc::gen::inRange(0, 3);
  auto schedule = paced_allgather(*topology, pieces, steps);
  RC_ASSERT(schedule.has_value());
  RC_ASSERT(schedule->algorithm.num_steps() <= steps);
  auto collective = make_collective(CollectiveKind::Allgather, topology->num_ranks(), pieces);
  RC_ASSERT(check_algorithm(schedule->algorithm, *topology, *collective).holds());
  // The cost again, from the sends alone.
  const std::optional<Fraction> cost =
      testing::cost_from_sends(schedule->algorithm, *topology, pieces);
  RC_ASSERT(cost.has_value());
  RC_ASSERT(*cost == schedule->cost);
  RC_ASSERT(!less(*cost, schedule->lambda));
}

} // namespace
} // namespace syncoll::synth
