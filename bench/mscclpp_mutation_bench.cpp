// The mutation campaign over MSCCL++ plans as a table: per plan and fault, how many mutants,
// how many the plan reader refused, how many the verifier flagged, how many the independent
// oracle saw change behaviour, and how many of those were missed (the target is 0).
#include "bench/quick_flag.h"
#include "tests/mscclpp/plan_campaign.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

int main(int argc, char **argv) {
  using namespace syncoll::testing;
  const bool quick = syncoll::bench::quick_flag(argc, argv, "mscclpp_mutation_bench");
  const int schedules = quick ? 2 : 30;
  const uint64_t seed = 20261129;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<PlanSubject> subjects = plan_subjects(SYNCOLL_SOURCE_DIR);
  std::fprintf(stderr, "mscclpp_mutation_bench: %zu plans, %d schedules per mutant...\n",
               subjects.size(), schedules);
  const PlanCampaignResult result = run_plan_campaign(subjects, schedules, seed);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("MSCCL++ plan mutation campaign: %d random weak-memory schedules per mutant, seed "
              "%llu\n\n",
              schedules, static_cast<unsigned long long>(seed));
  const char *head = "%-44s %-20s %7s %7s %8s %9s %7s %10s %8s\n";
  const char *line = "%-44s %-20s %7d %7d %8d %9d %7d %10d %8d\n";
  std::printf(head, "plan", "fault", "mutants", "reader", "verifier", "changing", "missed",
              "equivalent", "unseen");
  PlanCampaignRow total;
  std::map<std::string, PlanCampaignRow> by_fault;
  for (const PlanCampaignRow &r : result.rows) {
    std::printf(line, r.plan.c_str(), r.fault.c_str(), r.mutants, r.rejected_by_reader,
                r.caught_by_verifier, r.behaviour_changing, r.missed, r.equivalent,
                r.flagged_unseen);
    for (const auto &m : r.missed_examples)
      std::printf("    missed: %s\n", m.c_str());
    for (size_t i = 0; i < r.unseen_examples.size() && i < 3; ++i)
      std::printf("    unseen: %s\n", r.unseen_examples[i].c_str());
    for (PlanCampaignRow *into : {&total, &by_fault[r.fault]}) {
      into->mutants += r.mutants, into->rejected_by_reader += r.rejected_by_reader;
      into->caught_by_verifier += r.caught_by_verifier;
      into->behaviour_changing += r.behaviour_changing, into->missed += r.missed;
      into->equivalent += r.equivalent, into->flagged_unseen += r.flagged_unseen;
    }
  }
  std::printf("\nper fault, over %zu plans:\n", subjects.size());
  std::printf(head, "", "fault", "mutants", "reader", "verifier", "changing", "missed",
              "equivalent", "unseen");
  by_fault["total"] = total;
  for (const auto &[fault, f] : by_fault)
    std::printf(line, "", fault.c_str(), f.mutants, f.rejected_by_reader, f.caught_by_verifier,
                f.behaviour_changing, f.missed, f.equivalent, f.flagged_unseen);
  std::printf("\nunseen: flagged by the verifier, no schedule of the oracle misbehaved (a race "
              "its schedules did not hit, or a verdict stricter than the oracle)\n");
  std::printf("correct plans flagged: %zu (target 0); behaviour-changing faults missed: %d "
              "(target 0); %.2f s\n",
              result.correct_plan_failures.size(), total.missed, seconds);
  for (const auto &f : result.correct_plan_failures)
    std::printf("    %s\n", f.c_str());
  return total.missed == 0 && result.correct_plan_failures.empty() ? 0 : 1;
}
