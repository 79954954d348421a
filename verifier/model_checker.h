// Explicit-state model checker for deadlock: every interleaving of thread-block moves, with state
// hashing and a partial-order reduction. Written apart from the linear-time check
// (verifier/detail/execution.cpp) so the two cross-check each other, and the only sound check for
// programs that break the structural rules (docs/semantics.md).
//
// A move is one message of a step (push, pop, or both for fused steps) or one local step. The
// reduction explores a single move when some thread block's next move is local and publishes no
// flag: such a move touches only its own thread block, nothing else enables or disables it, so
// taking it first loses no deadlock (an ample set of size one; the state graph is acyclic).
#pragma once

#include "model/program.h"
#include "verifier/report.h"

#include <cstddef>
#include <string>
#include <vector>

namespace syncoll::verifier {

struct ModelCheckOptions {
  int fifo_capacity = 2;
  int max_chunks_per_transfer = kMaxStepCount; ///< count splitting, as in detail::ExecutionConfig
  int iterations = 2;
  size_t max_states = 2'000'000; ///< past this the answer is unknown
  bool partial_order_reduction = true;
};

struct ModelCheckResult {
  enum class Outcome { DeadlockFree, Deadlock, Unknown };
  Outcome outcome = Outcome::Unknown;
  size_t states = 0;
  std::vector<std::string> trace; ///< the moves that reach the deadlock, in order
  std::vector<StepRef> stuck;     ///< where the unfinished thread blocks stand
};

ModelCheckResult model_check_deadlock(const Program &program, const ModelCheckOptions &options);

} // namespace syncoll::verifier
