#include "model/collective_traits.h"
#include "model/mscclir.h"
#include "testing/programs.h"
#include "verifier/verify.h"

#include <gtest/gtest.h>

namespace syncoll::verifier {
namespace {

void expect_verified(const Program &p, RaceMode mode = RaceMode::Strict) {
  VerifyOptions options;
  options.race_mode = mode;
  options.cross_check = true; // the model checker must agree wherever it finishes
  options.model_check_states = 20'000;
  auto verified = certify(p, options);
  EXPECT_TRUE(verified) << p.name() << "\n" << (verified ? "" : verified.error().to_text());
}

TEST(CorrectProgramsTest, RingAllreduce) {
  for (int n : {2, 3, 4, 8})
    for (int ch : {1, 2})
      expect_verified(testing::ring_allreduce_program(n, ch));
  expect_verified(testing::ring_allreduce_program(4, 2, Protocol::LL128));
}

// A correct program past the executor's limits: its resources verdict, and the deeper properties
// checked (the default) or, where the caller decides by the static rules alone, unknown and said
// to be unchecked: never a pass or a failure.
TEST(CorrectProgramsTest, AProgramPastTheLimitsIsCheckedOrSaidToBeUnchecked) {
  const Program p = testing::ring_allreduce_program(4, 2);
  VerifyOptions options;
  options.limits.max_steps_per_tb = 2;
  const Report checked = verify(p, options);
  EXPECT_EQ(checked.verdict(Property::Resources).kind, VerdictKind::Violated);
  for (Property q : {Property::DeadlockFreedom, Property::RaceFreedom, Property::Postcondition})
    EXPECT_EQ(checked.verdict(q).kind, VerdictKind::Holds) << checked.to_text();
  options.check_unfit_programs = false;
  const Report unchecked = verify(p, options);
  EXPECT_EQ(unchecked.verdict(Property::Resources).kind, VerdictKind::Violated);
  for (Property q : {Property::DeadlockFreedom, Property::RaceFreedom, Property::Postcondition}) {
    EXPECT_EQ(unchecked.verdict(q).kind, VerdictKind::Unknown);
    EXPECT_EQ(unchecked.verdict(q).summary,
              "unknown: not checked (the program does not fit the executor)");
  }
  // A program within the limits is checked in full either way.
  options.limits = ResourceLimits{};
  EXPECT_TRUE(verify(p, options).all_hold());
}

TEST(CorrectProgramsTest, RingAllgather) {
  for (int n : {2, 3, 5})
    for (int ch : {1, 3})
      expect_verified(testing::ring_allgather_program(n, ch));
}

TEST(CorrectProgramsTest, AllpairsAllreduce) {
  for (int n : {2, 3, 4, 6})
    expect_verified(testing::allpairs_allreduce_program(n));
}

TEST(CorrectProgramsTest, RecursiveDoublingAllgather) {
  for (int n : {2, 4, 8, 16})
    expect_verified(testing::recursive_doubling_allgather_program(n));
}

TEST(CorrectProgramsTest, TwoStepAlltoall) {
  expect_verified(testing::two_step_alltoall_program(2, 2));
  expect_verified(testing::two_step_alltoall_program(3, 2));
  expect_verified(testing::two_step_alltoall_program(2, 4));
}

// NCCL's ring ReduceScatter, made in place: the last step reduces into the input slot that is
// the rank's output.
Program ring_reducescatter_in_place(int ranks) {
  ProgramDraft d =
      testing::ring_program(CollectiveKind::ReduceScatter, ranks, 1, Protocol::Simple).draft();
  d.in_place = true;
  d.out_of_place = false;
  for (RankProgram &rp : d.ranks) {
    std::vector<Instruction> steps = rp.thread_blocks[0].steps.to_vector();
    for (Instruction &in : steps)
      if (in.dst.buffer == BufferKind::Output)
        in.dst = {BufferKind::Input, rp.rank.value()};
    rp.thread_blocks[0].steps = StepList(steps);
  }
  return *Program::create(std::move(d));
}

TEST(CorrectProgramsTest, InPlaceProgramsVerifyInBothDeclarationStyles) {
  // The lowered in-place recursive doubling Allgather, as `syncoll lower` writes it.
  auto allgather =
      read_program_file(std::string(SYNCOLL_SOURCE_DIR) +
                        "/tests/data/golden/lowering_recursive_doubling_allgather_8.xml");
  ASSERT_TRUE(allgather);
  const std::vector<Program> programs = {testing::ring_allreduce_program(4, 2),
                                         testing::allpairs_allreduce_program(3), allgather->value,
                                         ring_reducescatter_in_place(4)};
  for (const Program &p : programs) {
    ASSERT_TRUE(p.in_place()) << p.name();
    auto c = collective_for_program(p, std::nullopt);
    ASSERT_TRUE(c) << p.name();
    const Program full = testing::declared_in_full(p, *c),
                  zero = testing::aliased_buffer_declared_zero(p, *c);
    expect_verified(full);
    expect_verified(zero);
    // The style does change the file: one buffer is declared 0 and never named.
    bool some_zero = false;
    for (const RankProgram &rp : zero.ranks())
      some_zero = some_zero || rp.input_chunks == 0 || rp.output_chunks == 0;
    EXPECT_TRUE(some_zero) << p.name();
  }
}

// o_chunks="0" holds an in-place allreduce, but not the out-of-place call a file that also
// claims outofplace="1" must serve: that is the buffer rule, named for the mode it breaks.
TEST(CorrectProgramsTest, AZeroBufferServesOnlyTheInPlaceCall) {
  const Program p = testing::ring_allreduce_program(4, 1);
  auto c = collective_for_program(p, std::nullopt);
  ASSERT_TRUE(c);
  const Program zero = testing::aliased_buffer_declared_zero(p, *c);
  EXPECT_EQ(verify(zero, {}).verdict(Property::Structure).kind, VerdictKind::Holds);
  ProgramDraft both = zero.draft();
  both.out_of_place = true;
  const Report report = verify(*Program::create(both), {});
  EXPECT_EQ(report.verdict(Property::Structure).kind, VerdictKind::Violated);
  EXPECT_NE(report.to_text().find("o_chunks 0 is smaller than the 4 chunks allreduce writes there "
                                  "(out of place, which the program also claims)"),
            std::string::npos)
      << report.to_text();
}

TEST(CorrectProgramsTest, VerifiedProgramCarriesItsReport) {
  auto v = certify(testing::ring_allreduce_program(4, 1), {});
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->report().all_hold());
  EXPECT_EQ(v->program().num_ranks(), 4);
}

} // namespace
} // namespace syncoll::verifier
