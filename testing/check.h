// Property runs over a family of programs, the engine of `syncoll check`: cases drawn from a
// seed, every law run on each, and the first failing case shrunk to a minimal one. A family is a
// function from a few integer knobs (ranks, a variant such as the channel count or a file's
// index, the message size) to a program, so a failing case shrinks by lowering the knobs.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "model/topology.h"
#include "testing/laws.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::testing {

struct IntRange {
  int min = 0;
  int max = 0;
};

/// The knobs of one case.
struct CaseParams {
  int ranks = 2;
  int variant = 0;
  int size_log2 = 20;     ///< the message size, before it is cut into whole elements per chunk
  uint64_t data_seed = 1; ///< the CPU executor's input pattern
  friend bool operator==(const CaseParams &, const CaseParams &) = default;
};

/// One program of a family, with where it runs and what it must implement.
struct FamilyCase {
  Program program;
  Topology topology;
  CollectiveSpec collective;
};

struct Family {
  std::string name;
  IntRange ranks;           ///< {0, 0} for families whose programs fix their rank count
  IntRange variants;        ///< {0, 0} for none
  std::string variant_name; ///< what the variant means: "channels", "file", "aliasing", ...
  /// Whether a smaller variant is a smaller case (a channel count is; a file's index is not).
  bool shrink_variant = true;
  /// The program of those knobs; none when the knobs are outside the family (a rank count it
  /// has no program for), which discards the case; an error is bad input and stops the run.
  std::function<Expected<std::optional<FamilyCase>>(const CaseParams &)> make;
  /// How a case names its variant in reports ("channels 2", "file ring.xml"); optional.
  std::function<std::string(int)> describe_variant;
};

enum class LawId { Verifies, Agrees, Bound, Cpu };
/// Every law, in the order a case runs them: "verifies", "agrees", "bound", "cpu".
const std::vector<LawId> &all_laws();
std::string_view law_name(LawId law);
std::optional<LawId> parse_law(std::string_view name);

struct CheckOptions {
  uint64_t seed = 1;
  int cases = 100;
  bool shrink = true;
  IntRange size_log2{10, 22};
  std::vector<LawId> laws = all_laws();
  /// Cases outside the family tried before the run gives up finding more.
  int max_discards = 1000;
};

struct CaseFailure {
  int case_index = 0; ///< of the first failing case; the minimal one keeps it
  CaseParams params;
  int64_t size_bytes = 0;
  FamilyCase instance;
  LawVerdict verdict;
};

struct CheckReport {
  int passed = 0;
  int discarded = 0;
  int unknown = 0; ///< cases with an unknown law and no broken one
  std::optional<LawVerdict> first_unknown;
  std::optional<CaseFailure> first_failure; ///< as drawn
  std::optional<CaseFailure> minimal;       ///< after shrinking (the first failure without it)
  int shrink_steps = 0;
};

/// The message size of a case: 2^size_log2 bytes rounded down to a size that cuts into whole i32
/// elements per chunk both as the runtime cuts nBytes (nchunksperloop) and as nccl-tests sizes
/// the call (its larger buffer), at least one element per chunk.
int64_t case_size_bytes(int size_log2, const Program &program, const CollectiveSpec &collective);

/// The case's knobs in words: "ranks 3, channels 2, 4096 B, data seed 17".
std::string describe_case(const Family &family, const CaseParams &params, int64_t size_bytes);

/// Runs `options.cases` cases (or until a law breaks) and shrinks the failing one. Fails for bad
/// input the family reports.
[[nodiscard]] Expected<CheckReport> run_check(const Family &family, const CheckOptions &options);

} // namespace syncoll::testing
