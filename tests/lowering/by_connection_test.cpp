// Lowering by connection (lowering/by_connection.h): synthesized schedules of every size reach a
// verified program that runs and simulates at the schedule's own cost.
#include "backend/executor.h"
#include "lowering/by_connection.h"
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "synth/scale.h"
#include "synth/synthesize.h"
#include "testing/generators.h"
#include "tests/synth/targets.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::lowering {
namespace {

int total_thread_blocks(const Program &p) {
  int n = 0;
  for (const RankProgram &rp : p.ranks())
    n += int(rp.thread_blocks.size());
  return n;
}

double simulated_us(const Program &p, const Topology &t, int64_t bytes) {
  simulator::ProgramSimOptions o;
  o.size_bytes = bytes;
  auto sim = simulator::simulate_program(p, t, o);
  SYNCOLL_INVARIANT(sim && !sim->deadlocked, "simulation");
  return double(sim->result.completion) / 1e6;
}

void expect_runs_correctly(const verifier::VerifiedProgram &verified, int64_t chunk_bytes) {
  const auto e = backend::ExecutableProgram::lower(verified);
  backend::RunOptions o;
  o.size_bytes = int64_t(nccl_tests_chunks(e.collective())) * chunk_bytes;
  auto run = backend::run_on_cpu(e, o);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_TRUE(run->correct()) << run->mismatches << " wrong, "
                              << (run->completed ? "completed" : "hung");
}

// SCCL's DGX-1 instances: by connection, no more thread blocks or channels than the GC3 passes
// give them, and no slower at a latency-bound and a bandwidth-bound size.
TEST(ConnectionLoweringTest, SynthesizedInstancesNeedNoMoreThreadBlocksThanTheGc3Passes) {
  const Topology t = dgx1();
  for (auto [kind, c, s, r] : {std::tuple{CollectiveKind::Allgather, 1, 2, 2},
                               std::tuple{CollectiveKind::Allgather, 2, 2, 3},
                               std::tuple{CollectiveKind::Allreduce, 8, 4, 4},
                               std::tuple{CollectiveKind::Alltoall, 1, 3, 3}}) {
    SCOPED_TRACE(fmt::format("{} C{} S{} R{}", collective_kind_name(kind), c, s, r));
    synth::Target target;
    target.kind = kind;
    auto answer = synth::synthesize(t, target, c, {s, r}, {});
    ASSERT_TRUE(answer && answer->verdict == synth::Verdict::Sat);
    auto spec = target.collective(t.num_ranks(), c);
    ASSERT_TRUE(spec);
    auto dsl = algorithm_to_dsl(*answer->algorithm, t, *spec);
    ASSERT_TRUE(dsl);
    auto gc3 = lower(*dsl);
    ASSERT_TRUE(gc3 && gc3->verified) << gc3->verified.error().to_text();
    auto ours = lower_by_connection(*answer->algorithm, t, *spec);
    ASSERT_TRUE(ours) << ours.error().to_string();
    ASSERT_TRUE(ours->verified) << ours->verified.error().to_text();
    EXPECT_TRUE(ours->advice.empty());
    EXPECT_LE(total_thread_blocks(ours->program), total_thread_blocks(gc3->program));
    EXPECT_LE(ours->program.num_channels(), gc3->program.num_channels());
    for (int64_t bytes : {int64_t(1) << 20, int64_t(1) << 30})
      EXPECT_LE(simulated_us(ours->program, t, bytes), simulated_us(gc3->program, t, bytes) * 1.001)
          << bytes << " B";
    expect_runs_correctly(*ours->verified, 64);
  }
}

// An 8x8 torus breadth-first Allgather (the schedule the GC3 passes could not lower: no channel
// below 32 was free): a thread block per connection, verified, correct on the CPU executor, and
// simulated within 5% of the schedule's own cost (steps x alpha + share x cost per byte).
TEST(ConnectionLoweringTest, ATorusScheduleLowersRunsAndSimulatesAtItsPlannedCost) {
  auto t = torus2d(8, 8);
  ASSERT_TRUE(t);
  auto schedule = synth::breadth_first(*t, CollectiveKind::Allgather, 4);
  ASSERT_TRUE(schedule);
  auto spec = make_collective(CollectiveKind::Allgather, 64, 4);
  ASSERT_TRUE(spec);
  auto ours = lower_by_connection(schedule->algorithm, *t, *spec);
  ASSERT_TRUE(ours) << ours.error().to_string();
  ASSERT_TRUE(ours->verified) << ours->verified.error().to_text();
  // Four neighbours: a thread block per connection (receives and the sends they feed share one),
  // a second lane where one lane would pass the executor's 64 steps.
  EXPECT_LE(ours->stats.max_thread_blocks, 2 * 8);
  EXPECT_LE(ours->program.num_channels(), 2);
  const int64_t bytes = int64_t(256) << 20;
  const double share = double(bytes) / 64;
  const double planned_us =
      synth::planned_ns(*t, schedule->algorithm.num_steps(), schedule->cost, share) / 1000;
  const double simulated = simulated_us(ours->program, *t, bytes);
  EXPECT_NEAR(simulated / planned_us, 1.0, 0.05) << simulated << " us vs " << planned_us;
  expect_runs_correctly(*ours->verified, 64);
}

// ReduceScatter and Allreduce (reductions into chunks that are also being sent on) lower, verify
// and give the right sums.
TEST(ConnectionLoweringTest, ReductionsLowerVerifyAndRunCorrectly) {
  auto t = torus2d(4, 4);
  ASSERT_TRUE(t);
  for (CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::Allreduce}) {
    SCOPED_TRACE(std::string(collective_kind_name(kind)));
    auto schedule = synth::breadth_first(*t, kind, 1);
    ASSERT_TRUE(schedule) << schedule.error().to_string();
    auto spec = make_collective(kind, 16, kind == CollectiveKind::Allreduce ? 16 : 1);
    ASSERT_TRUE(spec);
    auto ours = lower_by_connection(schedule->algorithm, *t, *spec);
    ASSERT_TRUE(ours) << ours.error().to_string();
    ASSERT_TRUE(ours->verified) << ours->verified.error().to_text();
    expect_runs_correctly(*ours->verified, 64);
  }
}

// A schedule that cannot fit the executor still lowers; the verifier's resources verdict says
// which limit, and the advice what would fit. Checked anyway, everything else holds.
TEST(ConnectionLoweringTest, AScheduleBeyondTheExecutorIsAResourcesVerdictNamingTheLimit) {
  auto t = torus2d(4, 4);
  ASSERT_TRUE(t);
  auto schedule = synth::breadth_first(*t, CollectiveKind::Allgather, 4);
  ASSERT_TRUE(schedule);
  auto spec = make_collective(CollectiveKind::Allgather, 16, 4);
  ASSERT_TRUE(spec);
  auto expect_only_resources = [](const LoweredAlgorithm &l) {
    ASSERT_FALSE(l.verified);
    for (const verifier::Verdict &v : l.verified.error().verdicts)
      EXPECT_TRUE(v.property == verifier::Property::Resources ||
                  v.kind == verifier::VerdictKind::Holds)
          << l.verified.error().to_text();
  };
  ConnectionLoweringOptions steps;
  steps.check_unfit_programs = true;
  steps.limits.max_steps_per_tb = 2;
  steps.limits.max_channels = 2;
  auto few_steps = lower_by_connection(schedule->algorithm, *t, *spec, steps);
  ASSERT_TRUE(few_steps);
  expect_only_resources(*few_steps);
  ASSERT_EQ(few_steps->advice.size(), 1u);
  EXPECT_NE(few_steps->advice[0].find("MSCCL_MAX_NUM_STEPS >= "), std::string::npos)
      << few_steps->advice[0];

  // Unchecked, the deeper properties are unknown, never a pass or a failure.
  ConnectionLoweringOptions resident;
  resident.limits.sm_budget = 3;
  auto few_blocks = lower_by_connection(schedule->algorithm, *t, *spec, resident);
  ASSERT_TRUE(few_blocks);
  ASSERT_FALSE(few_blocks->verified);
  const verifier::Report &report = few_blocks->verified.error();
  EXPECT_EQ(report.verdict(verifier::Property::Resources).kind, verifier::VerdictKind::Violated);
  for (verifier::Property p : {verifier::Property::DeadlockFreedom, verifier::Property::RaceFreedom,
                               verifier::Property::Postcondition})
    EXPECT_EQ(report.verdict(p).kind, verifier::VerdictKind::Unknown);
  ASSERT_EQ(few_blocks->advice.size(), 1u);
  EXPECT_NE(few_blocks->advice[0].find("thread blocks per rank: rank 0 has"), std::string::npos)
      << few_blocks->advice[0];
}

// Whatever the synthesizer finds on a small topology, in any protocol and with replication,
// lowers by connection to a program every check passes and the CPU executor runs to the
// collective's result.
RC_GTEST_PROP(ConnectionLoweringProperty, SynthesizedAlgorithmsLowerToVerifiedPrograms, ()) {
  const auto synthesized = synth::testing::small_synthesized();
  RC_PRE(synthesized.has_value());
  RC_TAG(collective_kind_name(synthesized->kind));
  ConnectionLoweringOptions options;
  options.protocol = *rc::gen::element(Protocol::Simple, Protocol::LL, Protocol::LL128);
  options.instances = *rc::gen::inRange(1, 3);
  auto lowered = lower_by_connection(synthesized->algorithm, synthesized->topology,
                                     synthesized->collective, options);
  RC_ASSERT(lowered.has_value());
  if (!lowered->verified)
    RC_FAIL(lowered->verified.error().to_text());
  const auto e = backend::ExecutableProgram::lower(*lowered->verified);
  backend::RunOptions ro;
  ro.size_bytes =
      int64_t(nccl_tests_chunks(e.collective())) * 4 * *rc::gen::element<int64_t>(1, 8, 3000);
  auto run = backend::run_on_cpu(e, ro);
  RC_ASSERT(run.has_value());
  RC_ASSERT(run->correct());
}

// Random algorithms on random topologies (links of capacity 1-3, relations, custom collectives)
// lower by connection and verify.
RC_GTEST_PROP(ConnectionLoweringProperty, GeneratedAlgorithmsLowerToVerifiedPrograms, ()) {
  const testing::AlgorithmCase a = *testing::gen_algorithm();
  RC_TAG(a.topology.num_ranks());
  auto lowered = lower_by_connection(a.algorithm, a.topology, a.collective);
  RC_ASSERT(lowered.has_value());
  if (!lowered->verified)
    RC_FAIL(lowered->verified.error().to_text());
}

TEST(ConnectionLoweringTest, ASendOfAChunkItsSourceLacksIsBadInput) {
  auto t = torus2d(2, 2);
  ASSERT_TRUE(t);
  auto spec = make_collective(CollectiveKind::Allgather, 4, 1);
  ASSERT_TRUE(spec);
  Algorithm a;
  a.steps.push_back({1, {Send{ChunkId(1), RankId(0), RankId(1), SendOp::Copy}}});
  auto l = lower_by_connection(a, *t, *spec);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().to_string(), "step 1: rank 0 sends chunk 1 it does not hold\n");
}

} // namespace
} // namespace syncoll::lowering
