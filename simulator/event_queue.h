// The discrete-event queue: integer time in picoseconds, a 4-ary heap over plain events, and
// ties broken by insertion order so that equal inputs give identical runs (as SimGrid
// does). Events are small values in reserved vectors: no allocation per event.
//
// Schedules run in lockstep: a ring's thousands of thread blocks all wake at the same picosecond,
// step after step, while the next step's wake-ups are already being posted. So events at one
// time form a lane, a FIFO that enters the heap as one entry keyed by its front event: events
// posted in order at one time are sorted by (time, insertion) as they stand. A push at a time one
// of the few most recent lanes has joins it in O(1); a lone event is a plain heap entry, and the
// second event at its time opens a lane behind it. With lanes the heap holds a few entries per
// distinct time instead of one per thread block, and events at distinct times cost what a plain
// heap costs. The heap is 4-ary: half the levels of a binary heap, and a node's children share a
// cache line.
#pragma once

#include "model/invariant.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <vector>

namespace syncoll::simulator {

/// Simulated time in picoseconds.
using Picoseconds = int64_t;

struct Event {
  Picoseconds time = 0;
  uint64_t sequence = 0; ///< insertion order, the tie-breaker
  uint32_t kind = 0;     ///< what happens, interpreted by the engine that posted it
  uint32_t target = 0;   ///< whom it happens to (a thread block, a transfer, ...)
};

class EventQueue {
public:
  void reserve(size_t n) { heap_.reserve(n); }
  void push(Picoseconds time, uint32_t kind, uint32_t target) {
    SYNCOLL_INVARIANT(kind != kLaneKind, "an event kind the queue keeps for its lanes");
    const Event e{time, next_sequence_++, kind, target};
    ++size_;
    for (Recent &r : recent_) {
      if (r.time != time || r.lane == kNone)
        continue;
      if (r.lane != kSingleton) {
        lanes_[r.lane].events.push_back(e);
        return;
      }
      // The second event at this time: the first stays a plain entry, ahead of the lane.
      r.lane = open_lane(e);
      sift_up({time, e.sequence, kLaneKind, r.lane});
      return;
    }
    recent_[next_recent_] = {time, kSingleton};
    next_recent_ = (next_recent_ + 1) % recent_.size();
    sift_up(e);
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The next event; the queue must not be empty.
  const Event &top() const {
    const Event &entry = heap_.front();
    if (entry.kind != kLaneKind)
      return entry;
    const Lane &lane = lanes_[entry.target];
    return lane.events[lane.head];
  }
  Event pop() {
    ++popped_;
    --size_;
    const Event &entry = heap_.front();
    if (entry.kind != kLaneKind) {
      const Event e = entry;
      remove_top();
      return e;
    }
    const uint32_t id = entry.target;
    Lane &lane = lanes_[id];
    const Event e = lane.events[lane.head++];
    // The entry keeps its first event's key: the events at one time that a lane holds are a
    // contiguous stretch of that time's pushes (it takes every one while it is the time's recent
    // lane, none after), so no other entry's key falls between the lane's first and its front.
    if (lane.head < lane.events.size())
      return e;
    for (Recent &r : recent_)
      if (r.lane == id)
        r.lane = kNone;
    lane.events.clear();
    lane.head = 0;
    free_lanes_.push_back(id);
    remove_top();
    return e;
  }
  uint64_t events_processed() const { return popped_; }

private:
  static constexpr uint32_t kLaneKind = UINT32_MAX; ///< a heap entry that stands for a lane
  static constexpr uint32_t kNone = UINT32_MAX, kSingleton = UINT32_MAX - 1;
  struct Lane {
    std::vector<Event> events; ///< one time, in insertion order; [head, size) pending
    size_t head = 0;
  };
  /// A recent time: its lane, or kSingleton while its one event is a plain entry.
  struct Recent {
    Picoseconds time = -1;
    uint32_t lane = kNone;
  };

  uint32_t open_lane(const Event &first) {
    uint32_t id;
    if (free_lanes_.empty()) {
      id = uint32_t(lanes_.size());
      lanes_.emplace_back();
    } else {
      id = free_lanes_.back();
      free_lanes_.pop_back();
    }
    lanes_[id].events.push_back(first);
    return id;
  }
  void remove_top() {
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty())
      sift_down(last);
  }

  static constexpr size_t kArity = 4;
  // (time, sequence) as one 128-bit number: one comparison, no branch to mispredict. Times are
  // never negative.
  static unsigned __int128 key(const Event &e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.time)) << 64) | e.sequence;
  }
  static bool before(const Event &a, const Event &b) { return key(a) < key(b); }
  // Moves the hole left by a new last event up to where `e` belongs.
  void sift_up(const Event &e) {
    size_t hole = heap_.size();
    heap_.emplace_back();
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!before(e, heap_[parent]))
        break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }
  // Moves the hole left by the popped top down to where `e` (the old last event) belongs.
  void sift_down(const Event e) { // a copy: `e` may be the top it overwrites
    const size_t n = heap_.size();
    size_t hole = 0;
    for (;;) {
      const size_t first = hole * kArity + 1;
      if (first >= n)
        break;
      size_t best = first;
      unsigned __int128 best_key = key(heap_[first]);
      for (size_t c = first + 1; c < std::min(first + kArity, n); ++c) {
        const unsigned __int128 k = key(heap_[c]);
        const bool less = k < best_key;
        best = less ? c : best;
        best_key = less ? k : best_key;
      }
      if (!(best_key < key(e)))
        break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = e;
  }

  std::vector<Event> heap_; ///< plain events and lane entries (kLaneKind, target = lane)
  std::vector<Lane> lanes_;
  std::vector<uint32_t> free_lanes_;
  std::array<Recent, 4> recent_{};
  size_t next_recent_ = 0;
  size_t size_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t popped_ = 0;
};

} // namespace syncoll::simulator
