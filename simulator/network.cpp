#include "simulator/network.h"

#include "model/invariant.h"

#include <cmath>
#include <limits>

namespace syncoll::simulator {

Picoseconds transfer_ps(int64_t bytes, double bytes_per_ns) {
  SYNCOLL_INVARIANT(bytes_per_ns > 0, "transfer over a link without bandwidth");
  return static_cast<Picoseconds>(std::llround(double(bytes) * 1000.0 / bytes_per_ns));
}

Picoseconds to_ps(Nanoseconds ns) {
  return static_cast<Picoseconds>(std::llround(ns.count * 1000.0));
}

Network::Network(const Topology &topology, double efficiency)
    : topology_(topology), efficiency_(efficiency) {
  SYNCOLL_INVARIANT(efficiency > 0 && efficiency <= 1, "protocol efficiency out of (0, 1]");
  const size_t n = topology.links().size();
  usage_.assign(n, {});
  std::vector<std::vector<int32_t>> relations_of_link(n);
  for (size_t r = 0; r < topology.relations().size(); ++r) {
    const BandwidthRelation &rel = topology.relations()[r];
    // A relation's capacity counts chunks per round; its byte rate is that many of the slowest
    // member link's per-unit rate.
    double unit = std::numeric_limits<double>::infinity();
    for (LinkId id : rel.links) {
      const Link &l = topology.link(id);
      unit = std::min(unit, l.bandwidth.value / l.capacity);
      relations_of_link[id.index()].push_back(static_cast<int32_t>(r));
    }
    relation_bytes_per_ns_.push_back(unit * rel.capacity);
  }
  relation_free_.assign(topology.relations().size(), 0);
  for (size_t l = 0; l < n; ++l) {
    LinkState state;
    state.alpha = to_ps(topology.links()[l].alpha);
    state.relations_begin = static_cast<int32_t>(relation_ids_.size());
    relation_ids_.insert(relation_ids_.end(), relations_of_link[l].begin(),
                         relations_of_link[l].end());
    state.relations_end = static_cast<int32_t>(relation_ids_.size());
    links_.push_back(state);
    every_link_.push_back(LinkId(static_cast<int32_t>(l)));
  }
}

Picoseconds Network::serialization(LinkId link, int64_t bytes) const {
  const LinkState &s = links_[link.index()];
  if (s.memo_bytes == bytes)
    return s.memo_time;
  return transfer_ps(bytes, topology_.link(link).bandwidth.value * efficiency_);
}

TransferTimes Network::reserve(LinkId link, int64_t bytes, Picoseconds ready) {
  LinkState &s = links_[link.index()];
  Picoseconds start = std::max(ready, s.free_at);
  for (int32_t i = s.relations_begin; i < s.relations_end; ++i)
    start = std::max(start, relation_free_[size_t(relation_ids_[size_t(i)])]);
  if (s.memo_bytes != bytes) {
    s.memo_time = transfer_ps(bytes, topology_.link(link).bandwidth.value * efficiency_);
    s.memo_bytes = bytes;
  }
  const Picoseconds hold = s.memo_time;
  s.free_at = start + hold;
  for (int32_t i = s.relations_begin; i < s.relations_end; ++i) {
    const size_t r = size_t(relation_ids_[size_t(i)]);
    relation_free_[r] = start + transfer_ps(bytes, relation_bytes_per_ns_[r] * efficiency_);
  }
  usage_[link.index()].bytes += bytes;
  usage_[link.index()].busy += hold;
  return {start, start + s.alpha + hold};
}

} // namespace syncoll::simulator

namespace syncoll::simulator {

TransferTimes Network::reserve_route(std::span<const LinkId> route, int64_t bytes,
                                     Picoseconds ready, Switching switching) {
  SYNCOLL_INVARIANT(!route.empty(), "transfer over an empty route");
  TransferTimes first = reserve(route.front(), bytes, ready);
  TransferTimes last = first;
  for (size_t i = 1; i < route.size(); ++i) {
    // The previous hop's first bytes reach the switch after its latency; all of them after its
    // latency plus serialization.
    const Picoseconds previous_alpha = links_[route[i - 1].index()].alpha;
    const Picoseconds forward =
        switching == Switching::CutThrough ? last.start + previous_alpha : last.arrival;
    last = reserve(route[i], bytes, forward);
  }
  return {first.start, last.arrival};
}

std::span<const LinkId> Network::route(RankId src, RankId dst) {
  if (auto direct = topology_.find_link(src, dst))
    return {&every_link_[direct->index()], 1};
  auto key = std::make_pair(src.value(), dst.value());
  if (auto it = routes_.find(key); it != routes_.end())
    return it->second;
  std::vector<LinkId> path;
  {
    const size_t n = size_t(topology_.num_ranks());
    std::vector<int> via(n, -1); // the link that first reached each rank
    std::vector<int> queue{src.value()};
    std::vector<bool> seen(n, false);
    seen[src.index()] = true;
    for (size_t i = 0; i < queue.size() && !seen[dst.index()]; ++i)
      for (LinkId id : topology_.out_links(RankId(queue[i]))) {
        const RankId to = topology_.link(id).dst;
        if (!seen[to.index()]) {
          seen[to.index()] = true;
          via[to.index()] = id.value();
          queue.push_back(to.value());
        }
      }
    if (seen[dst.index()])
      for (RankId at = dst; at != src; at = topology_.link(LinkId(via[at.index()])).src)
        path.insert(path.begin(), LinkId(via[at.index()]));
  }
  return routes_.emplace(key, std::move(path)).first->second;
}

} // namespace syncoll::simulator
