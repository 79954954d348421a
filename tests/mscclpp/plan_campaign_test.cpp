// The mutation campaign over MSCCL++ plans as a test: no correct plan is flagged by the
// verifier or seen misbehaving by the independent oracle, every fault the oracle sees change
// behaviour is flagged, and the oracle itself sees the known-bad plans misbehave (so that its
// silence means something). bench/mscclpp_mutation_bench prints the whole table.
#include "mscclpp/mscclpp.h"
#include "tests/mscclpp/plan_campaign.h"
#include "tests/mscclpp/plan_oracle.h"

#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>

namespace syncoll::testing {
namespace {

constexpr uint64_t kSeed = 20261129;

TEST(MscclppCampaignTest, TheOracleSeesEveryCorrectPlanBehave) {
  std::printf("oracle seed %llu\n", static_cast<unsigned long long>(kSeed));
  const std::vector<PlanSubject> subjects = plan_subjects(SYNCOLL_SOURCE_DIR);
  EXPECT_GE(subjects.size(), 12u);
  for (const PlanSubject &s : subjects) {
    const PlanOracleVerdict v = run_plan_oracle(s.plan, 20, kSeed);
    EXPECT_FALSE(v.misbehaves) << s.name << ": " << v.how;
  }
}

TEST(MscclppCampaignTest, TheOracleSeesEveryKnownBadPlanMisbehave) {
  int plans = 0;
  for (const auto &entry : std::filesystem::directory_iterator(std::string(SYNCOLL_SOURCE_DIR) +
                                                               "/examples/mscclpp/faulty")) {
    auto plan = mscclpp::read_execution_plan_file(entry.path().string());
    ASSERT_TRUE(plan) << plan.error().to_string();
    EXPECT_TRUE(run_plan_oracle(*plan, 30, kSeed).misbehaves) << entry.path();
    ++plans;
  }
  EXPECT_GE(plans, 4);
}

TEST(MscclppCampaignTest, EveryBehaviourChangingMutantIsFlagged) {
  std::printf("campaign seed %llu\n", static_cast<unsigned long long>(kSeed));
  // Every third mutant, three schedules each; bench/mscclpp_mutation_bench judges them all.
  const PlanCampaignResult r = run_plan_campaign(plan_subjects(SYNCOLL_SOURCE_DIR), 3, kSeed, 3);
  EXPECT_TRUE(r.correct_plan_failures.empty()) << r.correct_plan_failures.front();
  int mutants = 0, changing = 0;
  for (const PlanCampaignRow &row : r.rows) {
    mutants += row.mutants;
    changing += row.behaviour_changing;
    EXPECT_EQ(row.missed, 0) << row.plan << ", " << row.fault << ": "
                             << row.missed_examples.front();
  }
  // The campaign has teeth: most faults change behaviour and every one of those is caught.
  EXPECT_GT(mutants, 600);
  EXPECT_GT(changing, mutants / 2);
}

} // namespace
} // namespace syncoll::testing
