// The event queue pops in (time, insertion) order however pushes and pops interleave, bursts
// at one time included (they form lanes, lone events are plain heap entries).
#include "simulator/event_queue.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <set>
#include <tuple>

namespace syncoll::simulator {
namespace {

TEST(EventQueueTest, TiesPopInInsertionOrderAcrossLaneAndHeap) {
  EventQueue q;
  q.push(5, 0, 0); // a plain entry at time 5
  q.push(3, 0, 1); // plain
  q.push(5, 0, 2); // opens time 5's lane behind the first
  q.push(5, 0, 3); // joins it
  q.push(4, 0, 4); // plain
  std::vector<uint32_t> order;
  while (!q.empty())
    order.push_back(q.pop().target);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 4, 0, 2, 3}));
  EXPECT_EQ(q.events_processed(), 5u);
}

RC_GTEST_PROP(EventQueueProperty, PopsTheLeastTimeThenTheEarliestPushed, ()) {
  // A reference ordered set against the queue, over random pushes (times from a range small
  // enough for bursts and ties, sometimes wider than the queue's recent lanes) and pops that
  // never go back in time.
  EventQueue q;
  std::set<std::tuple<Picoseconds, uint32_t>> reference; // (time, insertion number)
  Picoseconds now = 0;
  uint32_t pushed = 0;
  const int operations = *rc::gen::inRange(1, 400);
  const int spread = *rc::gen::element(2, 4, 12);
  for (int i = 0; i < operations; ++i) {
    if (reference.empty() || *rc::gen::inRange(0, 3) > 0) {
      const Picoseconds t = now + *rc::gen::inRange(0, spread);
      q.push(t, 0, pushed);
      reference.emplace(t, pushed++);
    } else {
      RC_ASSERT(q.top().target == std::get<1>(*reference.begin()));
      const Event e = q.pop();
      RC_ASSERT(std::make_tuple(e.time, e.target) == *reference.begin());
      reference.erase(reference.begin());
      now = e.time;
    }
    RC_ASSERT(q.size() == reference.size());
  }
}

} // namespace
} // namespace syncoll::simulator
