// Synthesis targets for the tests: rooted collectives rooted at rank 0, as in SCCL's tables.
#pragma once

#include "model/topology_library.h"
#include "synth/synthesize.h"

#include <rapidcheck.h>

namespace syncoll::synth::testing {

struct Row {
  CollectiveKind kind;
  int chunks, steps, rounds;
};

inline Target target_of(CollectiveKind kind) {
  Target t;
  t.kind = kind;
  if (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Gather ||
      kind == CollectiveKind::Scatter || kind == CollectiveKind::Reduce)
    t.root = 0;
  return t;
}

/// Small connected topologies from the library (2-5 ranks, or the 4-rank hypercube).
inline Topology small_topology() {
  const int n = *rc::gen::inRange(2, 6);
  switch (*rc::gen::inRange(0, 6)) {
  case 0:
    return *line(n);
  case 1:
    return *ring(n);
  case 2:
    return *fully_connected(n);
  case 3:
    return *star(n);
  case 4:
    return *hub_and_spoke(n);
  default:
    return *hypercube(2);
  }
}

} // namespace syncoll::synth::testing
