// Differential properties: the linear-time deadlock check and the explicit-state model checker
// agree on random small programs (docs/architecture.md, "Tests and benchmarks"), in both protocols'
// FIFO capacities and both count-splitting regimes; and the model checker's partial-order reduction
// loses nothing.
#include "testing/generators.h"
#include "verifier/detail/connections.h"
#include "verifier/detail/execution.h"
#include "verifier/model_checker.h"
#include "verifier/structural.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::verifier {
namespace {

RC_GTEST_PROP(DeadlockProperty, LinearCheckAgreesWithModelChecker, ()) {
  const Program p = *testing::gen_connected_program(false);
  RC_PRE(!breaks_persistence(check_structure(p, nullptr)));
  const auto cm = detail::map_connections(p);
  std::string regimes;
  for (int capacity : {2, 8})
    // Small messages (a step per transfer), medium (two chunks per transfer), large (one each).
    for (int per_transfer : {kMaxStepCount, 2, 1}) {
      auto linear = detail::execute(p, cm, {capacity, per_transfer, 2}, nullptr);
      auto mc = model_check_deadlock(p, {capacity, per_transfer, 2, 200'000, true});
      RC_ASSERT(mc.outcome != ModelCheckResult::Outcome::Unknown);
      regimes += linear.completed ? 'F' : 'D';
      RC_ASSERT(linear.completed == (mc.outcome == ModelCheckResult::Outcome::DeadlockFree));
    }
  // Which of (Simple, LL) x (small, large messages) deadlock: the distribution shows that the
  // regimes really differ on some programs.
  RC_TAG(regimes);
}

RC_GTEST_PROP(DeadlockProperty, PartialOrderReductionLosesNoDeadlock, ()) {
  const Program p = *testing::gen_connected_program(true);
  for (int per_transfer : {kMaxStepCount, 2, 1}) {
    auto reduced = model_check_deadlock(p, {2, per_transfer, 2, 200'000, true});
    auto full = model_check_deadlock(p, {2, per_transfer, 2, 400'000, false});
    RC_PRE(full.outcome != ModelCheckResult::Outcome::Unknown);
    RC_ASSERT(reduced.outcome == full.outcome);
    RC_ASSERT(reduced.states <= full.states);
  }
}

} // namespace
} // namespace syncoll::verifier
