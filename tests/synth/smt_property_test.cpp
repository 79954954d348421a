// Properties of synthesis on random small instances: every answer respects the lower bounds and
// checks, and feasibility is monotone (one more round, or one more step and round, never hurts).
#include "model/topology_library.h"
#include "synth/bounds.h"
#include "synth/combining.h"
#include "synth/synthesize.h"
#include "tests/synth/targets.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::synth {
namespace {

using testing::small_topology;

Target small_target() {
  return testing::target_of(*rc::gen::element(CollectiveKind::Allgather, CollectiveKind::Broadcast,
                                              CollectiveKind::Gather, CollectiveKind::Scatter,
                                              CollectiveKind::Alltoall, CollectiveKind::Reduce,
                                              CollectiveKind::ReduceScatter));
}

RC_GTEST_PROP(SmtSynthProperty, AnswersRespectBoundsAndFeasibilityIsMonotone, ()) {
  const Topology topology = small_topology();
  const Target target = small_target();
  const int chunks = *rc::gen::inRange(1, 3);
  const int steps = *rc::gen::inRange(1, 5);
  const int rounds = steps + *rc::gen::inRange(0, 3);
  RC_TAG(collective_kind_name(target.kind));
  SynthOptions smt;
  smt.backend = Backend::Smt;
  auto spec = target.collective(topology.num_ranks(), chunks);
  RC_ASSERT(spec.has_value());
  auto a = synthesize(topology, target, chunks, {steps, rounds}, smt);
  RC_ASSERT(a.has_value());
  RC_ASSERT(a->verdict != Verdict::Unknown);
  RC_TAG(verdict_name(a->verdict));
  if (a->verdict == Verdict::Unsat)
    return;
  RC_ASSERT(check_algorithm(*a->algorithm, topology, *spec).holds());
  RC_ASSERT(steps >= steps_lower_bound(topology, *spec));
  // The flow bound is stated for the non-combining form: the dual on the reversed topology.
  const auto dual = non_combining_dual(*spec);
  const std::optional<Fraction> rpc =
      dual ? rounds_per_chunk_bound(reverse_topology(topology), *dual)
           : rounds_per_chunk_bound(topology, *spec);
  if (rpc)
    RC_ASSERT(!less(Fraction{rounds, chunks}, *rpc));
  for (StepsRounds more : {StepsRounds{steps, rounds + 1}, StepsRounds{steps + 1, rounds + 1}}) {
    auto b = synthesize(topology, target, chunks, more, smt);
    RC_ASSERT(b.has_value());
    RC_ASSERT(b->verdict == Verdict::Sat);
  }
}

} // namespace
} // namespace syncoll::synth
