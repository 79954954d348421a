// The cut bound of Allgather and ReduceScatter as a certificate a reader can check
// (docs/scale.md, "The cut bound").
//
// Every byte that ranks inside a set S of vertices hold and a rank outside needs crosses the
// links leaving S, so an Allgather of M bytes (M/N from each of N ranks) takes at least
// (M/N) * |S ∩ ranks| / B+(S), B+(S) the bandwidth leaving S, for every S that leaves some rank
// out; a ReduceScatter's ranks outside S send into it, over the links entering S. The largest
// ratio over all S is the bound, and pipelined spanning trees attain it where switches only
// forward (so it is the optimum of the bandwidth term).
//
// The network the cuts are taken in: ranks, switches, and a vertex of its own for every relation
// of several links. A relation whose links all leave one vertex u sits between u and them (u ->
// relation at the relation's bandwidth, then each link at its own); one whose links all enter
// one vertex v sits between them and v. A relation of one link lowers that link's bandwidth.
// A relation of links with several sources and several destinations has no place in a flow
// network, and a link under two multi-link relations of one side neither: such topologies are
// refused.
//
// Everything is exact: bandwidths become integers of a common unit (exact_bandwidths), and the
// bound is the fraction |S ∩ ranks| / B+(S).
#pragma once

#include "model/diagnostics.h"
#include "model/fraction.h"
#include "model/topology.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace syncoll {

/// Every link's and every relation's bandwidth as a whole number of 1/units_per_gbps GB/s; a
/// relation's is its capacity in chunks at its slowest link's rate per chunk. Unlike
/// ExactBandwidths, any relation fits: this is what a schedule's cost is counted in.
struct ExactUnits {
  int64_t units_per_gbps = 1;
  std::vector<int64_t> links; ///< per link, its own bandwidth (not lowered by relations)
  std::vector<int64_t> relations;
};

/// Fails for a bandwidth that is not a decimal of at most nine places or needs more precision
/// than 10^9 units per GB/s.
[[nodiscard]] Expected<ExactUnits> exact_units(const Topology &topology);

/// Where a relation sits in the flow network (see the header comment).
enum class RelationShape {
  OneLink,           ///< caps its single link
  SharedSource,      ///< between its links' common source and them
  SharedDestination, ///< between its links and their common destination
};

/// Every link's and every relation's bandwidth as a whole number of 1/units_per_gbps GB/s, and
/// each relation's shape.
struct ExactBandwidths {
  int64_t units_per_gbps = 1;
  std::vector<int64_t> links; ///< per link, already lowered by its one-link relations
  std::vector<int64_t> relations;
  std::vector<RelationShape> shapes;
  /// Per link: the multi-link relation it leaves through and the one it enters through, or -1.
  std::vector<int32_t> source_relation;
  std::vector<int32_t> destination_relation;
};

/// Fails (with what to change) for a bandwidth that is not a decimal of at most nine places, a
/// relation that fits no shape, or a link under two multi-link relations of one shape.
[[nodiscard]] Expected<ExactBandwidths> exact_bandwidths(const Topology &topology);

/// Allgather data leaves a cut; ReduceScatter data enters it.
enum class CutDirection { Leaving, Entering };

/// An edge of the flow network. Its vertices: the topology's, then one per relation (numbered
/// num_vertices() + relation index; a relation of one link has none).
struct FlowEdge {
  int32_t tail;
  int32_t head;
};
/// Link `l`'s edge, along the data (against it when Entering): from its source's relation
/// vertex, if it leaves through one, to its destination's, if it enters through one.
FlowEdge link_edge(const Topology &topology, const ExactBandwidths &bandwidths, size_t l,
                   CutDirection direction);
/// Relation `r`'s edge between its shared end and its vertex, or none for a one-link relation.
std::optional<FlowEdge> relation_edge(const Topology &topology, const ExactBandwidths &bandwidths,
                                      size_t r, CutDirection direction);

/// A set S of vertices of the flow network.
struct Cut {
  std::vector<RankId> vertices;   ///< ranks and switches inside S, sorted
  std::vector<int32_t> relations; ///< relation vertices inside S, sorted
};

/// |S ∩ ranks| and the bandwidth crossing S in `direction`, in units.
struct CutValue {
  int ranks_inside = 0;
  int64_t bandwidth = 0;
};

/// Recomputed from the topology alone (the certificate's check).
CutValue evaluate_cut(const Topology &topology, const ExactBandwidths &bandwidths, const Cut &cut,
                      CutDirection direction);

/// A flow that carries one unit of data from every rank to `sink` (Leaving; from `sink` to every
/// rank when Entering), every value scaled by `scale`.
struct SinkFlow {
  RankId sink;
  int64_t scale = 1;
  std::vector<int64_t> links;      ///< per link, along the link (against it when Entering)
  std::vector<int64_t> from_ranks; ///< per rank: what it puts in (takes out when Entering)
};

/// Why `flow` is not a flow of N units at the time per unit `lambda` (ns per byte of one rank's
/// share: each link and relation carries at most lambda x its bandwidth x scale in units), or
/// nothing when it is one. Such a flow for every sink shows that no cut needs more than lambda.
std::optional<std::string> check_sink_flow(const Topology &topology,
                                           const ExactBandwidths &bandwidths,
                                           CutDirection direction, Fraction lambda,
                                           const SinkFlow &flow);

} // namespace syncoll
