// An independent oracle for MSCCL++ execution plans: random schedules under a weak memory
// model, sharing no code with the verifier's execution (mscclpp/detail/plan_execution.h), only
// the plan's types and the semantics docs/semantics.md writes down. In a schedule, a thread
// block's writes linger in it until a fence (a signal, a barrier, a semaphore release, its
// kernel's end) or a random delivery, in any order; a port channel's proxy works its queue at
// random times, reading a put's source when it gets to it; GPUs launch at random (their users
// write the input then) and end when their thread blocks have (their users read the output,
// then may write the input again). Chunk values are symbolic and split in lanes, so that
// thread-block groups and two iterations of every pipeline touch disjoint parts. A plan
// misbehaves when some schedule deadlocks, ends a GPU's kernel with a wrong output, writes a
// GPU's buffers before its kernel started or its output after it ended, or moves slices of
// different sizes.
#pragma once

#include "mscclpp/plan.h"

#include <cstdint>
#include <string>

namespace syncoll::testing {

struct PlanOracleVerdict {
  bool misbehaves = false;
  std::string how; ///< the first misbehaviour seen, with the schedule's seed
};

/// Runs `schedules` random schedules of the plan; `seed` makes them reproducible.
[[nodiscard]] PlanOracleVerdict run_plan_oracle(const mscclpp::ExecutionPlan &plan, int schedules,
                                                uint64_t seed);

} // namespace syncoll::testing
