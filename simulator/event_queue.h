// The discrete-event queue: integer time in picoseconds, a binary heap over plain events, and
// ties broken by insertion order so that equal inputs give identical runs (as SimGrid
// does). Events are small values in reserved vectors: no allocation per event.
//
// Schedules post bursts of events at one time (every transfer of a synchronous step arrives
// together; every hop of them reaches the next switch one latency later), so besides the heap
// there are a few lanes: each a FIFO of events that all have the time of the first event pushed
// into it while it was empty. A lane's events arrive in insertion order, so it is sorted by
// (time, insertion) as it stands; popping takes the smallest of the lanes' fronts and the heap's
// top. A burst then costs O(1) per event instead of O(log n).
#pragma once

#include <algorithm>
#include <array>
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
    const Event e{time, next_sequence_++, kind, target};
    ++size_;
    for (Lane &lane : lanes_)
      if (lane.head < lane.events.size() && lane.time == time) {
        lane.events.push_back(e);
        return;
      }
    for (Lane &lane : lanes_)
      if (lane.head == lane.events.size()) {
        lane.events.clear();
        lane.head = 0;
        lane.time = time;
        lane.events.push_back(e);
        return;
      }
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The next event; the queue must not be empty.
  const Event &top() const {
    const int lane = first_lane();
    return lane >= 0 ? lanes_[size_t(lane)].events[lanes_[size_t(lane)].head] : heap_.front();
  }
  Event pop() {
    ++popped_;
    --size_;
    const int lane = first_lane();
    if (lane >= 0) {
      Lane &l = lanes_[size_t(lane)];
      return l.events[l.head++];
    }
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
  struct Lane {
    std::vector<Event> events;
    size_t head = 0;
    Picoseconds time = 0;
  };
  // The lane whose front comes first, when it comes before the heap's top; -1 otherwise.
  int first_lane() const {
    int best = -1;
    const Event *first = heap_.empty() ? nullptr : &heap_.front();
    for (size_t i = 0; i < lanes_.size(); ++i) {
      const Lane &lane = lanes_[i];
      if (lane.head < lane.events.size() &&
          (first == nullptr || Later{}(*first, lane.events[lane.head]))) {
        first = &lane.events[lane.head];
        best = int(i);
      }
    }
    return best;
  }

  std::vector<Event> heap_;
  std::array<Lane, 4> lanes_;
  size_t size_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t popped_ = 0;
};

} // namespace syncoll::simulator
