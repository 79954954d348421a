// The fluid engine of the network (network.h): links in a max-min fair relation are fluid resources
// (SimGrid's LMM). The transfers crossing one at once share it, and those on the links of a fair
// relation share the relation too, all at max-min fair rates recomputed whenever one starts or
// ends, so a transfer's end depends on transfers that start after it. It also carries every
// multi-hop transfer, hop by hop, taking each FIFO link (booked in link_booking.h) when the
// transfer gets there. Its transfers are run by its own events (`start`, `next_event`,
// `advance`).
#pragma once

#include "simulator/event_queue.h"
#include "simulator/link_booking.h"

#include <cstdint>
#include <span>
#include <vector>

namespace syncoll::simulator {

/// How a transfer crosses an intermediate rank on a multi-hop route.
enum class Switching {
  CutThrough,      ///< forwarding starts after the first bytes: latencies add, serialization once
  StoreAndForward, ///< forwarding starts when the whole message is in: serialization per hop
};

/// A network-run transfer's reports: first that the sender's link has finished carrying it
/// (`arrived` false; only `first_hop_end` is set), so that the sender goes on before the transfer
/// is through, then its arrival (with its times).
struct Delivery {
  uint32_t tag = 0;
  TransferTimes times;
  Picoseconds first_hop_end = 0; ///< when the sender's link finished carrying it
  bool arrived = true;
};

class FluidNetwork {
public:
  /// Books FIFO links and relations, and records what links carried, through `booking`.
  explicit FluidNetwork(LinkBooking &booking);

  /// Starts a transfer of `bytes` over `route` at `ready` (no earlier than the last `advance`);
  /// `advance` reports it under `tag`. `rate_cap` (bytes/ns, 0 for none) bounds a fair-shared
  /// hop's speed, as a slow sender does.
  void start(std::span<const LinkId> route, int64_t bytes, Picoseconds ready, Switching switching,
             uint32_t tag, double rate_cap);
  /// Shares max-min fair rates out again at most once per `window` of simulated time instead of
  /// at every start and end (0, the default: exact). Events inside a window run at the rates
  /// shared last: a hop that starts there waits for its rate until the window's events are
  /// through, and bandwidth a hop leaves stays unused until then, so a transfer ends late by up
  /// to about the window per hop that starts inside one. In exchange a run whose every event
  /// moves every rate (an Alltoall on saturated ports) costs one sharing per window, not one per
  /// event.
  /// With `hop_ratio` or `from_hops` above 0 the window holds only where it costs little error
  /// or saves much time: while the median hop of the last sharing lasts (its bytes over its
  /// rate) at least `hop_ratio` windows, as that hop's time over `hop_ratio` (a hop then waits at
  /// most a tenth of a typical hop's time for its rate, at ratio 10); else while more than
  /// `from_hops` hops are carried, as `window`; else not at all (exact).
  void set_sharing_window(Picoseconds window, int hop_ratio = 0, size_t from_hops = 0) {
    window_ = window;
    window_hop_ratio_ = hop_ratio;
    window_from_hops_ = from_hops;
  }
  /// Time of the next fair-shared event (a hop starting or ending, or a sharing window closing),
  /// kNever when none is due.
  Picoseconds next_event() const { return next_event_; }
  /// Runs network-run transfers through `until` and appends the reports due: those whose first
  /// link is done (each before its arrival, at a time no later than its `first_hop_end`), and
  /// those that arrived.
  void advance(Picoseconds until, std::vector<Delivery> &delivered);
  /// Events of the fair-shared transfers processed so far.
  uint64_t fluid_events() const { return fluid_queue_.events_processed() + fluid_completions_; }

  /// Whether a transfer is under way.
  bool busy() const { return !fluid_queue_.empty() || carried_ > 0; }

private:
  // A fair-shared transfer, and each hop of it as a flow over one link.
  struct FluidTransfer {
    uint32_t tag = 0;
    std::span<const LinkId> route;
    int64_t bytes = 0;
    double rate_cap = 0;
    Switching switching = Switching::CutThrough;
    Picoseconds start = kNever;
    Picoseconds first_hop_end = 0;
    Picoseconds last_end = 0; ///< latest end of a hop so far
    int32_t hops_done = 0;
  };
  struct Hop {
    int32_t transfer = 0;
    int32_t index = 0;    ///< position on the route
    LinkId link;          ///< the route's link there, read while the route is in cache
    int32_t slot = 0;     ///< position among its link's hops (a fluid link)
    double remaining = 0; ///< bytes, as of `since`
    double rate = 0;      ///< bytes/ns
    Picoseconds since = 0;
    Picoseconds end = kNever; ///< projected at the current rate; kNever while not carried
  };

  enum FluidEvent : uint32_t { kHopReady = 0, kHopActivate = 1, kHopEnd = 2 };

  void hop_ready(int32_t hop, Picoseconds at);
  void hop_started(int32_t hop, Picoseconds at);
  void activate(int32_t hop, Picoseconds at);
  /// `hop` finished carrying its transfer at `end`: recorded, and under store-and-forward the
  /// transfer goes on. True when it was the transfer's last hop.
  bool hop_done(const Hop &hop, Picoseconds end);
  void reach(int32_t transfer, int32_t index, Picoseconds at); ///< hop `index` is ready
  void hop_ended(int32_t hop, Picoseconds at, std::vector<Delivery> &delivered);
  void changed(LinkId link);   ///< a hop started or ended on fluid link `link`
  void link_busy(LinkId link); ///< fluid link `link` took its first hop: its relations list it
  void link_idle(LinkId link); ///< and carries none any more
  void add_demand(int32_t hop, int sign); ///< `hop`'s cap joins (+1) or leaves (-1) its constraints
  void share_bandwidth(); ///< max-min rates wherever hops came or went since the last sharing
  bool saturated(size_t constraint) const; ///< its hops' caps add up to more than it carries
  void visit(size_t constraint);           ///< takes it, and its hops, into the next filling
  void fill();                             ///< progressive filling over what was visited
  /// Calls `f` with every constraint of fluid link `link`: the link, then its fair relations.
  template <typename F> void for_each_constraint(LinkId link, F &&f) const {
    f(link.index());
    for (int32_t k = booking_.relations_begin(link); k < booking_.relations_end(link); ++k)
      if (const auto r = size_t(booking_.relation_at(k)); booking_.relation_fair(r))
        f(booking_.num_links() + r);
  }
  Picoseconds first_end();
  void refresh_next_event();
  int32_t new_hop(int32_t transfer, int32_t index);

  LinkBooking &booking_;
  // The fluid engine (links of fair relations); slots are reused, so it allocates only while
  // the number of transfers in flight grows.
  std::vector<FluidTransfer> transfers_;
  std::vector<int32_t> free_transfers_;
  std::vector<Hop> hops_;
  std::vector<int32_t> free_hops_;
  std::vector<std::vector<int32_t>> link_hops_; ///< per fluid link: the hops it carries now
  std::vector<Picoseconds> busy_since_;         ///< per fluid link: since when it is carrying
  EventQueue ends_;    ///< projected hop ends; an entry is current while it equals its hop's end
  size_t carried_ = 0; ///< hops on fluid links now
  EventQueue fluid_queue_;
  Picoseconds now_ = 0;
  Picoseconds until_ = 0; ///< how far the running `advance` may go
  Picoseconds next_event_ = kNever;
  std::vector<Delivery> *reports_ = nullptr; ///< the running `advance`'s output
  uint64_t fluid_completions_ = 0;
  bool rates_stale_ = false;
  Picoseconds stale_since_ = 0;   ///< when the rates went stale
  Picoseconds window_ = 0;        ///< see set_sharing_window
  int window_hop_ratio_ = 0;      ///< see set_sharing_window
  size_t window_from_hops_ = 0;   ///< see set_sharing_window
  Picoseconds typical_hop_ = 0;   ///< the median hop duration of the last sharing
  std::vector<double> durations_; ///< scratch: the durations of the hops a sharing rated, in ns
  /// The window in force now (set_sharing_window says when it holds).
  Picoseconds window() const {
    if (window_hop_ratio_ == 0 && window_from_hops_ == 0)
      return window_;
    if (window_hop_ratio_ > 0 && typical_hop_ >= window_ * window_hop_ratio_)
      return typical_hop_ / window_hop_ratio_;
    return window_from_hops_ > 0 && carried_ > window_from_hops_ ? window_ : 0;
  }
  // Sharing. A constraint is a fluid link (index = link) or a fair relation (links + relation).
  std::vector<int32_t> dirty_links_; ///< links whose hops changed since the last sharing
  std::vector<char> link_dirty_;
  std::vector<std::vector<int32_t>> relation_busy_; ///< per relation: its links carrying hops
  std::vector<int32_t> busy_slot_; ///< per entry of relation_ids_: the link's place in busy list
  std::vector<int64_t> supply_;    ///< per constraint: its rate, fixed point
  std::vector<int64_t> demand_;    ///< per constraint: its hops' caps added up, fixed point
  std::vector<int32_t> unbounded_; ///< per constraint: its hops without a cap
  uint32_t sharing_round_ = 0;
  std::vector<uint32_t> constraint_round_; ///< the last round that took it into a filling
  std::vector<uint32_t> hop_seen_;         ///< per hop: likewise
  std::vector<int32_t> solve_constraints_;
  std::vector<int32_t> solve_hops_;
  std::vector<double> left_;    ///< per constraint, while filling: what its frozen hops leave
  std::vector<int32_t> rising_; ///< and how many of its hops still rise
  struct ConstraintEntry {
    double share = 0;
    uint32_t id = 0;
    friend bool operator>(const ConstraintEntry &a, const ConstraintEntry &b) {
      return a.share != b.share ? a.share > b.share : a.id > b.id;
    }
  };
  std::vector<ConstraintEntry> constraint_heap_;
  std::vector<std::pair<double, int32_t>> capped_scratch_; ///< the filling's capped hops
  std::vector<double> hop_level_; ///< per hop: the rate the filling gives it
  std::vector<uint32_t> hop_frozen_;
  uint32_t freeze_round_ = 0;
};

} // namespace syncoll::simulator
