#include "tests/support/programs.h"
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

TEST(CorrectProgramsTest, VerifiedProgramCarriesItsReport) {
  auto v = certify(testing::ring_allreduce_program(4, 1), {});
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->report().all_hold());
  EXPECT_EQ(v->program().num_ranks(), 4);
}

} // namespace
} // namespace syncoll::verifier
