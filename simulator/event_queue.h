// The discrete-event queue: integer time in picoseconds, a 4-ary heap over plain events, and
// ties broken by insertion order so that equal inputs give identical runs (as SimGrid
// does). Events are small values in reserved vectors: no allocation per event.
//
// Schedules post bursts of events at one time (every transfer of a synchronous step arrives
// together), so besides the heap there is a lane: a FIFO of events that all have the time of the
// first event pushed while it was empty. Its events arrive in insertion order, so it is sorted by
// (time, insertion) as it stands; popping takes the smaller of its front and the heap's top. A
// burst then costs O(1) per event instead of O(log n). The heap is 4-ary: half the levels of a
// binary heap, and a node's children share a cache line.
#pragma once

#include <algorithm>
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
  void reserve(size_t n) {
    heap_.reserve(n);
    lane_.reserve(n);
  }
  void push(Picoseconds time, uint32_t kind, uint32_t target) {
    const Event e{time, next_sequence_++, kind, target};
    if (lane_head_ == lane_.size()) {
      lane_.clear();
      lane_head_ = 0;
      lane_time_ = time;
    }
    if (time == lane_time_) {
      lane_.push_back(e);
      return;
    }
    sift_up(e);
  }
  bool empty() const { return heap_.empty() && lane_head_ == lane_.size(); }
  size_t size() const { return heap_.size() + (lane_.size() - lane_head_); }
  /// The next event; the queue must not be empty.
  const Event &top() const { return from_lane() ? lane_[lane_head_] : heap_.front(); }
  Event pop() {
    ++popped_;
    if (from_lane())
      return lane_[lane_head_++];
    const Event e = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty())
      sift_down(last);
    return e;
  }
  uint64_t events_processed() const { return popped_; }

private:
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
  void sift_down(const Event &e) {
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
  bool from_lane() const {
    return lane_head_ < lane_.size() && (heap_.empty() || before(lane_[lane_head_], heap_.front()));
  }

  std::vector<Event> heap_;
  std::vector<Event> lane_;
  size_t lane_head_ = 0;
  Picoseconds lane_time_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t popped_ = 0;
};

} // namespace syncoll::simulator
