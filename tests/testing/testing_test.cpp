// syncoll::testing as users get it: the generators' values are what they promise (library
// topologies and collectives round-trip, algorithms lower and verify, programs keep every law),
// the laws break where they should, injected faults are the faults asked for (an executor that
// shares no code with the verifier sees them), and the property-run engine shrinks to the smallest
// failing case and repeats itself from its seed.
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/topology_json.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "testing/testing.h"
#include "tests/verifier/mutation_campaign.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::testing {
namespace {

CollectiveSpec collective_of(const Program &p) {
  auto c = collective_for_program(p, std::nullopt);
  EXPECT_TRUE(c.has_value());
  return *c;
}

RC_GTEST_PROP(GeneratorProperty, LibraryTopologiesRoundTripThroughJson, ()) {
  const Topology t = *gen_library_topology();
  RC_TAG(t.name());
  auto back = parse_topology_json(to_canonical_json(topology_to_json(t)), "library.json");
  RC_ASSERT(back.has_value());
  RC_ASSERT(*back == t);
}

RC_GTEST_PROP(GeneratorProperty, CollectivesRoundTripThroughJson, ()) {
  const int ranks = *rc::gen::inRange(2, 8);
  const CollectiveSpec c = *gen_collective(ranks);
  RC_TAG(collective_kind_name(c.kind()));
  RC_ASSERT(c.num_ranks() == ranks);
  auto doc = JsonDocument::parse(to_canonical_json(collective_to_json(c)), "c.json");
  RC_ASSERT(doc.has_value());
  auto back = collective_from_json(doc->root());
  RC_ASSERT(back.has_value());
  RC_ASSERT(*back == c);
}

// The compiler's law: an algorithm that checks lowers to a program that verifies.
RC_GTEST_PROP(GeneratorProperty, AlgorithmsThatCheckLowerToProgramsThatVerify, ()) {
  const AlgorithmCase a = *gen_algorithm();
  RC_TAG(collective_kind_name(a.collective.kind()));
  auto dsl = lowering::algorithm_to_dsl(a.algorithm, a.topology, a.collective);
  RC_ASSERT(dsl.has_value());
  require(lowers_and_verifies(*dsl));
}

RC_GTEST_PROP(LawProperty, VerifiedProgramsKeepEveryLaw, ()) {
  const FamilyCase c = *gen_verified_program();
  RC_TAG(c.program.name());
  const int64_t size = case_size_bytes(*rc::gen::inRange(0, 21), c.program, c.collective);
  require(verifies(c.program, c.collective));
  require(simulator_agrees_with_verifier(c.program, c.topology, c.collective));
  require(simulated_time_respects_bound(c.program, c.topology, c.collective, size));
  require(cpu_executor_matches_reference(c.program, c.collective, size, 7));
}

TEST(LawTest, TheSeededBugBreaksVerifiesAndCpuAtTwoRanksOnly) {
  for (int n : {2, 3, 4}) {
    const Program p = broken_allpairs_allreduce_program(n);
    const LawVerdict v = verifies(p, collective_of(p));
    EXPECT_EQ(v.broken(), n == 2) << n << "\n" << v.counterexample;
    EXPECT_EQ(v.law, "verifies");
    const LawVerdict cpu =
        cpu_executor_matches_reference(p, collective_of(p), int64_t(4) * n * 1024, 1);
    EXPECT_EQ(cpu.broken(), n == 2) << n;
  }
  const Program p = broken_allpairs_allreduce_program(2);
  const LawVerdict v = verifies(p, collective_of(p));
  EXPECT_NE(v.counterexample.find("race freedom:     violated"), std::string::npos)
      << v.counterexample;
}

// A ring Allgather of n ranks on a bidirectional ring: each rank must receive n - 1 chunks of
// S / n over its two incoming links, and NCCL's ring uses one of them, so it takes about twice
// the bound.
TEST(LawTest, TheReceiveBoundOfARingAllgather) {
  const int n = 6;
  const Program p = ring_allgather_program(n, 1);
  const CollectiveSpec c = collective_of(p);
  const Topology t = *ring(n);
  const int64_t size = int64_t(n) << 20;
  const double link = t.link(t.in_links(RankId(0)).front()).bandwidth.value;
  const double bound = receive_bound_ps(p, t, c, size);
  EXPECT_DOUBLE_EQ(bound, double(n - 1) * double(size / n) / (2 * link) * 1e3);
  EXPECT_TRUE(simulated_time_respects_bound(p, t, c, size).holds());
  simulator::ProgramSimOptions o;
  o.size_bytes = size;
  const double took = double(simulator::simulate_program(p, t, o)->result.completion);
  EXPECT_GT(took, 1.9 * bound);
  EXPECT_LT(took, 2.2 * bound);
}

TEST(LawTest, ADslProgramThatLosesAChunkDoesNotLowerAndVerify) {
  // An Allgather whose rank 0 never sends its chunk to rank 2.
  auto prog = lowering::DslProgram::create("lossy", *fully_connected(3),
                                           *make_collective(CollectiveKind::Allgather, 3, 1));
  ASSERT_TRUE(prog);
  for (int r = 0; r < 3; ++r)
    for (int to = 0; to < 3; ++to)
      if (!(r == 0 && to == 2)) {
        auto c = prog->chunk(r, lowering::Buffer::input(), 0);
        ASSERT_TRUE(c);
        ASSERT_TRUE(prog->copy(*c, to, lowering::Buffer::output(), r));
      }
  const LawVerdict v = lowers_and_verifies(*prog);
  EXPECT_TRUE(v.broken());
  EXPECT_NE(v.counterexample.find("postcondition:    violated"), std::string::npos)
      << v.counterexample;
}

TEST(LawTest, AProgramTheSimulatorRefusesBreaksTheLawsThatRunIt) {
  const Program p = ring_allgather_program(4, 1);
  const LawVerdict v = simulator_agrees_with_verifier(p, *line(3), collective_of(p));
  EXPECT_TRUE(v.broken());
  EXPECT_NE(v.counterexample.find("refuses"), std::string::npos) << v.counterexample;
}

// Faults, each shown by the mutation campaign's oracle: random schedules over symbolic data,
// written apart from verifier/.
TEST(MutateTest, InjectedDeadlocksAndWrongResultsMisbehaveUnderAnIndependentExecutor) {
  for (const Program &p : {ring_allreduce_program(4, 1), allpairs_allreduce_program(3),
                           two_step_alltoall_program(2, 2)}) {
    const CollectiveSpec c = collective_of(p);
    for (Fault fault : {Fault::Deadlock, Fault::WrongResult})
      for (size_t choice : {size_t(0), size_t(5)}) {
        const auto mutant = inject_fault(p, c, fault, choice);
        ASSERT_TRUE(mutant.has_value()) << p.name() << " " << fault_name(fault);
        EXPECT_NE(*mutant, p);
        const OracleVerdict oracle = run_oracle(*mutant, c, 8, 1);
        EXPECT_TRUE(oracle.misbehaves) << p.name() << " " << fault_name(fault) << " " << choice;
      }
  }
}

TEST(MutateTest, ARaceIsADroppedDependencyAndNeedsOne) {
  const Program ring4 = ring_allreduce_program(4, 1);
  EXPECT_FALSE(inject_fault(ring4, collective_of(ring4), Fault::Race).has_value())
      << "a ring's thread blocks have no dependency to drop";
  const Program pairs = allpairs_allreduce_program(3);
  const auto mutant = inject_fault(pairs, collective_of(pairs), Fault::Race);
  ASSERT_TRUE(mutant.has_value());
  int dropped = 0;
  for (size_t r = 0; r < pairs.ranks().size(); ++r)
    for (size_t t = 0; t < pairs.ranks()[r].thread_blocks.size(); ++t) {
      const auto before = pairs.ranks()[r].thread_blocks[t].steps.to_vector();
      const auto after = mutant->ranks()[r].thread_blocks[t].steps.to_vector();
      ASSERT_EQ(before.size(), after.size());
      for (size_t k = 0; k < before.size(); ++k)
        if (before[k] != after[k]) {
          EXPECT_TRUE(before[k].dependency.has_value());
          EXPECT_FALSE(after[k].dependency.has_value());
          ++dropped;
        }
    }
  EXPECT_EQ(dropped, 1);
}

Family counting_family(int *made) {
  Family f;
  f.name = "broken_at_two";
  f.ranks = {2, 8};
  f.variants = {1, 4};
  f.variant_name = "channels";
  f.make = [made](const CaseParams &p) -> Expected<std::optional<FamilyCase>> {
    ++*made;
    if (p.ranks == 5)
      return std::optional<FamilyCase>(); // outside the family
    const Program program = p.ranks == 2 ? broken_allpairs_allreduce_program(2)
                                         : ring_allreduce_program(p.ranks, p.variant);
    return std::optional<FamilyCase>(
        FamilyCase{program, *fully_connected(p.ranks), collective_of(program)});
  };
  return f;
}

TEST(CheckTest, ShrinksToTheSmallestFailingCaseAndRepeatsFromItsSeed) {
  int made = 0;
  CheckOptions options;
  options.seed = 5;
  options.laws = {LawId::Verifies};
  const auto report = run_check(counting_family(&made), options);
  ASSERT_TRUE(report.has_value());
  ASSERT_TRUE(report->minimal.has_value());
  EXPECT_EQ(report->minimal->params.ranks, 2);
  EXPECT_EQ(report->minimal->params.variant, 1);
  EXPECT_EQ(report->minimal->params.size_log2, options.size_log2.min);
  EXPECT_EQ(report->minimal->params.data_seed, 1u);
  EXPECT_EQ(report->minimal->verdict.law, "verifies");
  const auto again = run_check(counting_family(&made), options);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->first_failure->case_index, report->first_failure->case_index);
  EXPECT_EQ(again->first_failure->params, report->first_failure->params);
  EXPECT_EQ(again->passed, report->passed);
}

TEST(CheckTest, CasesOutsideTheFamilyAreDiscardedNotPassed) {
  int made = 0;
  Family f = counting_family(&made);
  f.ranks = {3, 5};
  CheckOptions options;
  options.cases = 30;
  options.laws = {LawId::Verifies};
  const auto report = run_check(f, options);
  ASSERT_TRUE(report.has_value());
  EXPECT_FALSE(report->first_failure.has_value());
  EXPECT_EQ(report->passed, 30);
  EXPECT_GT(report->discarded, 0);
  EXPECT_EQ(made, report->passed + report->discarded);
}

TEST(CheckTest, AFamilyErrorIsBadInputAndStopsTheRun) {
  Family f;
  f.name = "unreadable";
  f.ranks = {2, 4};
  f.make = [](const CaseParams &) -> Expected<std::optional<FamilyCase>> {
    return fail({"programs/x.xml", 3, 7}, "not a program");
  };
  const auto report = run_check(f, CheckOptions{});
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.error().to_string().find("programs/x.xml:3:7"), std::string::npos);
}

} // namespace
} // namespace syncoll::testing
