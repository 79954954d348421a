// The mutation campaign as a table: per program and fault, how many mutants, how the
// executor's parser and the verifier caught them, how many change behaviour under the
// independent random-schedule oracle, and how many of those were missed (the target is 0).
#include "bench/quick_flag.h"
#include "tests/verifier/mutation_campaign.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  using namespace syncoll::testing;
  const bool quick = syncoll::bench::quick_flag(argc, argv, "mutation_bench");
  const int schedules = quick ? 2 : 30;
  const uint64_t seed = 20261121;
  auto start = std::chrono::steady_clock::now();
  // The campaign's own programs and the small correct programs of the conformance corpus.
  std::vector<CampaignProgram> programs = campaign_programs();
  for (CampaignProgram &p :
       corpus_programs(std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/conformance", 48))
    programs.push_back(std::move(p));
  CampaignResult result = run_campaign(programs, schedules, seed);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("mutation campaign: %d random schedules per regime and aliasing mode, seed %llu\n\n",
              schedules, static_cast<unsigned long long>(seed));
  std::printf("%-56s %-24s %7s %7s %8s %9s %7s %10s\n", "program", "fault", "mutants", "parser",
              "verifier", "changing", "missed", "equivalent");
  int total = 0, parser = 0, caught = 0, changing = 0, missed = 0, equivalent = 0;
  for (const CampaignRow &r : result.rows) {
    std::printf("%-56s %-24s %7d %7d %8d %9d %7d %10d\n", r.program.c_str(), r.fault.c_str(),
                r.mutants, r.rejected_by_parser, r.caught_by_verifier, r.behaviour_changing,
                r.missed, r.equivalent_and_passed);
    total += r.mutants, parser += r.rejected_by_parser, caught += r.caught_by_verifier;
    changing += r.behaviour_changing, missed += r.missed, equivalent += r.equivalent_and_passed;
    for (const auto &m : r.missed_examples)
      std::printf("    missed: %s\n", m.c_str());
  }
  std::printf("%-56s %-24s %7d %7d %8d %9d %7d %10d\n", "total", "", total, parser, caught,
              changing, missed, equivalent);
  // The same per fault, over every program.
  std::map<std::string, CampaignRow> by_fault;
  std::set<std::string> programs_seen;
  for (const CampaignRow &r : result.rows) {
    programs_seen.insert(r.program);
    CampaignRow &f = by_fault[r.fault];
    f.mutants += r.mutants, f.rejected_by_parser += r.rejected_by_parser;
    f.caught_by_verifier += r.caught_by_verifier, f.behaviour_changing += r.behaviour_changing;
    f.missed += r.missed, f.equivalent_and_passed += r.equivalent_and_passed;
  }
  std::printf("\nper fault, over %zu programs:\n%-24s %7s %7s %8s %9s %7s %10s\n",
              programs_seen.size(), "fault", "mutants", "parser", "verifier", "changing", "missed",
              "equivalent");
  for (const auto &[fault, f] : by_fault)
    std::printf("%-24s %7d %7d %8d %9d %7d %10d\n", fault.c_str(), f.mutants, f.rejected_by_parser,
                f.caught_by_verifier, f.behaviour_changing, f.missed, f.equivalent_and_passed);
  std::printf("\ncorrect programs flagged: %zu (target 0); behaviour-changing faults missed: %d "
              "(target 0); %.2f s\n",
              result.correct_program_failures.size(), missed, seconds);
  for (const auto &f : result.correct_program_failures)
    std::printf("    %s\n", f.c_str());
  return missed == 0 && result.correct_program_failures.empty() ? 0 : 1;
}
