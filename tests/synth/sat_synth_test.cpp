// The SAT backend: SCCL Table 4 rows (the hard ones included), certified infeasibility, the
// Pareto frontier, and agreement with the SMT backend on random instances.
#include "model/topology_library.h"
#include "synth/synthesize.h"
#include "tests/synth/targets.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::synth {
namespace {

using testing::Row;
using testing::small_topology;
using testing::target_of;

SynthOptions sat(bool certify = false) {
  SynthOptions o;
  o.backend = Backend::Sat;
  o.certify = certify;
  return o;
}

class SatTable4Test : public ::testing::TestWithParam<Row> {};

TEST_P(SatTable4Test, RowIsSatisfiableAndChecks) {
  const Row row = GetParam();
  auto a = synthesize(dgx1(), target_of(row.kind), row.chunks, {row.steps, row.rounds}, sat());
  ASSERT_TRUE(a) << a.error().to_string();
  ASSERT_EQ(a->verdict, Verdict::Sat) << a->detail;
  EXPECT_EQ(a->algorithm->num_steps(), row.steps);
  EXPECT_EQ(a->algorithm->total_rounds(), row.rounds);
  const int spec_chunks = row.chunks;
  auto spec = make_collective(row.kind, 8, spec_chunks, target_of(row.kind).root);
  ASSERT_TRUE(spec);
  EXPECT_TRUE(check_algorithm(*a->algorithm, dgx1(), *spec).holds());
}

// With the SAT backend the hardest rows take about a second or less: the bandwidth-optimal
// Allgather, the composed 48/6/14 Allreduce and both 24-chunk Alltoall rows (Alltoall chunks
// here count per pair: 3 x 8 = 24 per rank).
INSTANTIATE_TEST_SUITE_P(Dgx1, SatTable4Test,
                         ::testing::Values(Row{CollectiveKind::Allgather, 1, 2, 2},
                                           Row{CollectiveKind::Allgather, 6, 7, 7},
                                           Row{CollectiveKind::Allgather, 6, 3, 7},
                                           Row{CollectiveKind::Allgather, 2, 2, 3},
                                           Row{CollectiveKind::ReduceScatter, 6, 3, 7},
                                           Row{CollectiveKind::Allreduce, 48, 6, 14},
                                           Row{CollectiveKind::Broadcast, 18, 5, 5},
                                           Row{CollectiveKind::Gather, 6, 3, 7},
                                           Row{CollectiveKind::Scatter, 6, 3, 7},
                                           Row{CollectiveKind::Alltoall, 3, 2, 8},
                                           Row{CollectiveKind::Alltoall, 3, 8, 8}));

TEST(SatSynthTest, InfeasibilityIsCertifiedOnRequest) {
  for (auto [c, s, r] : {std::tuple{3, 2, 4}, {5, 2, 6}}) {
    auto a = synthesize(dgx1(), target_of(CollectiveKind::Allgather), c, {s, r}, sat(true));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->verdict, Verdict::Unsat);
    EXPECT_NE(a->certificate.find("DRAT"), std::string::npos);
  }
  auto line =
      synthesize(*syncoll::line(4), target_of(CollectiveKind::Broadcast), 2, {3, 5}, sat(true));
  ASSERT_TRUE(line);
  EXPECT_EQ(line->verdict, Verdict::Unsat);
  // Without the option no proof is checked, and the answer does not claim one.
  auto plain = synthesize(dgx1(), target_of(CollectiveKind::Allgather), 3, {2, 4}, sat());
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->verdict, Verdict::Unsat);
  EXPECT_TRUE(plain->certificate.empty());
}

TEST(SatSynthTest, Dgx1AllgatherParetoFrontier) {
  ParetoOptions o;
  o.synth = sat();
  auto p = pareto(dgx1(), target_of(CollectiveKind::Allgather), o);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->frontier.size(), 2u);
  EXPECT_EQ(
      std::make_tuple(p->frontier[0].sr.steps, p->frontier[0].sr.rounds, p->frontier[0].chunks),
      std::make_tuple(2, 3, 2));
  EXPECT_EQ(
      std::make_tuple(p->frontier[1].sr.steps, p->frontier[1].sr.rounds, p->frontier[1].chunks),
      std::make_tuple(3, 7, 6));
}

TEST(SatSynthTest, ComposedAllreduceFrontierIsTheAllgathersDoubled) {
  // Each Allgather point (S, R, C) becomes ReduceScatter + Allgather: (2S, 2R, 8C) on DGX-1,
  // and every composed algorithm checks as that Allreduce.
  ParetoOptions o;
  o.synth = sat();
  auto p = pareto(dgx1(), target_of(CollectiveKind::Allreduce), o);
  ASSERT_TRUE(p) << p.error().to_string();
  ASSERT_EQ(p->frontier.size(), 2u);
  EXPECT_EQ(
      std::make_tuple(p->frontier[0].sr.steps, p->frontier[0].sr.rounds, p->frontier[0].chunks),
      std::make_tuple(4, 6, 16));
  EXPECT_EQ(
      std::make_tuple(p->frontier[1].sr.steps, p->frontier[1].sr.rounds, p->frontier[1].chunks),
      std::make_tuple(6, 14, 48));
  for (const ParetoPoint &point : p->frontier) {
    auto ar = make_collective(CollectiveKind::Allreduce, 8, point.chunks);
    EXPECT_TRUE(check_algorithm(point.algorithm, dgx1(), *ar).holds());
  }
  EXPECT_EQ(p->frontier[1].rounds_per_chunk, (Fraction{7, 24}));
}

TEST(SatSynthTest, FewestRoundsByAssumptionsMatchesOneCallPerRoundCount) {
  // least-steps with the rounds left open: SAT caps the rounds of one formula by assumptions,
  // SMT solves R = S, S + 1, ... separately; both must land on the same (S, R).
  SynthOptions smt;
  smt.backend = Backend::Smt;
  for (auto [topology, kind, chunks] : {std::tuple{*line(4), CollectiveKind::Broadcast, 2},
                                        {dgx1(), CollectiveKind::Allgather, 3},
                                        {*ring(5), CollectiveKind::Reduce, 2},
                                        {*star(4), CollectiveKind::Scatter, 2}}) {
    auto by_sat = least_steps(topology, target_of(kind), chunks, std::nullopt, 4, 8, sat());
    auto by_smt = least_steps(topology, target_of(kind), chunks, std::nullopt, 4, 8, smt);
    ASSERT_TRUE(by_sat && by_smt);
    ASSERT_TRUE(by_sat->found && by_smt->found);
    EXPECT_EQ(by_sat->found->algorithm->num_steps(), by_smt->found->algorithm->num_steps());
    EXPECT_EQ(by_sat->found->algorithm->total_rounds(), by_smt->found->algorithm->total_rounds())
        << collective_kind_name(kind) << " on " << topology.name();
  }
  auto line = least_steps(*syncoll::line(4), target_of(CollectiveKind::Broadcast), 2, std::nullopt,
                          4, 8, sat());
  ASSERT_TRUE(line && line->found);
  EXPECT_EQ(line->found->algorithm->total_rounds(), 6); // (S3,R5) is infeasible
  EXPECT_TRUE(line->proven_least);
}

TEST(SatSynthTest, TimeLimitGivesUnknown) {
  SynthOptions o = sat();
  o.time_limit_s = 1e-6;
  auto a = synthesize(dgx1(), target_of(CollectiveKind::Alltoall), 3, {8, 8}, o);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::Unknown);
}

RC_GTEST_PROP(SatSynthProperty, SatAndSmtAgreeOnEveryInstance, ()) {
  const Topology topology = small_topology();
  Target target = target_of(*rc::gen::element(
      CollectiveKind::Allgather, CollectiveKind::Broadcast, CollectiveKind::Gather,
      CollectiveKind::Scatter, CollectiveKind::Alltoall, CollectiveKind::Reduce,
      CollectiveKind::ReduceScatter, CollectiveKind::Allreduce));
  const int ranks = topology.num_ranks();
  const int chunks = target.kind == CollectiveKind::Allreduce ? ranks * *rc::gen::inRange(1, 3)
                                                              : *rc::gen::inRange(1, 3);
  const int steps = *rc::gen::inRange(1, 5);
  const int rounds = steps + *rc::gen::inRange(0, 3);
  RC_TAG(collective_kind_name(target.kind));
  SynthOptions smt;
  smt.backend = Backend::Smt;
  auto by_sat = synthesize(topology, target, chunks, {steps, rounds}, sat());
  auto by_smt = synthesize(topology, target, chunks, {steps, rounds}, smt);
  RC_ASSERT(by_sat.has_value());
  RC_ASSERT(by_smt.has_value());
  RC_TAG(verdict_name(by_sat->verdict));
  RC_ASSERT(by_sat->verdict != Verdict::Unknown);
  RC_ASSERT(by_sat->verdict == by_smt->verdict);
}

} // namespace
} // namespace syncoll::synth
