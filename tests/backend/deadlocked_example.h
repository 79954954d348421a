// The verifier's deadlock example (examples/ir/faulty/d1_head_to_head.xml) for the executors'
// tests: its tables with the gate bypassed (here only), and the check that every thread block an
// executor left waiting is on the counterexample's wait-for cycle.
#pragma once

#include "backend/executor.h"
#include "model/collective_traits.h"
#include "model/mscclir.h"

#include <gtest/gtest.h>
#include <optional>
#include <string>

namespace syncoll::backend::executor_testing {

struct DeadlockedExample {
  ExecutableProgram tables;
  verifier::Report report;
  int64_t size_bytes; ///< a small size that cuts into whole i32 elements
};

/// Fails the test (and returns nothing) when the example cannot be read or no longer deadlocks.
inline std::optional<DeadlockedExample> deadlocked_example() {
  auto read = read_program_file(std::string(SYNCOLL_SOURCE_DIR) +
                                "/examples/ir/faulty/d1_head_to_head.xml");
  if (!read) {
    ADD_FAILURE() << read.error().to_string();
    return std::nullopt;
  }
  const Program &p = read->value;
  verifier::Report report = verifier::verify(p, {});
  if (report.verdict(verifier::Property::DeadlockFreedom).kind != verifier::VerdictKind::Violated) {
    ADD_FAILURE() << "the deadlock example no longer deadlocks:\n" << report.to_text();
    return std::nullopt;
  }
  auto collective = collective_for_program(p, std::nullopt);
  if (!collective) {
    ADD_FAILURE() << collective.error().to_string();
    return std::nullopt;
  }
  return DeadlockedExample{detail::lower_unchecked(p, *collective), std::move(report),
                           int64_t(nccl_tests_chunks(*collective)) * 4 * 16};
}

inline void expect_blocked_on_the_cycle(const verifier::Report &report,
                                        const std::vector<BlockedBlock> &blocked) {
  ASSERT_FALSE(blocked.empty());
  const verifier::Verdict &deadlock = report.verdict(verifier::Property::DeadlockFreedom);
  const auto &cycle = std::get<verifier::DeadlockCounterexample>(deadlock.counterexample).cycle;
  for (const BlockedBlock &b : blocked) {
    bool named = false;
    for (const verifier::Wait &w : cycle)
      named = named || (w.waiter.rank == b.rank && w.waiter.tb == b.tb);
    EXPECT_TRUE(named) << "rank " << b.rank.value() << " tb " << b.tb.value() << " waits for "
                       << b.waiting_for << "\n"
                       << report.to_text();
    EXPECT_FALSE(b.waiting_for.empty());
  }
}

} // namespace syncoll::backend::executor_testing
