// Allgather, ReduceScatter and Allreduce schedules for machines past the exact searches, in as many
// steps as the diameter, with their bandwidth measured exactly against the cut bound
// (docs/scale.md, "Breadth-first schedules").
//
// Breadth-first broadcast: in step t every rank receives the chunks of the ranks t hops away,
// each chunk over a link from a neighbour that got it in step t-1 (one hop nearer its owner).
// A link into v carries only chunks v needs, so each rank's incoming links are balanced on their
// own: the chunks of a step are spread over the allowed links, fewest choices first, each to the
// link it keeps least busy for its bandwidth. On tori and hypercubes this reaches the cut bound
// exactly (every rank's links are equally loaded in every step); on meshes and irregular shapes
// it says how far it stays from it.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/fraction.h"
#include "model/topology.h"
#include "synth/cut_bound.h"

#include <functional>
#include <string_view>
#include <vector>

namespace syncoll::synth {

struct ScaleSchedule {
  CollectiveKind kind = CollectiveKind::Allgather;
  /// Allgather and ReduceScatter: chunk i * N + n is the i-th of rank n's `chunks` pieces (SCCL's
  /// numbering); Allreduce: N x `chunks` chunks per rank, by buffer slot.
  Algorithm algorithm;
  int chunks = 1;
  /// The cut bounds that hold the schedule: the ReduceScatter's, then the Allgather's (an
  /// Allreduce has both).
  std::vector<CutBound> bounds;
  /// The bounds' lambdas summed: ns per byte of one rank's share no schedule of this form beats.
  Fraction lambda;
  /// ns per byte of one rank's share that the steps' busiest links take, summed over steps.
  Fraction cost;
  /// lambda / cost: 1 is optimal.
  Fraction efficiency;
  /// The same sends pipelined (every step in flight at once: each piece's sends form a tree from
  /// its owner): the busiest link or relation over all steps; and lambda over it. Allgather only.
  Fraction pipelined_cost;
  Fraction pipelined_efficiency;
};

/// Fails unless a share is cut into at least 1 piece and an Allgather of `pieces` pieces per rank
/// on `ranks` ranks fits an algorithm's 2^24 chunk copies (ranks^2 x pieces); every schedule here
/// checks its pieces with it.
[[nodiscard]] Expected<void> check_allgather_pieces(int ranks, int pieces);

/// A schedule's own cost, in ns, of `share_bytes` per rank: `steps` times the network's largest
/// link latency, plus the bandwidth term `ns_per_byte` (a ScaleSchedule's or a cluster plan's
/// cost) times the share. What a lowered program's simulated time is held against.
[[nodiscard]] double planned_ns(const Topology &topology, int steps, Fraction ns_per_byte,
                                double share_bytes);

/// A breadth-first Allgather of `chunks` pieces per rank. Fails for topologies with switches
/// (a k-synchronous algorithm sends between ranks), ranks that cannot reach every other, or a
/// topology the cut bound refuses.
[[nodiscard]] Expected<ScaleSchedule> breadth_first_allgather(const Topology &topology, int chunks);

/// An Allgather schedule of a topology (the topology itself or its reversal).
using AllgatherOf = std::function<Expected<ScaleSchedule>(const Topology &)>;

/// Allgather; ReduceScatter as the Allgather of the reversed topology run backwards with
/// reductions (every rank sums what its subtree sent before it forwards; its bound, computed
/// separately, must equal the reversed Allgather's); or Allreduce as that ReduceScatter followed
/// by the Allgather, each chunk renamed to its buffer slot. `method` names the algorithms
/// ("bfb"). Fails as `allgather` does, for other collectives, and for an Allreduce whose N x
/// chunks per rank the collective model cannot hold.
[[nodiscard]] Expected<ScaleSchedule> from_allgather(const Topology &topology, CollectiveKind kind,
                                                     int chunks, std::string_view method,
                                                     const AllgatherOf &allgather);

/// from_allgather with the breadth-first Allgather.
[[nodiscard]] Expected<ScaleSchedule> breadth_first(const Topology &topology, CollectiveKind kind,
                                                    int chunks);

} // namespace syncoll::synth
