// First-come booking of links and bandwidth relations (docs/cost-model.md): a transfer of b bytes
// over link l holds l for b / bandwidth(l), and every FIFO relation containing l for
// b / bandwidth(relation), in the order transfers ask. Also the facts of each link the fluid
// engine (fluid_network.h) reads: its latency, its relations, whether one of them is fair-shared;
// and what every link carried, whichever engine carried it.
#pragma once

#include "model/topology.h"
#include "simulator/event_queue.h"

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace syncoll::simulator {

struct TransferTimes {
  Picoseconds start = 0;
  Picoseconds arrival = 0;
};

inline constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();

struct LinkUsage {
  int64_t bytes = 0;
  Picoseconds busy = 0;
};

/// ps to move `bytes` at `bytes_per_ns`, rounded to the nearest picosecond.
Picoseconds transfer_ps(int64_t bytes, double bytes_per_ns);
/// ns (a topology latency) to ps.
Picoseconds to_ps(Nanoseconds ns);

class LinkBooking {
public:
  /// `efficiency` scales every bandwidth (a protocol's payload share: LL 0.5, LL128 120/128).
  LinkBooking(const Topology &topology, double efficiency);

  /// Reserves link `link` for `bytes`, no earlier than `ready`.
  TransferTimes reserve(LinkId link, int64_t bytes, Picoseconds ready);
  /// Holds the FIFO relations of a fair-shared link for `bytes` from when all are free, no
  /// earlier than `ready`; returns that time.
  Picoseconds hold_fifo_relations(LinkId link, int64_t bytes, Picoseconds ready);
  /// Serialization time of `bytes` on a link alone.
  Picoseconds serialization(LinkId link, int64_t bytes) const;
  /// Whether every link and FIFO relation is free at `t`.
  bool free_by(Picoseconds t) const;

  Picoseconds alpha(LinkId link) const { return links_[link.index()].alpha; }
  /// In a max-min fair relation: carried by the fluid engine.
  bool fair(LinkId link) const { return links_[link.index()].fair; }
  bool has_fair() const { return has_fair_; }
  size_t num_links() const { return links_.size(); }
  size_t num_relations() const { return relation_fair_.size(); }
  /// The link's relations are relation_at(k) for relations_begin <= k < relations_end; `k`
  /// also names the (link, relation) pair.
  int32_t relations_begin(LinkId link) const { return links_[link.index()].relations_begin; }
  int32_t relations_end(LinkId link) const { return links_[link.index()].relations_end; }
  size_t relation_entries() const { return relation_ids_.size(); }
  int32_t relation_at(int32_t k) const { return relation_ids_[size_t(k)]; }
  bool relation_fair(size_t relation) const { return relation_fair_[relation]; }
  /// Bytes/ns a link, or a relation, carries at the protocol's efficiency.
  double link_rate(LinkId link) const;
  double relation_rate(size_t relation) const {
    return relation_bytes_per_ns_[relation] * efficiency_;
  }

  const std::vector<LinkUsage> &usage() const { return usage_; }
  /// A fair-shared link carried `bytes` more, and was busy `busy` longer.
  void carried(LinkId link, int64_t bytes, Picoseconds busy) {
    usage_[link.index()].bytes += bytes;
    usage_[link.index()].busy += busy;
  }
  /// Adds `times` x `step` to the usage (a step repeated without being simulated).
  void add_usage(const std::vector<LinkUsage> &step, int64_t times);

private:
  // Everything a transfer reads or writes about its link, in one cache line.
  struct LinkState {
    Picoseconds free_at = 0;
    Picoseconds alpha = 0;
    int64_t memo_bytes = -1; ///< the last size serialized, and its time: schedules repeat it
    Picoseconds memo_time = 0;
    int32_t relations_begin = 0; ///< into relation_ids_
    int32_t relations_end = 0;
    bool fair = false;
  };

  const Topology &topology_;
  double efficiency_;
  std::vector<LinkState> links_;
  std::vector<int32_t> relation_ids_; ///< relations of each link, contiguous
  std::vector<Picoseconds> relation_free_;
  std::vector<double> relation_bytes_per_ns_;
  std::vector<bool> relation_fair_;
  bool has_fair_ = false;
  std::vector<LinkUsage> usage_;
};

} // namespace syncoll::simulator
