// Dimension-ordered Allgather on meshes: square and cubic meshes meet the corner's cut bound in
// diameter steps, every schedule passes the independent check, and a shape the topology does not
// have is refused.
#include "model/topology_library.h"
#include "synth/grid.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace syncoll::synth {
namespace {

ScaleSchedule checked(const Topology &t, const std::vector<int> &shape, int pieces) {
  auto s = dimension_ordered_allgather(t, shape, pieces);
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
  auto collective = make_collective(CollectiveKind::Allgather, t.num_ranks(), pieces);
  EXPECT_TRUE(collective.has_value());
  const AlgorithmCheck check = check_algorithm(s->schedule.algorithm, t, *collective);
  EXPECT_TRUE(check.holds()) << check.violations.front().message;
  return s->schedule;
}

TEST(DimensionOrderedAllgatherTest, SquareAndCubicMeshesMeetTheCornersBoundInDiameterSteps) {
  const struct {
    Expected<Topology> topology;
    std::vector<int> shape;
    int pieces, diameter;
  } cases[] = {{mesh2d(4, 4), {4, 4}, 2, 6},
               {mesh2d(8, 8), {8, 8}, 2, 14},
               {mesh2d(5, 5), {5, 5}, 4, 8},
               {mesh3d(4, 4, 4), {4, 4, 4}, 6, 9},
               {mesh3d(3, 3, 3), {3, 3, 3}, 3, 6}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.topology->name());
    const ScaleSchedule s = checked(*c.topology, c.shape, c.pieces);
    EXPECT_EQ(s.algorithm.num_steps(), c.diameter);
    EXPECT_EQ(s.efficiency, (Fraction{1, 1}));
    EXPECT_EQ(s.cost, s.lambda);
  }
}

TEST(DimensionOrderedAllgatherTest, OtherShapesCheckAndNeverBeatTheBound) {
  for (auto [w, h] : {std::pair{3, 5}, {2, 6}, {6, 4}}) {
    SCOPED_TRACE(fmt::format("{}x{}", w, h));
    const ScaleSchedule s = checked(*mesh2d(w, h), {w, h}, 4);
    EXPECT_EQ(s.algorithm.num_steps(), w + h - 2);
    EXPECT_FALSE(less(s.cost, s.lambda));
  }
  // A torus's wrap-around links go unused; the schedule still checks.
  const ScaleSchedule torus = checked(*torus2d(4, 4), {4, 4}, 2);
  EXPECT_FALSE(less(torus.cost, torus.lambda));
}

TEST(DimensionOrderedAllgatherTest, ReduceScatterAndAllreduceMeetTheirBoundsOnASquareMesh) {
  const Topology t = *mesh2d(4, 4);
  for (CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::Allreduce}) {
    SCOPED_TRACE(collective_kind_name(kind));
    auto s = dimension_ordered(t, {4, 4}, kind, 2);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    EXPECT_EQ(s->efficiency, (Fraction{1, 1}));
    EXPECT_EQ(s->algorithm.num_steps(), kind == CollectiveKind::Allreduce ? 12 : 6);
    auto collective = make_collective(kind, 16, s->algorithm.target.chunk_factor);
    ASSERT_TRUE(collective.has_value());
    const AlgorithmCheck check = check_algorithm(s->algorithm, t, *collective);
    EXPECT_TRUE(check.holds()) << check.violations.front().message;
  }
  EXPECT_FALSE(dimension_ordered(t, {4, 4}, CollectiveKind::Alltoall, 2).has_value());
}

TEST(DimensionOrderedAllgatherTest, RefusesAShapeTheTopologyDoesNotHave) {
  EXPECT_FALSE(dimension_ordered_allgather(*mesh2d(4, 4), {2, 8}, 2).has_value());
  EXPECT_FALSE(dimension_ordered_allgather(*mesh2d(4, 4), {4, 5}, 2).has_value());
  EXPECT_FALSE(dimension_ordered_allgather(*ring(16), {4, 4}, 2).has_value());
}

} // namespace
} // namespace syncoll::synth
