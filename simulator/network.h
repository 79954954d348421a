// Links and bandwidth relations as resources that transfers hold (docs/cost-model.md).
//
// A transfer of b bytes over link l holds l for b / bandwidth(l), and holds every bandwidth
// relation containing l for b / bandwidth(relation), first come first served (the serialized
// FIFO policy). It arrives alpha(l) after it started plus its serialization time (cut-through:
// latency and serialization overlap along the path, so they add once).
#pragma once

#include "model/topology.h"
#include "simulator/event_queue.h"

#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace syncoll::simulator {

struct TransferTimes {
  Picoseconds start = 0;
  Picoseconds arrival = 0;
};

/// How a transfer crosses an intermediate rank on a multi-hop route.
enum class Switching {
  CutThrough,      ///< forwarding starts after the first bytes: latencies add, serialization once
  StoreAndForward, ///< forwarding starts when the whole message is in: serialization per hop
};

struct LinkUsage {
  int64_t bytes = 0;
  Picoseconds busy = 0;
};

class Network {
public:
  /// `efficiency` scales every bandwidth (a protocol's payload share: LL 0.5, LL128 120/128).
  Network(const Topology &topology, double efficiency);

  /// Reserves link `link` for `bytes`, no earlier than `ready`.
  TransferTimes reserve(LinkId link, int64_t bytes, Picoseconds ready);
  /// Reserves every link of a route in turn; each hop starts when the previous hop has
  /// delivered enough (its latency under cut-through, latency and serialization under
  /// store-and-forward) and its own link is free.
  TransferTimes reserve_route(std::span<const LinkId> route, int64_t bytes, Picoseconds ready,
                              Switching switching);
  /// The links of a shortest route from src to dst (breadth first, lowest rank ids first), the
  /// direct link when there is one; empty when dst cannot be reached. Cached per pair.
  std::span<const LinkId> route(RankId src, RankId dst);

  const std::vector<LinkUsage> &usage() const { return usage_; }
  const Topology &topology() const { return topology_; }
  /// Serialization time of `bytes` on a link alone.
  Picoseconds serialization(LinkId link, int64_t bytes) const;

private:
  // Everything a transfer reads or writes about its link, in one cache line.
  struct LinkState {
    Picoseconds free_at = 0;
    Picoseconds alpha = 0;
    int64_t memo_bytes = -1; ///< the last size serialized, and its time: schedules repeat it
    Picoseconds memo_time = 0;
    int32_t relations_begin = 0; ///< into relation_ids_
    int32_t relations_end = 0;
  };

  const Topology &topology_;
  double efficiency_;
  std::vector<LinkState> links_;
  std::vector<int32_t> relation_ids_; ///< relations of each link, contiguous
  std::vector<Picoseconds> relation_free_;
  std::vector<double> relation_bytes_per_ns_;
  std::vector<LinkUsage> usage_;
  std::vector<LinkId> every_link_; ///< link i at index i: one-link routes are spans of it
  std::map<std::pair<int, int>, std::vector<LinkId>> routes_; ///< multi-hop routes, by ends
};

/// ps to move `bytes` at `bytes_per_ns`, rounded to the nearest picosecond.
Picoseconds transfer_ps(int64_t bytes, double bytes_per_ns);
/// ns (a topology latency) to ps.
Picoseconds to_ps(Nanoseconds ns);

} // namespace syncoll::simulator
