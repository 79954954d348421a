// The fluid engine (fluid_network.h): max-min fair rates by progressive filling, and transfers
// taken hop by hop.
#include "simulator/fluid_network.h"

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

FluidNetwork::FluidNetwork(LinkBooking &booking) : booking_(booking) {
  if (!booking.has_fair())
    return;
  const size_t n = booking.num_links();
  link_hops_.resize(n);
  link_dirty_.assign(n, 0);
  const size_t constraints = n + booking.num_relations();
  left_.assign(constraints, 0);
  rising_.assign(constraints, 0);
  demand_.assign(constraints, 0);
  unbounded_.assign(constraints, 0);
  constraint_round_.assign(constraints, 0);
  supply_.resize(constraints);
  for (size_t l = 0; l < n; ++l)
    supply_[l] = fixed_rate(booking.link_rate(LinkId(static_cast<int32_t>(l))));
  for (size_t r = 0; r < booking.num_relations(); ++r)
    supply_[n + r] = fixed_rate(booking.relation_rate(r));
  busy_since_.assign(n, 0);
  relation_busy_.resize(booking.num_relations());
  busy_slot_.assign(booking.relation_entries(), 0);
}

void FluidNetwork::start(std::span<const LinkId> route, int64_t bytes, Picoseconds ready,
                         Switching switching, uint32_t tag, double rate_cap) {
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
}

int32_t FluidNetwork::new_hop(int32_t transfer, int32_t index) {
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

void FluidNetwork::hop_ready(int32_t h, Picoseconds at) {
  const Hop &hop = hops_[size_t(h)];
  const FluidTransfer &t = transfers_[size_t(hop.transfer)];
  const LinkId link = hop.link;
  if (!booking_.fair(link)) {
    // A FIFO link: the hop's times are fixed when the transfer reaches it. Only the last hop
    // needs an event for its end (the delivery); the others are done when they are booked.
    const TransferTimes times = booking_.reserve(link, t.bytes, at);
    const Picoseconds end = times.arrival - booking_.alpha(link);
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
  const Picoseconds begin = booking_.hold_fifo_relations(link, t.bytes, at);
  if (begin == at)
    activate(h, at);
  else
    fluid_queue_.push(begin, kHopActivate, uint32_t(h));
}

void FluidNetwork::activate(int32_t h, Picoseconds at) {
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

void FluidNetwork::changed(LinkId link) {
  if (!link_dirty_[link.index()]) {
    link_dirty_[link.index()] = 1;
    dirty_links_.push_back(link.value());
  }
  if (!rates_stale_)
    stale_since_ = now_;
  rates_stale_ = true;
}

void FluidNetwork::hop_started(int32_t h, Picoseconds at) {
  const Hop hop = hops_[size_t(h)];
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  if (hop.index == 0)
    t.start = at;
  // Cut-through: the next hop starts forwarding when the first bytes are through this one.
  if (t.switching == Switching::CutThrough && size_t(hop.index) + 1 < t.route.size())
    reach(hop.transfer, hop.index + 1, at + booking_.alpha(hop.link));
}

void FluidNetwork::reach(int32_t transfer, int32_t index, Picoseconds at) {
  const int32_t h = new_hop(transfer, index);
  // When nothing queued comes earlier and the caller lets the network run that far, nothing can
  // reach the hop's FIFO link before this transfer: take it now instead of through the queue.
  if (!booking_.fair(hops_[size_t(h)].link) && at <= until_ &&
      (fluid_queue_.empty() || at < fluid_queue_.top().time) &&
      (!booking_.has_fair() || (!rates_stale_ && first_end() > at)))
    hop_ready(h, at);
  else
    fluid_queue_.push(at, kHopReady, uint32_t(h));
}

bool FluidNetwork::hop_done(const Hop &hop, Picoseconds end) {
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  if (hop.index == 0) {
    t.first_hop_end = end;
    if (reports_ != nullptr)
      reports_->push_back({t.tag, {t.start, 0}, end, false});
  }
  t.last_end = std::max(t.last_end, end);
  if (t.switching == Switching::StoreAndForward && size_t(hop.index) + 1 < t.route.size())
    reach(hop.transfer, hop.index + 1, end + booking_.alpha(hop.link));
  return size_t(++t.hops_done) == t.route.size();
}

void FluidNetwork::hop_ended(int32_t h, Picoseconds at, std::vector<Delivery> &delivered) {
  const Hop hop = hops_[size_t(h)];
  free_hops_.push_back(h);
  FluidTransfer &t = transfers_[size_t(hop.transfer)];
  const LinkId link = hop.link;
  if (booking_.fair(link)) {
    std::vector<int32_t> &on_link = link_hops_[link.index()];
    on_link[size_t(hop.slot)] = on_link.back();
    hops_[size_t(on_link.back())].slot = hop.slot;
    on_link.pop_back();
    --carried_;
    add_demand(h, -1);
    hops_[size_t(h)].end = kNever;
    booking_.carried(link, t.bytes, 0);
    if (on_link.empty()) {
      booking_.carried(link, 0, at - busy_since_[link.index()]);
      link_idle(link);
    }
    changed(link);
  }
  if (hop_done(hop, at)) {
    delivered.push_back(
        {t.tag, {t.start, t.last_end + booking_.alpha(t.route.back())}, t.first_hop_end, true});
    free_transfers_.push_back(hop.transfer);
  }
}

// Only fair relations keep the list of their busy links (the refill walks them); FIFO relations
// are held transfer by transfer and have none.
void FluidNetwork::link_busy(LinkId link) {
  for (int32_t k = booking_.relations_begin(link); k < booking_.relations_end(link); ++k) {
    if (!booking_.relation_fair(size_t(booking_.relation_at(k))))
      continue;
    std::vector<int32_t> &busy = relation_busy_[size_t(booking_.relation_at(k))];
    busy_slot_[size_t(k)] = static_cast<int32_t>(busy.size());
    busy.push_back(link.value());
  }
}

void FluidNetwork::link_idle(LinkId link) {
  for (int32_t k = booking_.relations_begin(link); k < booking_.relations_end(link); ++k) {
    const int32_t r = booking_.relation_at(k);
    if (!booking_.relation_fair(size_t(r)))
      continue;
    std::vector<int32_t> &busy = relation_busy_[size_t(r)];
    const int32_t slot = busy_slot_[size_t(k)];
    const int32_t moved = busy.back();
    busy[size_t(slot)] = moved;
    busy.pop_back();
    const LinkId m(moved);
    for (int32_t j = booking_.relations_begin(m); j < booking_.relations_end(m); ++j)
      if (booking_.relation_at(j) == r)
        busy_slot_[size_t(j)] = slot;
  }
}

void FluidNetwork::add_demand(int32_t h, int sign) {
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
void FluidNetwork::share_bandwidth() {
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

bool FluidNetwork::saturated(size_t c) const {
  return unbounded_[c] > 0 || demand_[c] > supply_[c];
}

void FluidNetwork::visit(size_t c) {
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
  if (c < booking_.num_links()) {
    take(static_cast<int32_t>(c));
  } else {
    for (int32_t l : relation_busy_[c - booking_.num_links()])
      take(l);
  }
}

// The constraints wait in a heap by the share each would give its rising hops; the smallest is
// the next level. Freezing hops at the level only raises the other constraints' shares, so an
// entry is never above its constraint's share: one found below it when it comes up is pushed
// again at its share now, and one whose hops are all frozen is dropped.
void FluidNetwork::fill() {
  const size_t n = booking_.num_links();
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
    left_[k] = k < n ? booking_.link_rate(LinkId(c)) : booking_.relation_rate(k - n);
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
Picoseconds FluidNetwork::first_end() {
  while (!ends_.empty()) {
    const Event &e = ends_.top();
    if (hops_[e.target].end == e.time)
      return e.time;
    ends_.pop();
  }
  return kNever;
}

void FluidNetwork::refresh_next_event() {
  next_event_ = std::min(fluid_queue_.empty() ? kNever : fluid_queue_.top().time, first_end());
  if (rates_stale_)
    next_event_ = std::min(next_event_, stale_since_ + window());
}

void FluidNetwork::advance(Picoseconds until, std::vector<Delivery> &delivered) {
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
