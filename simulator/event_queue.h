// The discrete-event queue: integer time in picoseconds, a binary heap over plain events, and
// ties broken by insertion order so that equal inputs give identical runs (as SimGrid
// does). Events are small values in reserved vectors: no allocation per event.
//
// Schedules post bursts of events at one time (every transfer of a synchronous step arrives
// together), so besides the heap there is a lane: a FIFO of events that all have the time of the
// first event pushed while it was empty. Its events arrive in insertion order, so it is sorted by
// (time, insertion) as it stands; popping takes the smaller of its front and the heap's top. A
// burst then costs O(1) per event instead of O(log n).
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
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const { return heap_.empty() && lane_head_ == lane_.size(); }
  size_t size() const { return heap_.size() + (lane_.size() - lane_head_); }
  /// The next event; the queue must not be empty.
  const Event &top() const { return from_lane() ? lane_[lane_head_] : heap_.front(); }
  Event pop() {
    ++popped_;
    if (from_lane())
      return lane_[lane_head_++];
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  uint64_t events_processed() const { return popped_; }

private:
  // A function object, not a function pointer, so that the heap algorithms inline it.
  struct Later {
    bool operator()(const Event &a, const Event &b) const {
      return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
    }
  };
  bool from_lane() const {
    return lane_head_ < lane_.size() &&
           (heap_.empty() || Later{}(heap_.front(), lane_[lane_head_]));
  }

  std::vector<Event> heap_;
  std::vector<Event> lane_;
  size_t lane_head_ = 0;
  Picoseconds lane_time_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t popped_ = 0;
};

} // namespace syncoll::simulator
