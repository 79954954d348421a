#include "simulator/network.h"

#include "model/invariant.h"

#include <algorithm>
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
  for (const BandwidthRelation &rel : topology.relations())
    relation_fair_.push_back(rel.sharing == RelationSharing::Fair);
  has_fair_ = std::find(relation_fair_.begin(), relation_fair_.end(), true) != relation_fair_.end();
  share_left_.assign(relation_fair_.size(), 0);
  share_count_.assign(relation_fair_.size(), 0);
  for (size_t l = 0; l < n; ++l) {
    LinkState state;
    state.alpha = to_ps(topology.links()[l].alpha);
    state.relations_begin = static_cast<int32_t>(relation_ids_.size());
    relation_ids_.insert(relation_ids_.end(), relations_of_link[l].begin(),
                         relations_of_link[l].end());
    state.relations_end = static_cast<int32_t>(relation_ids_.size());
    for (int32_t r : relations_of_link[l])
      state.fair = state.fair || relation_fair_[size_t(r)];
    links_.push_back(state);
    every_link_.push_back(LinkId(static_cast<int32_t>(l)));
  }
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
  if (has_fair_) {
    holder_.assign(n, -1);
    waiting_.resize(n);
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

std::span<const LinkId> Network::route(RankId src, RankId dst) {
  if (auto direct = topology_.find_link(src, dst))
    return {&every_link_[direct->index()], 1};
  const uint64_t key = uint64_t(src.index()) * uint64_t(topology_.num_ranks()) + dst.index();
  if (auto it = routes_.find(key); it != routes_.end())
    return it->second;
  std::vector<LinkId> path = switched_route(src, dst);
  if (path.empty())
    path = forwarded_route(src, dst);
  return routes_.emplace(key, std::move(path)).first->second;
}

std::vector<LinkId> Network::forwarded_route(RankId src, RankId dst) {
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

std::vector<LinkId> Network::switched_route(RankId src, RankId dst) {
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

const std::vector<int32_t> &Network::switch_distances(int32_t from) {
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

// --- the fluid engine: links of max-min fair relations ---------------------------------------

namespace syncoll::simulator {

std::optional<TransferTimes> Network::start(std::span<const LinkId> route, int64_t bytes,
                                            Picoseconds ready, Switching switching, uint32_t tag,
                                            double rate_cap) {
  SYNCOLL_INVARIANT(!route.empty(), "transfer over an empty route");
  bool fluid = false;
  if (has_fair_)
    for (LinkId l : route)
      fluid = fluid || links_[l.index()].fair;
  if (!fluid && route.size() == 1)
    return reserve(route.front(), bytes, ready);
  // A multi-hop or fair-shared transfer takes each hop when it gets there, in the order the
  // transfers get there: booking the whole route up front would hold links far ahead of the
  // transfer and keep later transfers out of the gaps before it.
  SYNCOLL_INVARIANT(ready >= now_, "a multi-hop transfer starts before the network's present");
  int32_t x;
  if (free_transfers_.empty()) {
    x = static_cast<int32_t>(transfers_.size());
    transfers_.emplace_back();
  } else {
    x = free_transfers_.back();
    free_transfers_.pop_back();
  }
  transfers_[size_t(x)] = FluidTransfer{tag, route, bytes, rate_cap, switching, kNever, 0, 0, 0};
  fluid_queue_.push(ready, kHopReady, uint32_t(new_hop(x, 0)));
  refresh_next_event();
  return std::nullopt;
}

int32_t Network::new_hop(int32_t transfer, int32_t index) {
  int32_t h;
  if (free_hops_.empty()) {
    h = static_cast<int32_t>(hops_.size());
    hops_.emplace_back();
  } else {
    h = free_hops_.back();
    free_hops_.pop_back();
  }
  hops_[size_t(h)] =
      Hop{transfer, index, transfers_[size_t(transfer)].route[size_t(index)], 0, 0, 0, kNever};
  return h;
}

void Network::hop_ready(int32_t h, Picoseconds at) {
  const Hop &hop = hops_[size_t(h)];
  const FluidTransfer &t = transfers_[size_t(hop.transfer)];
  const LinkId link = hop.link;
  const LinkState &s = links_[link.index()];
  if (!s.fair) {
    // A FIFO link: the hop's times are fixed when the transfer reaches it. Only the last hop
    // needs an event for its end (the delivery); the others are done when they are booked.
    const TransferTimes times = reserve(link, t.bytes, at);
    const Picoseconds end = times.arrival - s.alpha;
    const bool last = size_t(hop.index) + 1 == t.route.size();
    hops_[size_t(h)].start = times.start;
    const Hop booked = hops_[size_t(h)];
    hop_started(h, times.start); // may grow hops_: `hop` is not used after it
    if (last) {
      fluid_queue_.push(end, kHopEnd, uint32_t(h));
    } else {
      free_hops_.push_back(h);
      hop_done(booked, end);
    }
    return;
  }
  if (holder_[link.index()] >= 0) {
    waiting_[link.index()].push_back(h);
    return;
  }
  // The hop takes the link now; FIFO relations of the link may still make it wait to start.
  holder_[link.index()] = h;
  Picoseconds begin = at;
  for (int32_t i = s.relations_begin; i < s.relations_end; ++i) {
    const size_t r = size_t(relation_ids_[size_t(i)]);
    if (!relation_fair_[r])
      begin = std::max(begin, relation_free_[r]);
  }
  for (int32_t i = s.relations_begin; i < s.relations_end; ++i) {
    const size_t r = size_t(relation_ids_[size_t(i)]);
    if (!relation_fair_[r])
      relation_free_[r] = begin + transfer_ps(t.bytes, relation_bytes_per_ns_[r] * efficiency_);
  }
  if (begin == at)
    activate(h, at);
  else
    fluid_queue_.push(begin, kHopActivate, uint32_t(h));
}

void Network::activate(int32_t h, Picoseconds at) {
  Hop &hop = hops_[size_t(h)];
  hop.start = at;
  hop.remaining = double(transfers_[size_t(hop.transfer)].bytes);
  active_.push_back(h);
  rates_stale_ = true;
  hop_started(h, at);
}

void Network::hop_started(int32_t h, Picoseconds at) {
  const Hop hop = hops_[size_t(h)];
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  if (hop.index == 0)
    t.start = at;
  // Cut-through: the next hop starts forwarding when the first bytes are through this one.
  if (t.switching == Switching::CutThrough && size_t(hop.index) + 1 < t.route.size())
    reach(hop.transfer, hop.index + 1, at + links_[hop.link.index()].alpha);
}

void Network::reach(int32_t transfer, int32_t index, Picoseconds at) {
  const int32_t h = new_hop(transfer, index);
  // When nothing queued comes earlier and the caller lets the network run that far, nothing can
  // reach the hop's FIFO link before this transfer: take it now instead of through the queue.
  if (!links_[hops_[size_t(h)].link.index()].fair && active_.empty() && at <= until_ &&
      (fluid_queue_.empty() || at < fluid_queue_.top().time))
    hop_ready(h, at);
  else
    fluid_queue_.push(at, kHopReady, uint32_t(h));
}

bool Network::hop_done(const Hop &hop, Picoseconds end) {
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  if (hop.index == 0) {
    t.first_hop_end = end;
    if (t.route.size() > 1 && reports_ != nullptr)
      reports_->push_back({t.tag, {t.start, 0}, end, false});
  }
  t.last_end = std::max(t.last_end, end);
  if (t.switching == Switching::StoreAndForward && size_t(hop.index) + 1 < t.route.size())
    reach(hop.transfer, hop.index + 1, end + links_[hop.link.index()].alpha);
  return size_t(++t.hops_done) == t.route.size();
}

void Network::hop_ended(int32_t h, Picoseconds at, std::vector<Delivery> &delivered) {
  const Hop hop = hops_[size_t(h)];
  free_hops_.push_back(h);
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  const LinkId link = hop.link;
  if (links_[link.index()].fair) {
    usage_[link.index()].bytes += t.bytes;
    usage_[link.index()].busy += at - hop.start;
    holder_[link.index()] = -1;
    if (!waiting_[link.index()].empty()) {
      const int32_t next = waiting_[link.index()].front();
      waiting_[link.index()].pop_front();
      hop_ready(next, at);
    }
  }
  if (hop_done(hop, at)) {
    delivered.push_back({t.tag,
                         {t.start, t.last_end + links_[t.route.back().index()].alpha},
                         t.first_hop_end,
                         true});
    free_transfers_.push_back(hop.transfer);
  }
}

// Progressive filling: raise every unfrozen hop's rate together until a hop reaches its own
// cap (its link, or its sender) or a fair relation runs out; freeze those hops and go on.
void Network::share_bandwidth() {
  rates_stale_ = false;
  std::fill(share_count_.begin(), share_count_.end(), 0);
  for (size_t r = 0; r < share_left_.size(); ++r)
    share_left_[r] = relation_bytes_per_ns_[r] * efficiency_;
  share_frozen_.assign(active_.size(), 0);
  auto fair_relations = [&](int32_t h) {
    const LinkState &s = links_[hops_[size_t(h)].link.index()];
    return std::span<const int32_t>(relation_ids_.data() + s.relations_begin,
                                    size_t(s.relations_end - s.relations_begin));
  };
  auto cap = [&](int32_t h) {
    const FluidTransfer &t = transfers_[size_t(hops_[size_t(h)].transfer)];
    const double link = topology_.link(hops_[size_t(h)].link).bandwidth.value * efficiency_;
    return t.rate_cap > 0 ? std::min(link, t.rate_cap) : link;
  };
  for (int32_t h : active_)
    for (int32_t r : fair_relations(h))
      if (relation_fair_[size_t(r)])
        ++share_count_[size_t(r)];
  size_t unfrozen = active_.size();
  while (unfrozen > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < active_.size(); ++i)
      if (!share_frozen_[i])
        level = std::min(level, cap(active_[i]));
    for (size_t r = 0; r < share_left_.size(); ++r)
      if (share_count_[r] > 0)
        level = std::min(level, share_left_[r] / share_count_[r]);
    // Rounding can leave a relation a hair below zero; a rate must stay positive for the ends to
    // exist, so the level never drops below one byte per second.
    level = std::max(level, 1e-9);
    const double tolerance = level * 1e-12;
    std::vector<size_t> &freeze = freeze_scratch_;
    freeze.clear();
    for (size_t i = 0; i < active_.size(); ++i) {
      if (share_frozen_[i])
        continue;
      bool bound = cap(active_[i]) <= level + tolerance;
      for (int32_t r : fair_relations(active_[i]))
        bound = bound || (relation_fair_[size_t(r)] &&
                          share_left_[size_t(r)] / share_count_[size_t(r)] <= level + tolerance);
      if (bound)
        freeze.push_back(i);
    }
    SYNCOLL_INVARIANT(!freeze.empty(), "progressive filling made no progress");
    for (size_t i : freeze) {
      share_frozen_[i] = 1;
      --unfrozen;
      hops_[size_t(active_[i])].rate = level;
      for (int32_t r : fair_relations(active_[i]))
        if (relation_fair_[size_t(r)]) {
          share_left_[size_t(r)] = std::max(0.0, share_left_[size_t(r)] - level);
          --share_count_[size_t(r)];
        }
    }
  }
  for (int32_t h : active_) {
    Hop &hop = hops_[size_t(h)];
    hop.end =
        now_ + (hop.remaining <= 0
                    ? 0
                    : static_cast<Picoseconds>(std::llround(hop.remaining * 1000.0 / hop.rate)));
  }
}

void Network::refresh_next_event() {
  next_event_ = fluid_queue_.empty() ? kNever : fluid_queue_.top().time;
  for (int32_t h : active_)
    next_event_ = std::min(next_event_, hops_[size_t(h)].end);
}

void Network::advance(Picoseconds until, std::vector<Delivery> &delivered) {
  until_ = until;
  reports_ = &delivered;
  for (;;) {
    // Rates are shared out again once everything due at this time has happened: a burst of
    // starts or ends at one time costs one sharing, not one each. Until then the projected ends
    // are stale, and only events at the present can come next.
    if (rates_stale_ && (fluid_queue_.empty() || fluid_queue_.top().time > now_))
      share_bandwidth();
    Picoseconds first_end = kNever;
    if (!rates_stale_)
      for (int32_t h : active_)
        first_end = std::min(first_end, hops_[size_t(h)].end);
    const Picoseconds first_queued = fluid_queue_.empty() ? kNever : fluid_queue_.top().time;
    const Picoseconds t = std::min(first_end, first_queued);
    if (t == kNever || t > until)
      break;
    if (t > now_) {
      for (int32_t h : active_)
        hops_[size_t(h)].remaining -= hops_[size_t(h)].rate * double(t - now_) / 1000.0;
      now_ = t;
    }
    if (first_end <= first_queued) {
      // Ends go first: a link they free is there for hops that become ready at the same time.
      size_t kept = 0;
      std::vector<int32_t> &ended = ended_scratch_;
      ended.clear();
      for (int32_t h : active_) {
        if (hops_[size_t(h)].end == t)
          ended.push_back(h);
        else
          active_[kept++] = h;
      }
      active_.resize(kept);
      rates_stale_ = true;
      for (int32_t h : ended) {
        ++fluid_completions_;
        hop_ended(h, t, delivered);
      }
    } else {
      const Event e = fluid_queue_.pop();
      const auto h = static_cast<int32_t>(e.target);
      if (e.kind == kHopReady)
        hop_ready(h, t);
      else if (e.kind == kHopActivate)
        activate(h, t);
      else
        hop_ended(h, t, delivered);
    }
  }
  if (rates_stale_)
    share_bandwidth();
  refresh_next_event();
  reports_ = nullptr;
}

} // namespace syncoll::simulator
