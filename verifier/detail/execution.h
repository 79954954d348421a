// One maximal execution of a program, greedy and in time linear in the messages it moves. Under
// the structural rules this decides deadlock (docs/semantics.md, "Why one maximal execution
// decides deadlock"); with a SymbolicMemory it also computes iteration 0's data.
#pragma once

#include "model/program.h"
#include "verifier/detail/connections.h"
#include "verifier/detail/symbolic.h"
#include "verifier/report.h"

#include <optional>
#include <vector>

namespace syncoll::verifier::detail {

struct ExecutionConfig {
  int fifo_capacity = 2; ///< messages in flight per connection
  /// Count splitting: a step moves ceil(cnt / this) messages (kMaxStepCount: one per step for
  /// small messages; 1: one per chunk for large ones).
  int max_chunks_per_transfer = kMaxStepCount;
  int iterations = 2;
};

struct BlockedTb {
  enum class Kind { Receive, Send, Dependency };
  StepRef at;
  Kind kind;
  int connection = -1;       ///< Receive / Send
  std::optional<TbId> on_tb; ///< Dependency: the thread block whose flag it waits for
  int message = 0;           ///< message within the step
  int messages = 1;
};

struct ExecutionResult {
  bool completed = false;
  std::vector<BlockedTb> blocked;
  int finished_tbs = 0;
  long long messages_moved = 0;
};

ExecutionResult execute(const Program &program, const ConnectionMap &connections,
                        const ExecutionConfig &config, SymbolicMemory *memory);

} // namespace syncoll::verifier::detail
