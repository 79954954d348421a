// The network a simulation runs on: links and bandwidth relations as resources that transfers
// hold (docs/cost-model.md), in three parts, each its own class and file:
//
//   routes.h         which links a transfer between two ranks takes (cached per pair)
//   link_booking.h   first-come booking: a transfer of b bytes over link l holds l for
//                    b / bandwidth(l), and every FIFO relation containing l for
//                    b / bandwidth(relation); it arrives alpha(l) after it started plus its
//                    serialization time (cut-through: latency and serialization add once)
//   fluid_network.h  links in max-min fair relations as fluid resources, and every multi-hop
//                    transfer taken hop by hop (in the order transfers reach each link, so shared
//                    links interleave transfers as hardware does)
//
// Network composes them: a one-link transfer outside fair relations is booked at once; any other
// is the fluid engine's, which reports it through `advance`.
#pragma once

#include "model/topology.h"
#include "simulator/fluid_network.h"
#include "simulator/link_booking.h"
#include "simulator/routes.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace syncoll::simulator {

class Network {
public:
  /// `efficiency` scales every bandwidth (a protocol's payload share: LL 0.5, LL128 120/128).
  Network(const Topology &topology, double efficiency)
      : topology_(topology), routes_(topology), booking_(topology, efficiency), fluid_(booking_) {}
  Network(const Network &) = delete;
  Network &operator=(const Network &) = delete;

  /// Reserves link `link` for `bytes`, no earlier than `ready` (first come, first served).
  TransferTimes reserve(LinkId link, int64_t bytes, Picoseconds ready) {
    return booking_.reserve(link, bytes, ready);
  }
  /// The links from rank src to rank dst (routes.h); empty when dst cannot be reached.
  std::span<const LinkId> route(RankId src, RankId dst) { return routes_.route(src, dst); }

  /// Starts a transfer of `bytes` over `route` at `ready` (no earlier than the last `advance`).
  /// A one-link route outside max-min fair relations has its times fixed now, and returned.
  /// Otherwise they depend on transfers that start later: it returns nullopt, and `advance`
  /// reports the times under `tag`. Each hop is taken when the transfer reaches it (after the
  /// previous hop's latency under cut-through, its latency and serialization under
  /// store-and-forward), in the order transfers reach the link. `rate_cap` (bytes/ns, 0 for none)
  /// bounds a fair-shared transfer's speed, as a slow sender does.
  std::optional<TransferTimes> start(std::span<const LinkId> route, int64_t bytes,
                                     Picoseconds ready, Switching switching, uint32_t tag,
                                     double rate_cap = 0);
  /// See FluidNetwork::set_sharing_window.
  void set_sharing_window(Picoseconds window, int hop_ratio = 0, size_t from_hops = 0) {
    fluid_.set_sharing_window(window, hop_ratio, from_hops);
  }
  /// Time of the next fair-shared event, kNever when none is due.
  Picoseconds next_event() const { return fluid_.next_event(); }
  /// Runs network-run transfers through `until` and appends the reports due.
  void advance(Picoseconds until, std::vector<Delivery> &delivered) {
    fluid_.advance(until, delivered);
  }
  /// Events of the fair-shared transfers processed so far.
  uint64_t fluid_events() const { return fluid_.fluid_events(); }

  const std::vector<LinkUsage> &usage() const { return booking_.usage(); }
  /// Adds `times` x `step` to the usage (a step repeated without being simulated).
  void add_usage(const std::vector<LinkUsage> &step, int64_t times) {
    booking_.add_usage(step, times);
  }
  /// Whether every link and relation is free at `t` and no transfer is under way.
  bool idle_by(Picoseconds t) const { return !fluid_.busy() && booking_.free_by(t); }
  const Topology &topology() const { return topology_; }
  /// Serialization time of `bytes` on a link alone.
  Picoseconds serialization(LinkId link, int64_t bytes) const {
    return booking_.serialization(link, bytes);
  }

private:
  const Topology &topology_;
  Routes routes_;
  LinkBooking booking_;
  FluidNetwork fluid_;
};

} // namespace syncoll::simulator
