// Routes between ranks over a topology's links, each computed once and kept (network.h composes
// it with the two ways links are booked).
#pragma once

#include "model/topology.h"

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace syncoll::simulator {

class Routes {
public:
  explicit Routes(const Topology &topology);

  /// The links of a route from rank src to rank dst, cached per pair: the direct link when there
  /// is one; else through the switches, entering and leaving at the NIC links that give the
  /// fewest switch hops, with equally short ways through the fabric spread over its parallel
  /// switches as ECMP spreads flows; else a shortest route forwarded by other ranks (breadth
  /// first, lowest ids first); empty when dst cannot be reached.
  std::span<const LinkId> route(RankId src, RankId dst);

private:
  std::vector<LinkId> switched_route(RankId src, RankId dst);
  std::vector<LinkId> forwarded_route(RankId src, RankId dst);
  /// Switch hops from switch `from` to every switch (-1: unreachable), computed once per switch
  /// a route enters the fabric at.
  const std::vector<int32_t> &switch_distances(int32_t from);
  int32_t switch_index(RankId vertex) const { return vertex.value() - topology_.num_ranks(); }

  const Topology &topology_;
  std::vector<LinkId> every_link_; ///< link i at index i: one-link routes are spans of it
  std::unordered_map<uint64_t, std::span<const LinkId>> routes_; ///< multi-hop routes, by ends
  static constexpr size_t kRouteBlock = size_t(1) << 16;
  std::vector<std::unique_ptr<LinkId[]>> route_blocks_; ///< where routes_ points
  size_t route_block_used_ = 0;
  std::vector<std::vector<int32_t>> via_; ///< per source: the link that reached each vertex
  std::vector<std::vector<int32_t>> switch_distances_; ///< per entry switch, when first used
  std::vector<std::vector<LinkId>> switch_in_links_;   ///< per switch: links from switches
  std::vector<std::vector<LinkId>> rank_entries_;      ///< per rank: its links into switches
  std::vector<std::vector<LinkId>> rank_exits_;        ///< per rank: the switches' links into it
};

} // namespace syncoll::simulator
