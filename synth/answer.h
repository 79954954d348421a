// What a synthesis query answers (docs/architecture.md, "Synthesis"): an algorithm, a proof that
// none exists, or "unknown" when the solver ran out of time. Unknown is never reported as either of
// the others.
#pragma once

#include "model/algorithm.h"

#include <optional>
#include <string>

namespace syncoll::synth {

enum class Backend { Smt, Sat };

enum class Verdict {
  Sat,     ///< an algorithm exists; it is in the answer and passed check_algorithm
  Unsat,   ///< proven: no algorithm with these parameters exists
  Unknown, ///< the time limit ran out first
};

struct SynthOptions {
  Backend backend = Backend::Sat;
  double time_limit_s = 0; ///< per solver call; 0 for none
  /// least_steps: for the whole search (each call gets what is left); 0 for none.
  double search_time_limit_s = 0;
  /// SAT backend: have CaDiCaL check its unsat proofs while it solves (slower).
  bool certify = false;
  /// SAT backend: answer with the fewest rounds up to the instance's R (same steps), found on
  /// one formula by capping the rounds with assumptions.
  bool fewest_rounds = false;
  /// SAT backend: break the instance's topology symmetries with lex-leader constraints (sound,
  /// but slower on every instance measured, so off unless asked for).
  bool break_symmetry = false;
};

/// A k-synchronous instance (SCCL, section 3.2): S steps and R rounds in all. The chunk count is
/// the collective's (its chunk factor).
struct StepsRounds {
  int steps = 1;
  int rounds = 1;
};

struct Answer {
  Verdict verdict = Verdict::Unknown;
  std::optional<Algorithm> algorithm;
  double seconds = 0;
  /// Why: the solver's reason for unknown, the bound that refuted an instance without a solver
  /// call, or how a combining collective was obtained.
  std::string detail;
  /// For Unsat: empty when no k-synchronous algorithm at all exists; otherwise the class of
  /// algorithms the proof covers (a composed or tree-shaped Allreduce), since others may exist.
  std::string unsat_scope;
  /// For Unsat with certify on: whose proof check passed (empty when none was run).
  std::string certificate;
};

std::string_view verdict_name(Verdict v);

} // namespace syncoll::synth
