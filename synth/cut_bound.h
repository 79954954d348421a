// The exact cut bound of Allgather and ReduceScatter on any topology (switches and relations
// included), with its certificate (model/cut_certificate.h says what the bound is and how a cut
// is checked).
//
// The bound is the largest |S ∩ ranks| / B+(S) over the cuts S. It is found by Newton's method on
// max-flows (Dinkelbach): at a candidate ratio lambda, a flow network gets a source feeding one
// unit into every rank and every link lambda x its bandwidth; lambda is the bound exactly when
// every rank can take in N units. A rank that cannot yields, from its minimum cut, a cut with a
// larger ratio, which becomes the next candidate; candidates only grow, so ranks already passed
// stay passed. Each rank's final flow is checked by check_sink_flow as it is found, and the
// attaining cut by evaluate_cut: both from the topology alone, sharing with the max-flow only the
// flow network's edges (model/cut_certificate.h), not its arithmetic.
#pragma once

#include "model/collective.h"
#include "model/cut_certificate.h"
#include "model/topology.h"

namespace syncoll::synth {

struct CutBound {
  CutDirection direction = CutDirection::Leaving; ///< Allgather; Entering: ReduceScatter
  int ranks = 0;
  /// ns per byte of one rank's share: time >= (M / N) x lambda for M bytes in all.
  Fraction lambda;
  /// The best bandwidth a schedule can reach, N / lambda GB/s (nccl-tests' algbw).
  Fraction bandwidth_gbps;
  /// The cut that attains lambda, and its value recomputed from the topology.
  Cut cut;
  CutValue value;
  int64_t units_per_gbps = 1;
  /// Ranks whose flow (one unit from every rank within lambda x each bandwidth) was checked:
  /// all of them, or the bound would not be returned.
  int flows_checked = 0;
  /// Max-flows run (the work).
  int max_flows = 0;
};

/// The bound for `direction`'s collective. Fails for topologies the flow network cannot hold
/// (exact_bandwidths), ranks no data can reach, or bandwidths past its exact arithmetic.
[[nodiscard]] Expected<CutBound> cut_bound(const Topology &topology, CutDirection direction);

/// Re-derives the bound's cut value from the topology and checks that it attains the bound's
/// lambda; a message when it does not.
std::optional<std::string> check_cut_bound(const Topology &topology, const CutBound &bound);

} // namespace syncoll::synth
