// Synthesis queries and searches (docs/architecture.md, "Synthesis"; SCCL, sections 3.4-3.7): one
// instance, the fewest steps, and the Pareto frontier of (steps, rounds per chunk). Every algorithm
// returned has passed model/'s independent check_algorithm.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/topology.h"
#include "synth/answer.h"
#include "synth/bounds.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::synth {

/// How Allreduce is synthesized: as ReduceScatter + Allgather (SCCL, section 3.5), or directly with
/// the combining encoding (a reduction tree and a broadcast tree per chunk).
enum class AllreduceMethod { Composed, Direct };

/// What to synthesize: a standard collective (any chunk count) or a custom one (its own).
struct Target {
  CollectiveKind kind = CollectiveKind::Allgather;
  std::optional<int> root;
  std::optional<CollectiveSpec> custom; ///< when kind is Custom
  AllreduceMethod allreduce = AllreduceMethod::Composed;

  /// The collective with `chunks` chunks per rank (for a composed Allreduce: per rank of the
  /// ReduceScatter and Allgather, so the Allreduce has ranks x chunks).
  [[nodiscard]] Expected<CollectiveSpec> collective(int ranks, int chunks) const;
  std::string name() const;
};

/// One instance. For a composed Allreduce, `chunks` counts the Allreduce's chunks (a multiple
/// of the rank count) and S and R are totals over both phases; every split is tried.
[[nodiscard]] Expected<Answer> synthesize(const Topology &topology, const Target &target,
                                          int chunks, StepsRounds sr, const SynthOptions &options);

/// One attempt of a search, for its log.
struct Attempt {
  int chunks = 0;
  StepsRounds sr;
  Verdict verdict = Verdict::Unknown;
  double seconds = 0;
  std::string detail;
};

struct LeastSteps {
  std::optional<Answer> found; ///< the first satisfiable instance
  /// Every smaller step count was proven infeasible (none was unknown), so `found` has the
  /// fewest steps there are (for its rounds rule).
  bool proven_least = false;
  int steps_lower_bound = 0;
  std::vector<Attempt> attempts;
};

/// Steps from the lower bound up to `max_steps`, with rounds = steps + k (or `rounds` when
/// given); with rounds left open, then the fewest rounds at those steps.
[[nodiscard]] Expected<LeastSteps> least_steps(const Topology &topology, const Target &target,
                                               int chunks, std::optional<int> rounds, int k,
                                               int max_steps, const SynthOptions &options);

struct ParetoPoint {
  int chunks = 0;
  StepsRounds sr;
  Fraction rounds_per_chunk;
  bool latency_optimal = false;   ///< S equals the proven steps lower bound
  bool bandwidth_optimal = false; ///< R/C equals the proven rounds-per-chunk lower bound
  Algorithm algorithm;
  double seconds = 0;
};

struct ParetoOptions {
  int k = 4;          ///< rounds per step beyond one (SCCL, Algorithm 1: S <= R <= S + k)
  int max_chunks = 8; ///< chunks per rank tried
  int max_steps = 0;  ///< 0: the steps lower bound + 6
  SynthOptions synth;
  /// Called after every attempt (progress for long searches).
  std::function<void(const Attempt &)> on_attempt;
};

struct Pareto {
  std::vector<ParetoPoint> frontier;
  std::vector<Attempt> attempts; ///< every instance tried; the unsat ones are proofs
  int steps_lower_bound = 0;
  std::optional<Fraction> rounds_per_chunk_bound;
  bool complete = false; ///< ended at the bandwidth bound with no unknown answer on the way
  std::string note;
};

/// SCCL, Algorithm 1: for S from the steps lower bound, the candidates (R, C) with
/// S <= R <= S + k, C <= max_chunks and a rounds per chunk at least the lower bound and below
/// the best found so far, in ascending R/C; the first satisfiable one per S is a frontier point.
/// Stops at the bandwidth bound or at max_steps. Every (R, C) is tried as such: no fraction is
/// skipped because a smaller chunk count had it (msccl-tools' shortcut,
/// which misses Line4 Broadcast's (S4, R4, C2)). A composed Allreduce's frontier is the
/// Allgather's, each point composed with its ReduceScatter dual.
[[nodiscard]] Expected<Pareto> pareto(const Topology &topology, const Target &target,
                                      const ParetoOptions &options);

} // namespace syncoll::synth
