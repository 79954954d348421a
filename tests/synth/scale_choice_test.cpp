// synth scale's choice (synth/scale_choice.h): the defaults and the cheapest method, which the CLI
// and the benches share.
#include "model/topology_library.h"
#include "synth/scale_choice.h"

#include <gtest/gtest.h>

namespace syncoll::synth {
namespace {

TEST(ScaleChoiceTest, DefaultsAreTheBindingPiecesWhereTheCollectiveModelHoldsThem) {
  auto mesh = mesh2d(4, 4);
  ASSERT_TRUE(mesh);
  EXPECT_EQ(default_direct_pieces(*mesh, CollectiveKind::Allgather), 2);
  // An Allreduce of 1,024 ranks holds no more than 16 chunks per rank: one piece.
  auto big = torus2d(32, 32);
  ASSERT_TRUE(big);
  EXPECT_EQ(default_direct_pieces(*big, CollectiveKind::Allreduce), 1);
  EXPECT_EQ(default_cluster_steps(1024), 20);
  EXPECT_TRUE(fits_collective_model(CollectiveKind::Allgather, 1024, 16));
  EXPECT_FALSE(fits_collective_model(CollectiveKind::Allgather, 1024, 17));
}

TEST(ScaleChoiceTest, AMeshGetsTheCheapestOfEveryMethodItTried) {
  auto mesh = mesh2d(4, 4);
  ASSERT_TRUE(mesh);
  ScaleRequest request;
  request.mesh_shape = std::vector<int>{4, 4};
  std::vector<std::string> said;
  request.progress = [&](std::string_view what) { said.emplace_back(what); };
  auto choice = choose_direct_schedule(*mesh, CollectiveKind::Allgather, request);
  ASSERT_TRUE(choice) << choice.error().to_string();
  EXPECT_EQ(choice->diameter, 6);
  ASSERT_GE(choice->candidates.size(), 2u);
  EXPECT_EQ(choice->candidates[0].method, "breadth-first");
  EXPECT_EQ(choice->candidates[1].method.rfind("dimension-ordered", 0), 0u);
  EXPECT_EQ(said.size(), choice->candidates.size());
  for (const ScaleCandidate &c : choice->candidates)
    EXPECT_FALSE(less(Fraction{1, 1}, c.efficiency)) << c.method;
  // The chosen one is the best of them.
  for (const ScaleCandidate &c : choice->candidates)
    EXPECT_FALSE(less(choice->schedule.efficiency, c.efficiency)) << c.method;
  EXPECT_TRUE(choice->paced_tried == (choice->candidates.size() > 2));
}

TEST(ScaleChoiceTest, StepsAskForOnePacedScheduleAlone) {
  auto mesh = mesh2d(4, 4);
  ASSERT_TRUE(mesh);
  ScaleRequest request;
  request.steps = 7;
  auto choice = choose_direct_schedule(*mesh, CollectiveKind::Allgather, request);
  ASSERT_TRUE(choice) << choice.error().to_string();
  ASSERT_EQ(choice->candidates.size(), 1u);
  EXPECT_TRUE(choice->candidates[0].paced);
  EXPECT_EQ(choice->method, "paced (7 steps planned)");
  request.steps = 2;
  EXPECT_FALSE(choose_direct_schedule(*mesh, CollectiveKind::Allgather, request));
}

} // namespace
} // namespace syncoll::synth
