// The discrete-event queue: integer time in picoseconds, a binary heap over plain events, and
// ties broken by insertion order so that equal inputs give identical runs (code-style anchors,
// guideline 7). Events are small values in one reserved vector: no allocation per event.
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
  void reserve(size_t n) { heap_.reserve(n); }
  void push(Picoseconds time, uint32_t kind, uint32_t target) {
    heap_.push_back({time, next_sequence_++, kind, target});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// The next event; the queue must not be empty.
  const Event &top() const { return heap_.front(); }
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Event e = heap_.back();
    heap_.pop_back();
    ++popped_;
    return e;
  }
  uint64_t events_processed() const { return popped_; }

private:
  static bool later(const Event &a, const Event &b) {
    return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
  }
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
  uint64_t popped_ = 0;
};

} // namespace syncoll::simulator
