// The mutation campaign: faults injected into correct programs, each judged by the
// verifier and by an independent oracle, a randomized-schedule executor with symbolic data that
// shares no code with verifier/. A fault "changes behaviour" when some schedule the oracle tries
// deadlocks or ends with a wrong output; every such fault must be caught.
#pragma once

#include "model/collective.h"
#include "model/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace syncoll::testing {

struct CampaignProgram {
  std::string name;
  Program program;
  CollectiveSpec collective;
};

/// The correct programs of the campaign: ring Allgather and Allreduce, all-pairs Allreduce,
/// recursive-doubling Allgather, two-step Alltoall (and an LL ring for the capacity fault).
std::vector<CampaignProgram> campaign_programs();

/// The correct programs of the conformance corpus in `dir` (its MANIFEST.json) with at most
/// `max_steps` steps in all: the conventions real runtimes use, mutated too.
std::vector<CampaignProgram> corpus_programs(const std::string &dir, size_t max_steps);

struct Mutant {
  std::string fault; ///< "drop dependency", "swap steps", ...
  std::string where;
  bool parses = true; ///< false: the executor's parser (Program::create) rejects it
  ProgramDraft draft;
};

/// Every mutant of every fault kind for one program.
std::vector<Mutant> mutants_of(const Program &program);

struct OracleVerdict {
  bool misbehaves = false;
  std::string how; ///< the first misbehaviour seen
};

/// Runs `schedules` random interleavings in each count-splitting regime (and each aliasing mode
/// the program claims); the seed makes it reproducible.
OracleVerdict run_oracle(const Program &program, const CollectiveSpec &collective, int schedules,
                         uint64_t seed);

struct CampaignRow {
  std::string program;
  std::string fault;
  int mutants = 0;
  int rejected_by_parser = 0;
  int caught_by_verifier = 0;
  int behaviour_changing = 0;    ///< by the oracle, among the mutants that parse
  int missed = 0;                ///< behaviour-changing but not caught: must be 0
  int equivalent_and_passed = 0; ///< oracle saw nothing and the verifier agreed
  std::vector<std::string> missed_examples;
};

struct CampaignResult {
  std::vector<CampaignRow> rows;
  std::vector<std::string> correct_program_failures; ///< must be empty
};

CampaignResult run_campaign(const std::vector<CampaignProgram> &programs, int schedules,
                            uint64_t seed);

} // namespace syncoll::testing
