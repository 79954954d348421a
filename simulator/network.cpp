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
  link_free_.assign(topology.links().size(), 0);
  usage_.assign(topology.links().size(), {});
  relations_of_link_.resize(topology.links().size());
  for (size_t r = 0; r < topology.relations().size(); ++r) {
    const BandwidthRelation &rel = topology.relations()[r];
    // A relation's capacity counts chunks per round; its byte rate is that many of the slowest
    // member link's per-unit rate.
    double unit = std::numeric_limits<double>::infinity();
    for (LinkId id : rel.links) {
      const Link &l = topology.link(id);
      unit = std::min(unit, l.bandwidth.value / l.capacity);
      relations_of_link_[id.index()].push_back(static_cast<int>(r));
    }
    relation_bytes_per_ns_.push_back(unit * rel.capacity);
  }
  relation_free_.assign(topology.relations().size(), 0);
  for (const Link &l : topology.links())
    alpha_ps_.push_back(to_ps(l.alpha));
  serialization_memo_.assign(topology.links().size(), {-1, 0});
}

Picoseconds Network::serialization(LinkId link, int64_t bytes) const {
  const auto &memo = serialization_memo_[link.index()];
  if (memo.first == bytes)
    return memo.second;
  return transfer_ps(bytes, topology_.link(link).bandwidth.value * efficiency_);
}

TransferTimes Network::reserve(LinkId link, int64_t bytes, Picoseconds ready) {
  Picoseconds start = std::max(ready, link_free_[link.index()]);
  const auto &relations = relations_of_link_[link.index()];
  for (int r : relations)
    start = std::max(start, relation_free_[size_t(r)]);
  const Picoseconds hold = serialization(link, bytes);
  serialization_memo_[link.index()] = {bytes, hold};
  link_free_[link.index()] = start + hold;
  for (int r : relations)
    relation_free_[size_t(r)] =
        start + transfer_ps(bytes, relation_bytes_per_ns_[size_t(r)] * efficiency_);
  usage_[link.index()].bytes += bytes;
  usage_[link.index()].busy += hold;
  return {start, start + alpha_ps_[link.index()] + hold};
}

} // namespace syncoll::simulator

namespace syncoll::simulator {

TransferTimes Network::reserve_route(const std::vector<LinkId> &route, int64_t bytes,
                                     Picoseconds ready, Switching switching) {
  SYNCOLL_INVARIANT(!route.empty(), "transfer over an empty route");
  TransferTimes first = reserve(route.front(), bytes, ready);
  TransferTimes last = first;
  for (size_t i = 1; i < route.size(); ++i) {
    // The previous hop's first bytes reach the switch after its latency; all of them after its
    // latency plus serialization.
    const Picoseconds previous_alpha = alpha_ps_[route[i - 1].index()];
    const Picoseconds forward =
        switching == Switching::CutThrough ? last.start + previous_alpha : last.arrival;
    last = reserve(route[i], bytes, forward);
  }
  return {first.start, last.arrival};
}

const std::vector<LinkId> &Network::route(RankId src, RankId dst) {
  auto key = std::make_pair(src.value(), dst.value());
  if (auto it = routes_.find(key); it != routes_.end())
    return it->second;
  std::vector<LinkId> path;
  if (auto direct = topology_.find_link(src, dst)) {
    path.push_back(*direct);
  } else {
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
