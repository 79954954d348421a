// Allgather on clusters of boxes: the pipelined trees meet the cut bound exactly, the step
// schedule comes within 1% of it in 2 log2 N steps, and every schedule passes the independent
// check.
#include "model/topology_library.h"
#include "synth/cluster.h"
#include "synth/cut_bound.h"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace syncoll::synth {
namespace {

Topology dgx_h100_cluster(int boxes) {
  auto t = multinode(boxes, dgx_h100(), 8, BytesPerNs{50});
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().to_string());
  return *t;
}

int log_steps(int ranks) {
  return 2 * int(std::ceil(std::log2(double(ranks))));
}

TEST(BoxClusterTest, PipelinedTreesMeetTheCutBoundExactly) {
  for (int boxes : {2, 3, 4, 5, 8, 16}) {
    SCOPED_TRACE(boxes);
    const Topology t = dgx_h100_cluster(boxes);
    auto cluster = box_cluster(t);
    ASSERT_TRUE(cluster.has_value()) << cluster.error().to_string();
    const int pieces = box_cluster_pieces(*cluster, 4);
    auto s = box_cluster_allgather(t, 4, pieces, ClusterPlanGoal::PipelinedTrees);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    EXPECT_EQ(s->pipelined_efficiency, (Fraction{1, 1}));
    EXPECT_TRUE(s->attained());
    // The max-flow bound, with its own certificate, agrees with the cluster's cut.
    auto bound = cut_bound(t, CutDirection::Leaving);
    ASSERT_TRUE(bound.has_value());
    EXPECT_EQ(bound->lambda, s->cut.lambda);
    EXPECT_FALSE(less(Fraction{1, 1}, s->efficiency));
    // The plan's own arithmetic, from two bandwidths, agrees with every send on the topology.
    EXPECT_EQ(s->plan.modelled_cost(s->units_per_gbps), s->cost);
  }
}

TEST(BoxClusterTest, StepsReachNinetyNinePercentInTwiceLogNSteps) {
  // 40 to 64 GPUs need two steps more: their NICs bind, and the pieces per step cannot fall fast
  // enough in 12 steps for the last step, in which only the box switches work, to be short (no
  // schedule can: the step limit below).
  for (auto [boxes, extra] : {std::pair{2, 0}, {3, 0}, {4, 0}, {5, 2}, {8, 2}, {16, 0}}) {
    SCOPED_TRACE(boxes);
    const Topology t = dgx_h100_cluster(boxes);
    auto s = box_cluster_allgather(t, log_steps(t.num_ranks()) + extra, 2048 / (boxes - 1),
                                   ClusterPlanGoal::StepSynchronous);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    EXPECT_GE(s->efficiency.value(), 0.99);
    EXPECT_FALSE(less(Fraction{1, 1}, s->efficiency));
    EXPECT_EQ(s->plan.modelled_cost(s->units_per_gbps), s->cost);
  }
}

TEST(BoxClusterTest, NoScheduleOfTwelveStepsReachesNinetyNinePercentOnFiveToEightH100Boxes) {
  for (int boxes : {5, 6, 7, 8}) {
    SCOPED_TRACE(boxes);
    const Topology t = dgx_h100_cluster(boxes);
    const BoxCluster cluster = *box_cluster(t);
    auto s = box_cluster_allgather(t, 12, 2048 / (boxes - 1), ClusterPlanGoal::StepSynchronous);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    auto limit = box_cluster_step_limit(cluster, 12, s->units_per_gbps);
    ASSERT_TRUE(limit.has_value()) << limit.error().to_string();
    // Every 12-step schedule takes at least the limit, which is more than the cut over 0.99; the
    // plan comes within 0.25% of it; 14 steps clear 99%.
    EXPECT_LT(quotient(s->cut.lambda, *limit).value(), 0.99);
    EXPECT_FALSE(less(s->cost, *limit));
    EXPECT_GT(quotient(*limit, s->cost).value(), 0.9975);
    EXPECT_GE(
        quotient(s->cut.lambda, *box_cluster_step_limit(cluster, 14, s->units_per_gbps)).value(),
        0.99);
  }
}

TEST(BoxClusterTest, TheStepLimitBoundsEveryPlanAndFallsToTheCutWithSteps) {
  for (const auto &[t, pieces] : {std::pair{dgx_h100_cluster(3), 6},
                                  {*multinode(4, dgx_a100(), 8, BytesPerNs{25}), 12},
                                  {*multinode(4, dgx_h100(), 4, BytesPerNs{50}), 12}}) {
    SCOPED_TRACE(t.name());
    const BoxCluster cluster = *box_cluster(t);
    Fraction before{1 << 30, 1};
    for (int steps = 1; steps <= 10; ++steps) {
      auto s = box_cluster_allgather(t, steps, pieces, ClusterPlanGoal::StepSynchronous);
      ASSERT_TRUE(s.has_value()) << s.error().to_string();
      auto limit = box_cluster_step_limit(cluster, steps, s->units_per_gbps);
      ASSERT_TRUE(limit.has_value());
      EXPECT_FALSE(less(s->cost, *limit)) << steps;
      EXPECT_FALSE(less(*limit, s->cut.lambda)) << steps;
      EXPECT_FALSE(less(before, *limit)) << steps;
      // One step can only send every share directly: the plan is the limit.
      if (steps == 1) {
        EXPECT_EQ(s->cost, *limit);
      }
      before = *limit;
    }
  }
  EXPECT_FALSE(box_cluster_step_limit(*box_cluster(dgx_h100_cluster(2)), 0, 1).has_value());
}

TEST(BoxClusterTest, SchedulesPassTheIndependentCheck) {
  for (int boxes : {2, 3, 6}) {
    for (int steps : {1, 2, 5}) {
      SCOPED_TRACE(fmt::format("{} boxes, {} steps", boxes, steps));
      const Topology t = dgx_h100_cluster(boxes);
      auto s = box_cluster_allgather(t, steps, 3, ClusterPlanGoal::StepSynchronous);
      ASSERT_TRUE(s.has_value()) << s.error().to_string();
      EXPECT_EQ(s->plan.num_steps(), steps);
      auto collective = make_collective(CollectiveKind::Allgather, t.num_ranks(), 3);
      ASSERT_TRUE(collective.has_value());
      const AlgorithmCheck check = check_algorithm(cluster_algorithm(*s, t), t, *collective);
      EXPECT_TRUE(check.holds()) << check.violations.front().message;
    }
  }
}

TEST(BoxClusterTest, ReduceScatterAndAllreduceAreTheAllgatherRunBackwardsAndThenForwards) {
  const Topology t = dgx_h100_cluster(2);
  const int pieces = 14; // the pipelined trees' direct share is 1/14 of a rail here
  auto allgather = box_cluster_collective(t, CollectiveKind::Allgather, 4, pieces,
                                          ClusterPlanGoal::PipelinedTrees);
  ASSERT_TRUE(allgather.has_value()) << allgather.error().to_string();
  for (CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::Allreduce}) {
    SCOPED_TRACE(collective_kind_name(kind));
    auto s = box_cluster_collective(t, kind, 4, pieces, ClusterPlanGoal::PipelinedTrees);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    // The machine is the same both ways, so each part costs what the Allgather does.
    const int parts = kind == CollectiveKind::Allreduce ? 2 : 1;
    EXPECT_EQ(s->num_steps(), 4 * parts);
    EXPECT_EQ(s->efficiency, allgather->efficiency);
    EXPECT_EQ(s->pipelined_efficiency, (Fraction{1, 1}));
    const Algorithm algorithm = cluster_collective_algorithm(*s, t);
    auto collective = make_collective(kind, t.num_ranks(),
                                      kind == CollectiveKind::Allreduce ? 16 * pieces : pieces);
    ASSERT_TRUE(collective.has_value());
    const AlgorithmCheck check = check_algorithm(algorithm, t, *collective);
    EXPECT_TRUE(check.holds()) << check.violations.front().message;
    // The streamed sends are the algorithm's, step by step, up to chunk numbering.
    std::vector<Send> streamed;
    for (int step = 0; step < s->num_steps(); ++step) {
      s->sends(step, streamed);
      EXPECT_EQ(streamed.size(), algorithm.steps[size_t(step)].sends.size()) << step;
    }
  }
  EXPECT_FALSE(box_cluster_collective(t, CollectiveKind::Alltoall, 4, pieces,
                                      ClusterPlanGoal::StepSynchronous)
                   .has_value());
}

TEST(BoxClusterTest, MoreStepsCostLessUpToTheBound) {
  const Topology t = dgx_h100_cluster(16);
  Fraction last{1 << 30, 1};
  for (int steps = 2; steps <= 12; steps += 2) {
    auto s = box_cluster_allgather(t, steps, 16, ClusterPlanGoal::StepSynchronous);
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(less(s->cost, last)) << steps;
    EXPECT_FALSE(less(s->cost, s->cut.lambda));
    last = s->cost;
  }
}

TEST(BoxClusterTest, OversubscribedLeafGroupsMeetTheFatTreesBound) {
  // Leaf groups of K boxes whose uplinks carry 1/R of their NICs, unwound to links, against the
  // same fat tree with its switches, whose bound the max-flow computes with its own certificate.
  const struct {
    int boxes, per_leaf;
    double oversubscription;
  } cases[] = {{8, 2, 4}, {8, 4, 8}, {12, 3, 2}, {8, 1, 2}};
  for (const auto &c : cases) {
    SCOPED_TRACE(
        fmt::format("{} boxes, leaves of {}, {}:1", c.boxes, c.per_leaf, c.oversubscription));
    auto t = multinode(c.boxes, dgx_h100(), 8, BytesPerNs{50},
                       LeafGroups{c.per_leaf, c.oversubscription});
    ASSERT_TRUE(t.has_value()) << t.error().to_string();
    auto cluster = box_cluster(*t);
    ASSERT_TRUE(cluster.has_value()) << cluster.error().to_string();
    EXPECT_EQ(cluster->boxes_per_group, c.per_leaf);
    FatTree fabric;
    fabric.nics_per_node = 8;
    fabric.nic_bandwidth = BytesPerNs{50};
    fabric.nodes_per_leaf = c.per_leaf;
    fabric.oversubscription = c.oversubscription;
    auto tree = fat_tree(c.boxes, dgx_h100(), fabric);
    ASSERT_TRUE(tree.has_value());
    auto bound = cut_bound(*tree, CutDirection::Leaving);
    ASSERT_TRUE(bound.has_value()) << bound.error().to_string();

    auto trees = box_cluster_allgather(*t, 6, 24, ClusterPlanGoal::PipelinedTrees);
    ASSERT_TRUE(trees.has_value()) << trees.error().to_string();
    EXPECT_EQ(trees->cut.lambda, bound->lambda);
    EXPECT_TRUE(trees->attained());

    auto steps = box_cluster_allgather(*t, 6, 24, ClusterPlanGoal::StepSynchronous);
    ASSERT_TRUE(steps.has_value()) << steps.error().to_string();
    EXPECT_FALSE(less(steps->cost, bound->lambda));
    EXPECT_EQ(steps->plan.modelled_cost(steps->units_per_gbps), steps->cost);
    auto collective = make_collective(CollectiveKind::Allgather, t->num_ranks(), 24);
    ASSERT_TRUE(collective.has_value());
    const AlgorithmCheck check = check_algorithm(cluster_algorithm(*steps, *t), *t, *collective);
    EXPECT_TRUE(check.holds()) << check.violations.front().message;
  }
}

TEST(BoxClusterTest, SharedNicsMeetTheFatTreesBoundWhereTheNicsBind) {
  // Boxes whose GPUs share NICs two or four to one, against the same fat tree's max-flow bound.
  for (auto [boxes, nics] : {std::pair{2, 2}, {4, 2}, {4, 4}, {16, 4}}) {
    SCOPED_TRACE(fmt::format("{} boxes, {} NICs each", boxes, nics));
    auto t = multinode(boxes, dgx_a100(), nics, BytesPerNs{50});
    ASSERT_TRUE(t.has_value());
    auto cluster = box_cluster(*t);
    ASSERT_TRUE(cluster.has_value()) << cluster.error().to_string();
    EXPECT_EQ(cluster->gpus_per_nic, 8 / nics);
    FatTree fabric;
    fabric.nics_per_node = nics;
    fabric.nic_bandwidth = BytesPerNs{50};
    auto bound = cut_bound(*fat_tree(boxes, dgx_a100(), fabric), CutDirection::Leaving);
    ASSERT_TRUE(bound.has_value()) << bound.error().to_string();
    const int pieces = box_cluster_pieces(*cluster, 8);
    auto trees = box_cluster_allgather(*t, 6, pieces, ClusterPlanGoal::PipelinedTrees);
    ASSERT_TRUE(trees.has_value()) << trees.error().to_string();
    EXPECT_EQ(trees->cut.lambda, bound->lambda);
    EXPECT_TRUE(trees->attained());
    auto collective = make_collective(CollectiveKind::Allgather, t->num_ranks(), pieces);
    ASSERT_TRUE(collective.has_value());
    const AlgorithmCheck check = check_algorithm(cluster_algorithm(*trees, *t), *t, *collective);
    EXPECT_TRUE(check.holds()) << check.violations.front().message;
  }
}

TEST(BoxClusterTest, SharedNicsStayBelowASingleGpusCut) {
  // On 2 DGX A100 boxes with a NIC per two GPUs the binding cut is one GPU's, which counts the
  // whole shared NIC for that GPU; the trees, in which both GPUs of a NIC take in as much, reach
  // 13/14 of it. The cut is a bound, not a claim that the trees are optimal here.
  auto t = multinode(2, dgx_a100(), 4, BytesPerNs{50});
  ASSERT_TRUE(t.has_value());
  auto cluster = box_cluster(*t);
  ASSERT_TRUE(cluster.has_value());
  auto trees = box_cluster_allgather(*t, 6, box_cluster_pieces(*cluster, 8),
                                     ClusterPlanGoal::PipelinedTrees);
  ASSERT_TRUE(trees.has_value());
  EXPECT_EQ(trees->cut.name, "every GPU but rank 0");
  EXPECT_EQ(trees->pipelined_efficiency, Fraction::of(13, 14));
  EXPECT_FALSE(trees->attained());
}

TEST(BoxClusterTest, LeafGroupsNeedThreeSteps) {
  auto t = multinode(8, dgx_h100(), 8, BytesPerNs{50}, LeafGroups{2, 4});
  ASSERT_TRUE(t.has_value());
  auto s = box_cluster_allgather(*t, 2, 4, ClusterPlanGoal::StepSynchronous);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().to_string().find("at least 3 steps"), std::string::npos);
  EXPECT_FALSE(multinode(8, dgx_h100(), 8, BytesPerNs{50}, LeafGroups{3, 4}).has_value());
  EXPECT_FALSE(multinode(8, dgx_h100(), 8, BytesPerNs{50}, LeafGroups{2, 3}).has_value());
}

TEST(BoxClusterTest, RefusesWhatIsNotABoxCluster) {
  auto odd_nics = multinode(4, dgx_h100(), 3, BytesPerNs{50});
  auto tree = fat_tree(4, dgx_h100(), FatTree{.nics_per_node = 8, .nic_bandwidth = BytesPerNs{50}});
  for (const auto *t : {&odd_nics, &tree}) {
    ASSERT_TRUE(t->has_value());
    EXPECT_FALSE(box_cluster(**t).has_value());
  }
  EXPECT_FALSE(box_cluster(*torus2d(4, 4)).has_value());
}

} // namespace
} // namespace syncoll::synth
