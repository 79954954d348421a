// The mutation campaign as a test: no correct program is flagged, and every injected
// fault that changes behaviour (as an independent random-schedule oracle observes) is caught.
#include "tests/verifier/mutation_campaign.h"

#include <gtest/gtest.h>

namespace syncoll::testing {
namespace {

TEST(MutationCampaignTest, EveryBehaviourChangingFaultIsCaught) {
  constexpr uint64_t kSeed = 20261121;
  std::printf("oracle seed: %llu\n", static_cast<unsigned long long>(kSeed));
  std::vector<CampaignProgram> programs = campaign_programs();
  for (CampaignProgram &p :
       corpus_programs(std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/conformance", 48))
    programs.push_back(std::move(p));
  CampaignResult result = run_campaign(programs, /*schedules=*/4, kSeed);
  EXPECT_TRUE(result.correct_program_failures.empty()) << result.correct_program_failures.front();
  int mutants = 0, changing = 0;
  for (const CampaignRow &row : result.rows) {
    mutants += row.mutants;
    changing += row.behaviour_changing;
    EXPECT_EQ(row.missed, 0) << row.program << " / " << row.fault << ": "
                             << row.missed_examples.front();
  }
  // Check that the campaign is not vacuous: many mutants, most of them harmful.
  EXPECT_GT(mutants, 500);
  EXPECT_GT(changing, mutants / 3);
}

TEST(MutationCampaignTest, OracleSeesTheScenarioFaults) {
  // The oracle itself must notice a deadlock and a wrong result, or the campaign proves nothing.
  auto programs = campaign_programs();
  const CampaignProgram &ring = programs[1];
  ProgramDraft d = ring.program.draft();
  std::vector<Instruction> steps = d.ranks[0].thread_blocks[0].steps.to_vector();
  steps.erase(steps.begin());
  for (size_t k = 0; k < steps.size(); ++k)
    steps[k].declared_index = int(k);
  d.ranks[0].thread_blocks[0].steps = StepList(steps);
  auto no_first_send = Program::create(d);
  ASSERT_TRUE(no_first_send);
  EXPECT_TRUE(run_oracle(*no_first_send, ring.collective, 4, 1).misbehaves);
  EXPECT_FALSE(run_oracle(ring.program, ring.collective, 4, 1).misbehaves);
}

} // namespace
} // namespace syncoll::testing
