// Pass 4, ordering and channels (GC3 section 5.2): flows (instructions joined by messages share a
// channel, since a fused instruction's thread block has one channel for both its connections),
// priorities, and one global topological order that also receives every connection's messages in
// the order they were sent.
#include "lowering/detail/passes.h"
#include "model/invariant.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <numeric>
#include <queue>
#include <tuple>

namespace syncoll::lowering::detail {

int Flows::find(int x) {
  return parent[size_t(x)] == x ? x : parent[size_t(x)] = find(parent[size_t(x)]);
}

Flows build_flows(const InstructionDag &dag) {
  const size_t n = dag.instructions.size();
  Flows f;
  f.parent.resize(n);
  std::iota(f.parent.begin(), f.parent.end(), 0);
  for (const auto &[a, b] : dag.messages)
    f.parent[size_t(f.find(a))] = f.find(b);
  f.channel.assign(n, 0);
  f.channel_by_hand.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    const DagInstruction &in = dag.instructions[i];
    if (!in.removed && in.hints.preferred_channel) {
      int &ch = f.channel[size_t(f.find(int(i)))];
      ch = std::max(ch, *in.hints.preferred_channel);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const DagInstruction &in = dag.instructions[i];
    if (!in.removed && in.hints.channel) {
      f.channel[size_t(f.find(int(i)))] = *in.hints.channel;
      f.channel_by_hand[size_t(f.find(int(i)))] = true;
    }
  }
  // Priorities (as msccl-tools): depth in messages from the start, then the longest path to the
  // end first.
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  for (const DagEdge &e : dag.edges) {
    succ[size_t(e.from)].push_back(e.to);
    ++indeg[size_t(e.to)];
  }
  std::set<std::pair<int, int>> message_edges(dag.messages.begin(), dag.messages.end());
  for (const auto &[a, b] : dag.messages) {
    succ[size_t(a)].push_back(b);
    ++indeg[size_t(b)];
  }
  f.depth.assign(n, 0);
  f.height.assign(n, 0);
  std::vector<int> topo;
  std::queue<int> q;
  for (size_t i = 0; i < n; ++i)
    if (!dag.instructions[i].removed && indeg[i] == 0)
      q.push(int(i));
  while (!q.empty()) {
    const int u = q.front();
    q.pop();
    topo.push_back(u);
    for (int v : succ[size_t(u)]) {
      f.depth[size_t(v)] =
          std::max(f.depth[size_t(v)], f.depth[size_t(u)] + int(message_edges.contains({u, v})));
      if (--indeg[size_t(v)] == 0)
        q.push(v);
    }
  }
  SYNCOLL_INVARIANT(topo.size() ==
                        size_t(std::count_if(dag.instructions.begin(), dag.instructions.end(),
                                             [](auto &x) { return !x.removed; })),
                    "the instruction DAG has a cycle");
  for (auto it = topo.rbegin(); it != topo.rend(); ++it)
    for (int v : succ[size_t(*it)])
      f.height[size_t(*it)] = std::max(f.height[size_t(*it)], f.height[size_t(v)] + 1);
  f.successors = std::move(succ);
  return f;
}

// None when the order exists on the current channels; otherwise the flow that waits, to move
// to the next channel.
std::optional<Conflict> order(InstructionDag &dag, Flows &flows) {
  const size_t n = dag.instructions.size();
  std::vector<int> indeg(n, 0);
  for (size_t u = 0; u < n; ++u)
    for (int v : flows.successors[u])
      ++indeg[size_t(v)];
  std::vector<int> sender_of(n, -1), message_in(n, -1);
  for (size_t m = 0; m < dag.messages.size(); ++m) {
    sender_of[size_t(dag.messages[m].second)] = dag.messages[m].first;
    message_in[size_t(dag.messages[m].second)] = int(m);
  }
  using Key = std::tuple<int, int, int>; // depth, -height, index
  auto key = [&](int i) { return Key{flows.depth[size_t(i)], -flows.height[size_t(i)], i}; };
  std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
  std::map<std::tuple<int, int, int>, std::deque<int>> fifo; // connection -> receivers queued
  std::set<int> waiting;                                     // data-ready, behind in a FIFO
  auto connection = [&](int receiver) {
    const DagInstruction &r = dag.instructions[size_t(receiver)];
    return std::tuple<int, int, int>{r.recv_peer->value(), r.rank.value(),
                                     flows.channel_of(receiver)};
  };
  auto release = [&](int i) {
    if (message_in[size_t(i)] >= 0) {
      auto &q = fifo[connection(i)];
      if (q.empty() || q.front() != i) {
        waiting.insert(i);
        return;
      }
    }
    ready.push(key(i));
  };
  for (size_t i = 0; i < n; ++i)
    if (!dag.instructions[i].removed && indeg[i] == 0)
      release(int(i));
  dag.order.clear();
  while (!ready.empty()) {
    const int u = std::get<2>(ready.top());
    ready.pop();
    dag.order.push_back(u);
    if (message_in[size_t(u)] >= 0) {
      auto &q = fifo[connection(u)];
      q.pop_front();
      if (!q.empty() && waiting.erase(q.front()))
        ready.push(key(q.front()));
    }
    for (int v : flows.successors[size_t(u)]) {
      if (message_in[size_t(v)] >= 0 && sender_of[size_t(v)] == u) {
        auto &q = fifo[connection(v)];
        q.push_back(v);
        if (q.size() == 1 && waiting.erase(v))
          ready.push(key(v));
      }
      if (--indeg[size_t(v)] == 0)
        release(v);
    }
  }
  if (waiting.empty())
    return std::nullopt;
  const int stuck = *waiting.begin();
  const auto [a, b, ch] = connection(stuck);
  return Conflict{flows.find(stuck),
                  fmt::format("messages on connection {}->{} channel {} would have to be "
                              "received out of the order they were sent",
                              a, b, ch)};
}

} // namespace syncoll::lowering::detail
