// Allgather on direct-connect machines in the diameter's steps or a few more, paced to the ranks
// that bind the cut bound (docs/scale.md, "Paced schedules").
//
// A breadth-first schedule makes every rank take in the chunks t hops away in step t. On a mesh
// the centre then has far more to take in early than a corner can, and the corners more late,
// so no step keeps the corners' links busy while the rest wait on them. A paced schedule instead
// caps every link in step t at c_t pieces per unit of bandwidth, c_t the pace of the binding
// ranks (those whose own cut, every other rank's share over their incoming bandwidth, attains
// the bound): as even over the steps as their hop balls allow, adding up to that bound. Under
// the cap every rank takes chunks earliest deadline first. A chunk must reach v by step
// T - 1 - h, with h the most hops it still has to go past v along shortest paths from its owner:
// met everywhere, every rank holds every chunk after T steps. When some rank cannot meet a step's
// deadlines under c_t, that step's cap rises to the least that lets every rank meet them, so a
// paced schedule always completes and its efficiency says how well the pace held.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/topology.h"
#include "synth/scale.h"

namespace syncoll::synth {

/// A paced Allgather of `pieces` pieces per rank's share in `steps` steps (at least the
/// diameter). Fails for topologies with switches or bandwidth relations, ranks with more than 12
/// incoming links, ranks that cannot reach every other, fewer steps than the diameter, or more
/// than 2^24 chunk copies.
[[nodiscard]] Expected<ScaleSchedule> paced_allgather(const Topology &topology, int pieces,
                                                      int steps);

/// The pieces per share whose pace can add up to the bound exactly: the binding ranks' incoming
/// bandwidth in multiples of the links' greatest common unit (2 on a 2D mesh, 3 on a 3D one).
[[nodiscard]] Expected<int> paced_pieces(const Topology &topology);

/// from_allgather (synth/scale.h) with the paced Allgather.
[[nodiscard]] Expected<ScaleSchedule> paced(const Topology &topology, CollectiveKind kind,
                                            int pieces, int steps);

} // namespace syncoll::synth
