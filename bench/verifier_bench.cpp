// Verifier speed on ring Allreduce programs of growing size: every property in every
// mode, against the target of 100 ms per property, and the whole report under 100 ms at 20,000
// steps (32 ranks x 10 channels); the time per step across the sizes shows the checks are linear.
#include "bench/quick_flag.h"
#include "testing/programs.h"
#include "verifier/detail/connections.h"
#include "verifier/detail/execution.h"
#include "verifier/detail/races.h"
#include "verifier/detail/symbolic.h"
#include "verifier/structural.h"
#include "verifier/verify.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

template <class F> double best_ms(int repeats, F &&f) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    auto start = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  using namespace syncoll;
  const bool quick = syncoll::bench::quick_flag(argc, argv, "verifier_bench");
  struct Size {
    int ranks, channels;
  };
  const std::vector<Size> sizes =
      quick ? std::vector<Size>{{16, 2}}
            : std::vector<Size>{{16, 3}, {16, 6}, {16, 12}, {16, 24}, {32, 10}};
  const int repeats = quick ? 1 : 5;
  constexpr double kTargetMs = 100.0;

  std::printf("verifier on ring Allreduce (best of %d runs; target %.0f ms per property, and for "
              "the whole report at 20,000 steps)\n\n",
              repeats, kTargetMs);
  std::printf("%5s %8s %7s | %9s %9s %9s %9s %9s %9s | %10s %10s | %7s %9s\n", "ranks", "channels",
              "steps", "structure", "resources", "deadlock", "race-str", "race-rlx", "postcond",
              "verify-str", "verify-rlx", "ns/step", "worst/tgt");
  for (const auto [ranks, channels] : sizes) {
    const Program p = testing::ring_allreduce_program(ranks, channels);
    size_t steps = 0;
    for (const auto &rp : p.ranks())
      for (const auto &tb : rp.thread_blocks)
        steps += tb.steps.size();
    auto collective = collective_for_program(p, std::nullopt);
    const auto cm = verifier::detail::map_connections(p);
    const double structure =
        best_ms(repeats, [&] { (void)verifier::check_structure(p, &*collective); });
    const double resources = best_ms(repeats, [&] { (void)verifier::check_resources(p, {}); });
    const double deadlock = best_ms(repeats, [&] {
      for (int per_transfer : {kMaxStepCount, 1})
        (void)verifier::detail::execute(p, cm, {2, per_transfer, 2}, nullptr);
    });
    auto race = [&](verifier::RaceMode mode) {
      return best_ms(repeats, [&] {
        verifier::detail::SymbolicMemory cells(p, &*collective, true);
        (void)verifier::detail::find_races(p, cm, cells, mode, "in place", 10);
      });
    };
    const double race_strict = race(verifier::RaceMode::Strict);
    const double race_relaxed = race(verifier::RaceMode::Relaxed);
    const double postcondition = best_ms(repeats, [&] {
      verifier::detail::SymbolicMemory memory(p, &*collective, true);
      (void)verifier::detail::execute(p, cm, {2, kMaxStepCount, 2}, &memory);
    });
    verifier::VerifyOptions strict, relaxed;
    relaxed.race_mode = verifier::RaceMode::Relaxed;
    bool holds = true;
    const double verify_strict =
        best_ms(repeats, [&] { holds = holds && verifier::verify(p, strict).all_hold(); });
    const double verify_relaxed =
        best_ms(repeats, [&] { holds = holds && verifier::verify(p, relaxed).all_hold(); });
    const double worst =
        std::max({structure, resources, deadlock, race_strict, race_relaxed, postcondition});
    std::printf(
        "%5d %8d %7zu | %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f | %10.2f %10.2f | %7.0f %9.3f%s\n",
        ranks, channels, steps, structure, resources, deadlock, race_strict, race_relaxed,
        postcondition, verify_strict, verify_relaxed, verify_strict * 1e6 / double(steps),
        worst / kTargetMs, holds ? "" : "  (NOT VERIFIED)");
    if (!holds)
      return 1;
  }
  std::printf("\nms per property; verify-* = the whole report in that race mode; "
              "worst/tgt = slowest property / %.0f ms (below 1 meets the target)\n",
              kTargetMs);
  return 0;
}
