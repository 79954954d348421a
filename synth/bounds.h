// Lower bounds that prune the search (SCCL, Algorithm 1, lines 2-3): steps from hop
// distances, rounds per chunk from a multi-commodity flow relaxation.
#pragma once

#include "model/collective.h"
#include "model/fraction.h"
#include "model/topology.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::synth {

inline constexpr int kUnreachable = 1 << 20;

/// Hop distances between all ranks over the topology's links.
struct Distances {
  int ranks = 0;
  std::vector<int> hops; ///< row-major, kUnreachable when there is no path
  int at(int from, int to) const { return hops[size_t(from) * size_t(ranks) + size_t(to)]; }
};
Distances hop_distances(const Topology &topology);

/// Fewest steps any algorithm needs: for copied chunks the largest distance from a pre rank to
/// a post rank; for reduced chunks the best root's distance in from every pre rank plus out to
/// every post rank. kUnreachable when some post rank cannot be reached at all.
int steps_lower_bound(const Topology &topology, const CollectiveSpec &collective);

/// A proof by counting that no algorithm has R rounds: some rank must receive more copied chunks
/// than its incoming links carry in R rounds (one chunk per link unit and round). nullopt when
/// the count allows R.
std::optional<std::string> counting_refutation(const Topology &topology,
                                               const CollectiveSpec &collective, int rounds);

/// Fewest rounds per chunk (R/C) any algorithm needs, for a collective whose chunks are all
/// copied: the optimum of a fractional multicast flow (each chunk routed from its pre ranks to
/// each post rank, a link or relation carrying at most capacity x R), solved exactly by z3 over
/// the rationals and divided by the chunk factor. nullopt for a collective with reduced chunks
/// (use its non-combining dual) or when a post rank is unreachable.
std::optional<Fraction> rounds_per_chunk_bound(const Topology &topology,
                                               const CollectiveSpec &collective);

} // namespace syncoll::synth
