// HiCCL's performance model as oracles for composed plans on uniform links (the simulator's
// default cost model: a hop costs alpha + bytes / beta, no executor overheads):
//  - a pipelined ring of S hops over m pieces takes (S + m - 1)(alpha + d / (m beta)), less the
//    (S - 1) alphas a relay overlaps with arriving data, and the best depth among those tried is
//    the one nearest m* = sqrt((S - 1) d / (alpha beta));
//  - a flat tree takes sum over levels of alpha_l + (f_l - 1) d / beta_l when a rank's sends
//    share its port;
//  - striping over s NICs moves the inter-node part about s times faster while the node's own
//    links carry s NICs' worth.
#include "compose/factorize.h"
#include "lowering/compile.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "tests/support/topologies.h"

#include <cmath>
#include <gtest/gtest.h>

namespace syncoll::compose {
namespace {

double simulate_us(CollectiveKind kind, const Hierarchy &h, const Topology &t, int64_t bytes,
                   double message_latency_us = 0, std::optional<int> root = 0) {
  const int ranks = t.num_ranks();
  auto c = Composition::standard(kind, ranks, 1, root);
  auto spec = make_collective(kind, ranks, 1, root);
  EXPECT_TRUE(c && spec);
  auto f = factorize(*c, *spec, h, t);
  EXPECT_TRUE(f) << f.error().to_string();
  auto lowered = lowering::lower(f->program);
  EXPECT_TRUE(lowered && lowered->verified);
  simulator::ProgramSimOptions o;
  o.size_bytes = bytes;
  // The plan's pipeline is the only one: the executor's own tiling of a chunk (2 MiB pieces)
  // would pipeline a relay's forward behind its receive, which the model leaves out.
  o.model.iteration_bytes.fill(int64_t(1) << 40);
  if (message_latency_us > 0)
    o.model.step_overhead = simulator::Picoseconds(message_latency_us * 1e6);
  auto sim = simulator::simulate_program(lowered->program, t, o);
  EXPECT_TRUE(sim && !sim->deadlocked);
  return double(sim->result.completion) / 1e6;
}

TEST(CostOracleTest, APipelinedRingTakesSPlusMMinusOneStages) {
  // Broadcast from rank 0 along the ring 0 -> 1 -> ... -> 5: S = 5 hops. Links have no latency of
  // their own: HiCCL's alpha is a point-to-point call's cost, paid by every message in turn, which
  // is the executor's step cost here.
  const Topology t = testing::uniform_fully_connected(6, 1, 0, 50);
  const double alpha_us = 2.0, beta = 50 * 1e3; // bytes per microsecond
  const int S = 5;
  const int64_t d = 1 << 20;
  double best_time = 1e300;
  int best_m = 0;
  for (int m : {1, 2, 4, 8, 16, 32}) {
    const double simulated =
        simulate_us(CollectiveKind::Broadcast, {{6}, 1, 6, m, {}}, t, d, alpha_us);
    const double model = (S + m - 1) * (alpha_us + double(d) / m / beta);
    // The model charges alpha on every stage of every piece; so does the executor, whose relay
    // pays its step cost once the piece it forwards has arrived (the dependency comes first).
    EXPECT_NEAR(simulated, model, 0.01 * model) << "pipeline depth " << m;
    if (simulated < best_time)
      best_time = simulated, best_m = m;
  }
  const double m_star = std::sqrt((S - 1) * double(d) / (alpha_us * beta));
  // The best depth tried is the power of two nearest the optimum (in ratio).
  EXPECT_LE(std::abs(std::log2(best_m) - std::log2(m_star)), 1.0)
      << "best " << best_m << ", m* " << m_star;
}

TEST(CostOracleTest, AFlatTreeSumsItsLevels) {
  // 3 nodes x 4 GPUs; GPUs behind a switch (a rank's sends share its port), one NIC per node.
  auto node = hub_and_spoke(4);
  ASSERT_TRUE(node);
  auto t = multinode(3, *node, 1, BytesPerNs{12.5});
  ASSERT_TRUE(t) << t.error().to_string();
  const int64_t d = 16 << 20;
  const double simulated = simulate_us(CollectiveKind::Broadcast, {{3, 4}, 1, 1, 1, {}}, *t, d);
  // Level 0: the root's NIC sends to 2 nodes; level 1: each node's holder to its 3 others.
  double alpha0 = 0, beta0 = 0, alpha1 = 0, beta1 = 0;
  for (const Link &l : t->links()) {
    const bool across = l.src.value() / 4 != l.dst.value() / 4;
    (across ? alpha0 : alpha1) = l.alpha.count / 1e3;
    (across ? beta0 : beta1) = l.bandwidth.value * 1e3;
  }
  const double model = alpha0 + 2 * double(d) / beta0 + alpha1 + 3 * double(d) / beta1;
  EXPECT_NEAR(simulated, model, 0.10 * model);
}

TEST(CostOracleTest, StripingOverNicsMultipliesTheInterNodeRate) {
  // 2 nodes x 8 GPUs, 4 NICs per node; the switch's ports are far faster than a NIC.
  auto node = hub_and_spoke(8);
  ASSERT_TRUE(node);
  auto t = multinode(2, *node, 4, BytesPerNs{5});
  ASSERT_TRUE(t);
  const int64_t d = 64 << 20;
  const double one = simulate_us(CollectiveKind::Broadcast, {{2, 8}, 1, 1, 1, {}}, *t, d);
  const double four = simulate_us(CollectiveKind::Broadcast, {{2, 8}, 4, 1, 1, {}}, *t, d);
  // About 4x on the part that crosses the nodes, which dominates here.
  EXPECT_GT(one / four, 3.0) << one << " us with one stripe, " << four << " with four";
  EXPECT_LT(one / four, 4.5);
}

} // namespace
} // namespace syncoll::compose
