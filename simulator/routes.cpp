#include "simulator/routes.h"

#include <algorithm>
#include <limits>

namespace syncoll::simulator {

Routes::Routes(const Topology &topology) : topology_(topology) {
  const size_t n = topology.links().size();
  for (size_t l = 0; l < n; ++l)
    every_link_.push_back(LinkId(static_cast<int32_t>(l)));
  via_.resize(size_t(topology.num_ranks()));
  if (topology.num_switches() > 0) {
    switch_distances_.resize(size_t(topology.num_switches()));
    switch_in_links_.resize(size_t(topology.num_switches()));
    rank_entries_.resize(size_t(topology.num_ranks()));
    rank_exits_.resize(size_t(topology.num_ranks()));
    for (size_t l = 0; l < n; ++l) {
      const Link &link = topology.links()[l];
      if (!topology.is_switch(link.src) && topology.is_switch(link.dst))
        rank_entries_[link.src.index()].push_back(LinkId(static_cast<int32_t>(l)));
      if (topology.is_switch(link.src) && !topology.is_switch(link.dst))
        rank_exits_[link.dst.index()].push_back(LinkId(static_cast<int32_t>(l)));
      if (topology.is_switch(link.src) && topology.is_switch(link.dst))
        switch_in_links_[size_t(link.dst.value() - topology.num_ranks())].push_back(
            LinkId(static_cast<int32_t>(l)));
    }
  }
}

std::span<const LinkId> Routes::route(RankId src, RankId dst) {
  if (auto direct = topology_.find_link(src, dst))
    return {&every_link_[direct->index()], 1};
  const uint64_t key = uint64_t(src.index()) * uint64_t(topology_.num_ranks()) + dst.index();
  if (auto it = routes_.find(key); it != routes_.end())
    return it->second;
  std::vector<LinkId> path = switched_route(src, dst);
  if (path.empty())
    path = forwarded_route(src, dst);
  // Routes are kept side by side in blocks that never move, in the order they were first asked
  // for, which is the order a schedule asks for them again.
  if (route_blocks_.empty() || route_block_used_ + path.size() > kRouteBlock) {
    route_blocks_.push_back(std::make_unique<LinkId[]>(std::max(kRouteBlock, path.size())));
    route_block_used_ = 0;
  }
  LinkId *stored = route_blocks_.back().get() + route_block_used_;
  std::copy(path.begin(), path.end(), stored);
  route_block_used_ += path.size();
  return routes_.emplace(key, std::span<const LinkId>(stored, path.size())).first->second;
}

std::vector<LinkId> Routes::forwarded_route(RankId src, RankId dst) {
  // One breadth-first search per source serves all of its destinations.
  std::vector<int32_t> &via = via_[src.index()];
  if (via.empty()) {
    const size_t n = size_t(topology_.num_vertices());
    via.assign(n, -1); // the link that first reached each vertex
    std::vector<int> queue{src.value()};
    std::vector<bool> seen(n, false);
    seen[src.index()] = true;
    for (size_t i = 0; i < queue.size(); ++i)
      for (LinkId id : topology_.out_links(RankId(queue[i]))) {
        const RankId to = topology_.link(id).dst;
        if (!seen[to.index()]) {
          seen[to.index()] = true;
          via[to.index()] = id.value();
          queue.push_back(to.value());
        }
      }
  }
  std::vector<LinkId> path;
  if (via[dst.index()] >= 0) {
    for (RankId at = dst; at != src; at = topology_.link(LinkId(via[at.index()])).src)
      path.push_back(LinkId(via[at.index()]));
    std::reverse(path.begin(), path.end());
  }
  return path;
}

std::vector<LinkId> Routes::switched_route(RankId src, RankId dst) {
  if (topology_.num_switches() == 0)
    return {};
  const std::vector<LinkId> &entries = rank_entries_[src.index()];
  const std::vector<LinkId> &exits = rank_exits_[dst.index()];
  if (entries.empty() || exits.empty())
    return {};
  // Of the shortest (entry, exit) pairs, the one a hash of the ends picks, as ECMP would.
  const size_t spread = size_t(src.value()) + size_t(dst.value());
  int32_t best = std::numeric_limits<int32_t>::max();
  LinkId entry, exit;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LinkId e = entries[(i + spread) % entries.size()];
    const std::vector<int32_t> &dist = switch_distances(switch_index(topology_.link(e).dst));
    for (size_t j = 0; j < exits.size(); ++j) {
      const LinkId x = exits[(j + spread) % exits.size()];
      const int32_t d = dist[size_t(switch_index(topology_.link(x).src))];
      if (d >= 0 && d < best) {
        best = d;
        entry = e;
        exit = x;
      }
    }
  }
  if (best == std::numeric_limits<int32_t>::max())
    return {};
  // Back from the exit to the entry, one switch closer to the entry each time; where several
  // are, a hash of the ends picks one, so the flows between two leaves spread over the spines.
  const std::vector<int32_t> &dist = switch_distances(switch_index(topology_.link(entry).dst));
  std::vector<LinkId> path{exit};
  uint64_t hash = (uint64_t(src.value()) << 32 | uint64_t(dst.value())) * 0x9E3779B97F4A7C15ull;
  for (int32_t at = switch_index(topology_.link(exit).src); dist[size_t(at)] > 0;) {
    const std::vector<LinkId> &ins = switch_in_links_[size_t(at)];
    size_t closer = 0;
    for (LinkId l : ins)
      closer += dist[size_t(switch_index(topology_.link(l).src))] == dist[size_t(at)] - 1;
    hash ^= hash >> 29;
    hash *= 0xBF58476D1CE4E5B9ull;
    size_t pick = size_t(hash >> 33) % closer;
    for (LinkId l : ins)
      if (dist[size_t(switch_index(topology_.link(l).src))] == dist[size_t(at)] - 1 &&
          pick-- == 0) {
        path.push_back(l);
        at = switch_index(topology_.link(l).src);
        break;
      }
  }
  path.push_back(entry);
  std::reverse(path.begin(), path.end());
  return path;
}

const std::vector<int32_t> &Routes::switch_distances(int32_t from) {
  std::vector<int32_t> &dist = switch_distances_[size_t(from)];
  if (!dist.empty())
    return dist;
  dist.assign(size_t(topology_.num_switches()), -1);
  dist[size_t(from)] = 0;
  std::vector<int32_t> queue{from};
  for (size_t i = 0; i < queue.size(); ++i)
    for (LinkId id : topology_.out_links(RankId(topology_.num_ranks() + queue[i]))) {
      const RankId to = topology_.link(id).dst;
      if (topology_.is_switch(to) && dist[size_t(switch_index(to))] < 0) {
        dist[size_t(switch_index(to))] = dist[size_t(queue[i])] + 1;
        queue.push_back(switch_index(to));
      }
    }
  return dist;
}

} // namespace syncoll::simulator
