// Symmetries of a synthesis instance: a permutation of the ranks that maps every link to a link
// of the same capacity and every bandwidth relation to one of the same capacity, together with a
// permutation of the chunks that carries each chunk's pre and post ranks to another chunk's.
// Such a pair maps every algorithm of the instance to another one with the same steps and
// rounds, so a solver may look only at one algorithm per orbit (lex-leader symmetry breaking,
// the SAT paper's symmetry section; docs/architecture.md, "Synthesis").
#pragma once

#include "model/collective.h"
#include "model/topology.h"

#include <cstdint>
#include <vector>

namespace syncoll::synth {

struct InstanceSymmetry {
  std::vector<int> rank_image;  ///< rank n goes to rank_image[n]
  std::vector<int> chunk_image; ///< chunk c goes to chunk_image[c]
};

struct SymmetryGroup {
  /// A strong generating set along the stabilizer chain of ranks 0, 1, ...: for each rank i and
  /// each rank j it can reach while ranks 0..i-1 stay fixed, one symmetry that does so. The
  /// identity is left out.
  std::vector<InstanceSymmetry> generators;
  /// The group's order, the product of the orbit sizes along the chain (saturates at 2^63).
  std::uint64_t order = 1;
  /// False when the search hit its node budget: the generators are then a subset, still sound
  /// to break but the order is a lower bound.
  bool complete = true;
};

/// The symmetries of (topology, collective), found by backtracking over rank permutations with
/// at most `node_budget` search nodes in all.
SymmetryGroup instance_symmetries(const Topology &topology, const CollectiveSpec &collective,
                                  std::int64_t node_budget = 200000);

} // namespace syncoll::synth
