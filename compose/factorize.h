// A composition factorized for a machine's hierarchy (HiCCL's optimizations; docs/compose.md):
// every primitive becomes point-to-point copies and reductions along a tree whose levels are the
// hierarchy's, striped over several GPUs of the root's top-level group (one NIC each), chained as
// a ring across top-level groups, and pipelined in pieces. The result is a chunk-DSL program that
// lowers, verifies and simulates like any other.
#pragma once

#include "compose/composition.h"
#include "lowering/dsl.h"
#include "model/topology.h"

#include <string>
#include <vector>

namespace syncoll::compose {

struct Hierarchy {
  /// Group counts per level, outermost first (nodes, GPUs per node, ...); their product is the
  /// rank count. Ranks are numbered so that consecutive ranks share the innermost groups.
  std::vector<int> factors;
  /// Parts each primitive is split into at the root's top-level group, each sent across the top
  /// level by a different GPU of that group (so through a different NIC). Divides the top-level
  /// group size.
  int stripes = 1;
  /// Top-level groups chained one after another; 1 is a pure tree (the root's group sends to
  /// every other group), the top-level group count a pure ring.
  int ring_nodes = 1;
  /// Pieces each stripe is cut into, sent one after another so that the tree's stages overlap.
  int pipeline = 1;
};

/// One copy or reduction of the factorized plan, for drawing and tests.
struct Hop {
  bool reduces = false;
  int from = 0;
  int to = 0;
  int level = 0;    ///< hierarchy level the hop crosses (0: the outermost; -1: a local copy)
  int stage = 0;    ///< depth in its part's tree
  int time = 0;     ///< wavefront step it is emitted at
  int channel = -1; ///< -1: a local copy
};

struct Factorized {
  lowering::DslProgram program;
  std::vector<Hop> hops;
  int steps = 0; ///< wavefront steps (HiCCL's S + m - 1 for one primitive)
};

/// Fails (bad input) for factors that do not multiply to the rank count, stripes that do not
/// divide the top-level group, ring nodes outside 1..top-level groups, a pipeline depth below 1,
/// and for a hop over a link the topology lacks.
[[nodiscard]] Expected<Factorized> factorize(const Composition &composition,
                                             const CollectiveSpec &collective,
                                             const Hierarchy &hierarchy, const Topology &topology,
                                             lowering::DslOptions options = {});

/// `factors` checked against `ranks`, with the defaults HiCCL would start from: one level of
/// `ranks` when empty.
[[nodiscard]] Expected<Hierarchy> checked(Hierarchy hierarchy, int ranks);

} // namespace syncoll::compose
