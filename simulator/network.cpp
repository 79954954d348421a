#include "simulator/network.h"

#include "model/invariant.h"

namespace syncoll::simulator {

std::optional<TransferTimes> Network::start(std::span<const LinkId> route, int64_t bytes,
                                            Picoseconds ready, Switching switching, uint32_t tag,
                                            double rate_cap) {
  SYNCOLL_INVARIANT(!route.empty(), "transfer over an empty route");
  bool fluid = false;
  if (booking_.has_fair())
    for (LinkId l : route)
      fluid = fluid || booking_.fair(l);
  if (!fluid && route.size() == 1)
    return booking_.reserve(route.front(), bytes, ready);
  // A multi-hop or fair-shared transfer takes each hop when it gets there, in the order the
  // transfers get there: booking the whole route up front would hold links far ahead of the
  // transfer and keep later transfers out of the gaps before it.
  fluid_.start(route, bytes, ready, switching, tag, rate_cap);
  return std::nullopt;
}

} // namespace syncoll::simulator
