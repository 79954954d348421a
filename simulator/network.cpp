#include "simulator/network.h"

#include "model/invariant.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace syncoll::simulator {

namespace {
// Rates in fixed point (2^-20 bytes/ns), so that a constraint's demand, kept up to date as hops
// come and go, is exact however long the run.
constexpr double kRateScale = double(1 << 20);
int64_t fixed_rate(double bytes_per_ns) {
  return static_cast<int64_t>(std::llround(bytes_per_ns * kRateScale));
}
} // namespace

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
    link_hops_.resize(n);
    link_dirty_.assign(n, 0);
    const size_t constraints = n + relation_fair_.size();
    left_.assign(constraints, 0);
    rising_.assign(constraints, 0);
    demand_.assign(constraints, 0);
    unbounded_.assign(constraints, 0);
    constraint_round_.assign(constraints, 0);
    supply_.resize(constraints);
    for (size_t l = 0; l < n; ++l)
      supply_[l] = fixed_rate(topology.links()[l].bandwidth.value * efficiency);
    for (size_t r = 0; r < relation_fair_.size(); ++r)
      supply_[n + r] = fixed_rate(relation_bytes_per_ns_[r] * efficiency);
    busy_since_.assign(n, 0);
    relation_busy_.resize(relation_fair_.size());
    busy_slot_.assign(relation_ids_.size(), 0);
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

void Network::add_usage(const std::vector<LinkUsage> &step, int64_t times) {
  SYNCOLL_INVARIANT(step.size() == usage_.size(), "usage of another network");
  for (size_t l = 0; l < usage_.size(); ++l) {
    usage_[l].bytes += step[l].bytes * times;
    usage_[l].busy += step[l].busy * times;
  }
}

bool Network::idle_by(Picoseconds t) const {
  if (!fluid_queue_.empty() || carried_ > 0)
    return false;
  for (const LinkState &s : links_)
    if (s.free_at > t)
      return false;
  for (Picoseconds free : relation_free_)
    if (free > t)
      return false;
  return true;
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
      Hop{transfer, index, transfers_[size_t(transfer)].route[size_t(index)], 0, 0, 0, 0, kNever};
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
  // A fluid link carries the hop at once, beside the others on it; FIFO relations of the link
  // may still make it wait to start.
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
  hop.since = at;
  hop.remaining = double(transfers_[size_t(hop.transfer)].bytes);
  hop.rate = 0;
  hop.end = kNever;
  std::vector<int32_t> &on_link = link_hops_[hop.link.index()];
  if (on_link.empty()) {
    busy_since_[hop.link.index()] = at;
    link_busy(hop.link);
  }
  hop.slot = static_cast<int32_t>(on_link.size());
  on_link.push_back(h);
  ++carried_;
  add_demand(h, +1);
  changed(hop.link);
  hop_started(h, at);
}

void Network::changed(LinkId link) {
  if (!link_dirty_[link.index()]) {
    link_dirty_[link.index()] = 1;
    dirty_links_.push_back(link.value());
  }
  if (!rates_stale_)
    stale_since_ = now_;
  rates_stale_ = true;
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
  if (!links_[hops_[size_t(h)].link.index()].fair && at <= until_ &&
      (fluid_queue_.empty() || at < fluid_queue_.top().time) &&
      (!has_fair_ || (!rates_stale_ && first_end() > at)))
    hop_ready(h, at);
  else
    fluid_queue_.push(at, kHopReady, uint32_t(h));
}

bool Network::hop_done(const Hop &hop, Picoseconds end) {
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  if (hop.index == 0) {
    t.first_hop_end = end;
    if (reports_ != nullptr)
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
    std::vector<int32_t> &on_link = link_hops_[link.index()];
    on_link[size_t(hop.slot)] = on_link.back();
    hops_[size_t(on_link.back())].slot = hop.slot;
    on_link.pop_back();
    --carried_;
    add_demand(h, -1);
    hops_[size_t(h)].end = kNever;
    usage_[link.index()].bytes += t.bytes;
    if (on_link.empty()) {
      usage_[link.index()].busy += at - busy_since_[link.index()];
      link_idle(link);
    }
    changed(link);
  }
  if (hop_done(hop, at)) {
    delivered.push_back({t.tag,
                         {t.start, t.last_end + links_[t.route.back().index()].alpha},
                         t.first_hop_end,
                         true});
    free_transfers_.push_back(hop.transfer);
  }
}

// Only fair relations keep the list of their busy links (the refill walks them); FIFO relations
// are held transfer by transfer and have none.
void Network::link_busy(LinkId link) {
  const LinkState &s = links_[link.index()];
  for (int32_t k = s.relations_begin; k < s.relations_end; ++k) {
    if (!relation_fair_[size_t(relation_ids_[size_t(k)])])
      continue;
    std::vector<int32_t> &busy = relation_busy_[size_t(relation_ids_[size_t(k)])];
    busy_slot_[size_t(k)] = static_cast<int32_t>(busy.size());
    busy.push_back(link.value());
  }
}

void Network::link_idle(LinkId link) {
  const LinkState &s = links_[link.index()];
  for (int32_t k = s.relations_begin; k < s.relations_end; ++k) {
    const int32_t r = relation_ids_[size_t(k)];
    if (!relation_fair_[size_t(r)])
      continue;
    std::vector<int32_t> &busy = relation_busy_[size_t(r)];
    const int32_t slot = busy_slot_[size_t(k)];
    const int32_t moved = busy.back();
    busy[size_t(slot)] = moved;
    busy.pop_back();
    const LinkState &m = links_[size_t(moved)];
    for (int32_t j = m.relations_begin; j < m.relations_end; ++j)
      if (relation_ids_[size_t(j)] == r)
        busy_slot_[size_t(j)] = slot;
  }
}

void Network::add_demand(int32_t h, int sign) {
  const double cap = transfers_[size_t(hops_[size_t(h)].transfer)].rate_cap;
  const int64_t demand = cap > 0 ? sign * fixed_rate(cap) : 0;
  const int32_t unbounded = cap > 0 ? 0 : sign;
  for_each_constraint(hops_[size_t(h)].link, [&](size_t c) {
    demand_[c] += demand;
    unbounded_[c] += unbounded;
  });
}

// Max-min fair rates by progressive filling (raise every unfrozen hop's rate together until a
// hop reaches its own cap, its sender's, or a link or fair relation runs out; freeze those hops
// and go on), re-run only where a change can move a rate.
//
// A constraint (a fluid link or a fair relation) whose hops' caps add up to no more than it
// carries never runs out before each of them reaches its cap, so it constrains nothing. When
// hops come or go on a link, the hops whose rates can change are those on the link's
// constraints, and, through every saturated constraint they are on, the hops sharing it, and so
// on; their rates are filled again over the saturated constraints they meet (and the changed
// link's own), every one of which has all its hops among them.
void Network::share_bandwidth() {
  rates_stale_ = false;
  ++sharing_round_;
  if (hop_seen_.size() < hops_.size())
    hop_seen_.resize(hops_.size(), 0);
  for (int32_t dirty : dirty_links_) {
    link_dirty_[size_t(dirty)] = 0;
    solve_constraints_.clear();
    solve_hops_.clear();
    for_each_constraint(LinkId(dirty), [&](size_t c) { visit(c); });
    for (size_t i = 0; i < solve_hops_.size(); ++i)
      for_each_constraint(hops_[size_t(solve_hops_[i])].link, [&](size_t c) {
        if (constraint_round_[c] != sharing_round_ && saturated(c))
          visit(c);
      });
    if (solve_hops_.empty())
      continue;
    fill();
    if (window_hop_ratio_ > 0)
      for (int32_t h : solve_hops_)
        durations_.push_back(double(transfers_[size_t(hops_[size_t(h)].transfer)].bytes) /
                             hops_[size_t(h)].rate);
  }
  dirty_links_.clear();
  if (!durations_.empty()) {
    const auto middle = durations_.begin() + std::ptrdiff_t(durations_.size() / 2);
    std::nth_element(durations_.begin(), middle, durations_.end());
    // A rate of a byte per second (the floor) makes a hop that takes longer than time can hold.
    typical_hop_ = Picoseconds(std::min(*middle * 1000.0, double(kNever) / 2));
    durations_.clear();
  }
  // Every sharing leaves the old ends of its hops behind in the queue; when those outnumber the
  // live ones, the queue is rebuilt from the hops carried now, so it stays within a constant
  // factor of the transfers in flight.
  if (ends_.size() > 2 * carried_ + 4096) {
    ends_ = EventQueue();
    for (const std::vector<int32_t> &on_link : link_hops_)
      for (int32_t h : on_link)
        ends_.push(hops_[size_t(h)].end, kHopEnd, uint32_t(h));
  }
}

bool Network::saturated(size_t c) const {
  return unbounded_[c] > 0 || demand_[c] > supply_[c];
}

void Network::visit(size_t c) {
  if (constraint_round_[c] == sharing_round_)
    return; // an earlier change in this round took it, and all its hops, in
  constraint_round_[c] = sharing_round_;
  solve_constraints_.push_back(static_cast<int32_t>(c));
  auto take = [&](int32_t link) {
    for (int32_t h : link_hops_[size_t(link)])
      if (hop_seen_[size_t(h)] != sharing_round_) {
        hop_seen_[size_t(h)] = sharing_round_;
        solve_hops_.push_back(h);
      }
  };
  if (c < links_.size()) {
    take(static_cast<int32_t>(c));
  } else {
    for (int32_t l : relation_busy_[c - links_.size()])
      take(l);
  }
}

// The constraints wait in a heap by the share each would give its rising hops; the smallest is
// the next level. Freezing hops at the level only raises the other constraints' shares, so an
// entry is never above its constraint's share: one found below it when it comes up is pushed
// again at its share now, and one whose hops are all frozen is dropped.
void Network::fill() {
  const size_t n = links_.size();
  if (hop_level_.size() < hops_.size()) {
    hop_level_.resize(hops_.size(), 0);
    hop_frozen_.resize(hops_.size(), 0);
  }
  ++freeze_round_;
  const uint32_t round = sharing_round_;
  std::vector<ConstraintEntry> &heap = constraint_heap_;
  heap.clear();
  for (int32_t c : solve_constraints_) {
    const size_t k = size_t(c);
    left_[k] = k < n ? topology_.link(LinkId(c)).bandwidth.value * efficiency_
                     : relation_bytes_per_ns_[k - n] * efficiency_;
    rising_[k] = 0;
    if (k < n) {
      rising_[k] = static_cast<int32_t>(link_hops_[k].size());
    } else {
      for (int32_t l : relation_busy_[k - n])
        rising_[k] += static_cast<int32_t>(link_hops_[size_t(l)].size());
    }
    if (rising_[k] > 0)
      heap.push_back({left_[k] / rising_[k], uint32_t(c)});
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  std::vector<std::pair<double, int32_t>> &capped = capped_scratch_;
  capped.clear();
  for (int32_t h : solve_hops_)
    if (const double cap = transfers_[size_t(hops_[size_t(h)].transfer)].rate_cap; cap > 0)
      capped.emplace_back(cap, h);
  std::sort(capped.begin(), capped.end());

  size_t rising_hops = solve_hops_.size();
  auto freeze = [&](int32_t h, double level) {
    hop_frozen_[size_t(h)] = freeze_round_;
    hop_level_[size_t(h)] = level;
    --rising_hops;
    // Only the constraints of this filling count; a hop's others never run out.
    for_each_constraint(hops_[size_t(h)].link, [&](size_t c) {
      if (constraint_round_[c] == round) {
        left_[c] = std::max(0.0, left_[c] - level);
        --rising_[c];
      }
    });
  };
  auto freeze_link = [&](size_t l, double level) {
    for (int32_t h : link_hops_[l])
      if (hop_frozen_[size_t(h)] != freeze_round_)
        freeze(h, level);
  };
  // Rounding can leave a constraint a hair below the level reached, or below zero; levels never
  // go down, and a rate stays positive (at least one byte per second) so that the ends exist.
  double level = 1e-9;
  size_t next_capped = 0;
  while (rising_hops > 0) {
    while (next_capped < capped.size() &&
           hop_frozen_[size_t(capped[next_capped].second)] == freeze_round_)
      ++next_capped;
    const double by_cap = next_capped < capped.size() ? capped[next_capped].first
                                                      : std::numeric_limits<double>::infinity();
    if (heap.empty() || by_cap <= heap.front().share) {
      SYNCOLL_INVARIANT(next_capped < capped.size(), "progressive filling made no progress");
      level = std::max(level, by_cap);
      freeze(capped[next_capped++].second, level);
      continue;
    }
    const ConstraintEntry top = heap.front();
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
    if (rising_[top.id] == 0)
      continue; // its hops were frozen by other constraints
    if (const double now = left_[top.id] / rising_[top.id]; now > top.share * (1 + 1e-12)) {
      heap.push_back({now, top.id});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
      continue;
    }
    level = std::max(level, top.share);
    if (top.id < n) {
      freeze_link(top.id, level);
    } else {
      for (int32_t l : relation_busy_[top.id - n])
        freeze_link(size_t(l), level);
    }
  }
  // A hop whose rate did not change keeps its projected end (and its entry in the queue).
  for (int32_t h : solve_hops_) {
    Hop &hop = hops_[size_t(h)];
    const double rate = hop_level_[size_t(h)];
    if (rate == hop.rate && hop.end != kNever)
      continue;
    hop.remaining -= hop.rate * double(now_ - hop.since) / 1000.0;
    hop.since = now_;
    hop.rate = rate;
    hop.end =
        now_ + (hop.remaining <= 0
                    ? 0
                    : static_cast<Picoseconds>(std::llround(hop.remaining * 1000.0 / hop.rate)));
    ends_.push(hop.end, kHopEnd, uint32_t(h));
  }
}

// The earliest projected end of a hop on a fluid link; entries left behind by a rate change, or
// by a hop that has ended, are dropped on the way.
Picoseconds Network::first_end() {
  while (!ends_.empty()) {
    const Event &e = ends_.top();
    if (hops_[e.target].end == e.time)
      return e.time;
    ends_.pop();
  }
  return kNever;
}

void Network::refresh_next_event() {
  next_event_ = std::min(fluid_queue_.empty() ? kNever : fluid_queue_.top().time, first_end());
  if (rates_stale_)
    next_event_ = std::min(next_event_, stale_since_ + window());
}

void Network::advance(Picoseconds until, std::vector<Delivery> &delivered) {
  until_ = until;
  reports_ = &delivered;
  for (;;) {
    // Rates are shared out again once everything due at this time has happened: a burst of
    // starts or ends at one time costs one sharing, not one each. Until then only events at the
    // present can come next (a hop whose end is due now is through, whatever the new rates).
    // Within a sharing window, events go on at the rates shared last.
    const Picoseconds first_queued = fluid_queue_.empty() ? kNever : fluid_queue_.top().time;
    const Picoseconds ending = first_end();
    const Picoseconds t = std::min(ending, first_queued);
    if (rates_stale_ && t > now_ && (window() == 0 || t > stale_since_ + window())) {
      share_bandwidth();
      continue;
    }
    if (t == kNever || t > until)
      break;
    now_ = std::max(now_, t);
    if (ending <= first_queued) {
      // Ends go first: a link they free is there for hops that become ready at the same time.
      const auto h = static_cast<int32_t>(ends_.pop().target);
      ++fluid_completions_;
      hop_ended(h, t, delivered);
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
  if (rates_stale_ && window() == 0)
    share_bandwidth();
  refresh_next_event();
  reports_ = nullptr;
}

} // namespace syncoll::simulator
