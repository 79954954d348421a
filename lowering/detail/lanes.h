// Lowering by connection, its first part (by_connection.cpp emits): every send of an algorithm
// on its link, lanes per link, which receiving links share the thread blocks of a sending one,
// and the lane of every transfer. docs/lowering.md, "Lowering by connection".
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/topology.h"

#include <cstdint>
#include <vector>

namespace syncoll::lowering::detail {

/// Lanes per link, and the links whose receiving thread blocks are a sending link's: a rank that
/// forwards what one neighbour sends it to another does both in one thread block per lane.
struct Connections {
  std::vector<int> lanes;
  std::vector<int> sent_on; ///< per link: the rank's outgoing link that shares its thread blocks
};

struct Transfer {
  int chunk;
  int src, dst;
  bool reduce;
  int link;
  int lane;
};

/// Every send of the algorithm with its link, in step order; `per_step` gets the end of each
/// step's sends. Fails for a rank, chunk or link the machine does not have.
[[nodiscard]] Expected<std::vector<Transfer>> transfers_of(const Algorithm &a, const Topology &t,
                                                           const CollectiveSpec &c,
                                                           std::vector<int> &per_step);

/// Lanes per link: the link's capacity, as far as a step's sends over it can use it, and enough
/// that `budget` steps per thread block hold its transfers; at most `most`. The lanes a link's
/// bandwidth wants give way, the busiest first, where a rank would need more than `resident`
/// thread blocks; the ones the step budget needs do not.
std::vector<int> initial_lanes(const Topology &t, const std::vector<Transfer> &transfers,
                               const std::vector<int> &per_step, int budget, int most,
                               int resident);

/// The k-th transfer over a link takes lane k mod its lanes; `sent` counts them per link.
void assign_lanes(std::vector<Transfer> &transfers, const std::vector<int> &lanes,
                  std::vector<int64_t> &sent);

/// Pairs a rank's receiving link with the sending link it forwards most to, where both have
/// the same lanes, neither carries two transfers on a lane in one step (with Simple's two FIFO
/// slots, a thread block that sends several messages of a step before its receives could wait
/// on a neighbour doing the same), and one thread block holds both within `budget` steps.
/// Per link: the outgoing link that shares its thread blocks, or -1.
std::vector<int> pair_connections(const Topology &t, int chunks,
                                  const std::vector<Transfer> &transfers,
                                  const std::vector<int> &per_step, const std::vector<int> &lanes,
                                  int budget);

} // namespace syncoll::lowering::detail
