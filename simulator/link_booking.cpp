#include "simulator/link_booking.h"

#include "model/invariant.h"

#include <algorithm>
#include <cmath>

namespace syncoll::simulator {

Picoseconds transfer_ps(int64_t bytes, double bytes_per_ns) {
  SYNCOLL_INVARIANT(bytes_per_ns > 0, "transfer over a link without bandwidth");
  return static_cast<Picoseconds>(std::llround(double(bytes) * 1000.0 / bytes_per_ns));
}

Picoseconds to_ps(Nanoseconds ns) {
  return static_cast<Picoseconds>(std::llround(ns.count * 1000.0));
}

LinkBooking::LinkBooking(const Topology &topology, double efficiency)
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
  }
}

double LinkBooking::link_rate(LinkId link) const {
  return topology_.link(link).bandwidth.value * efficiency_;
}

Picoseconds LinkBooking::serialization(LinkId link, int64_t bytes) const {
  const LinkState &s = links_[link.index()];
  if (s.memo_bytes == bytes)
    return s.memo_time;
  return transfer_ps(bytes, topology_.link(link).bandwidth.value * efficiency_);
}

TransferTimes LinkBooking::reserve(LinkId link, int64_t bytes, Picoseconds ready) {
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

void LinkBooking::add_usage(const std::vector<LinkUsage> &step, int64_t times) {
  SYNCOLL_INVARIANT(step.size() == usage_.size(), "usage of another network");
  for (size_t l = 0; l < usage_.size(); ++l) {
    usage_[l].bytes += step[l].bytes * times;
    usage_[l].busy += step[l].busy * times;
  }
}

Picoseconds LinkBooking::hold_fifo_relations(LinkId link, int64_t bytes, Picoseconds ready) {
  const LinkState &s = links_[link.index()];
  Picoseconds begin = ready;
  for (int32_t i = s.relations_begin; i < s.relations_end; ++i) {
    const size_t r = size_t(relation_ids_[size_t(i)]);
    if (!relation_fair_[r])
      begin = std::max(begin, relation_free_[r]);
  }
  for (int32_t i = s.relations_begin; i < s.relations_end; ++i) {
    const size_t r = size_t(relation_ids_[size_t(i)]);
    if (!relation_fair_[r])
      relation_free_[r] = begin + transfer_ps(bytes, relation_bytes_per_ns_[r] * efficiency_);
  }
  return begin;
}

bool LinkBooking::free_by(Picoseconds t) const {
  for (const LinkState &s : links_)
    if (s.free_at > t)
      return false;
  for (Picoseconds free : relation_free_)
    if (free > t)
      return false;
  return true;
}

} // namespace syncoll::simulator
