// Pass 5, thread blocks (GC3 section 5.2), in the global order: one send peer and one receive
// peer per thread block, one thread block per connection direction.
#include "lowering/detail/passes.h"

#include <fmt/format.h>
#include <tuple>

namespace syncoll::lowering::detail {

std::optional<Conflict> assign_thread_blocks(InstructionDag &dag, Flows &flows, int ranks,
                                             ThreadBlockPlans &plans) {
  plans.assign(size_t(ranks), {});
  std::map<std::tuple<int, int, int>, int> send_owner, recv_owner; // (rank, peer, ch) -> tb
  std::vector<int> last_tb(dag.instructions.size(), -1);
  std::vector<std::vector<int>> preds(dag.instructions.size());
  for (const DagEdge &e : dag.edges)
    preds[size_t(e.to)].push_back(e.from);
  for (int i : dag.order) {
    DagInstruction &in = dag.instructions[size_t(i)];
    auto &rank_tbs = plans[in.rank.index()];
    const std::optional<int> hint = in.hints.thread_block();
    const bool local = !in.send_peer && !in.recv_peer;
    const int ch = local ? 0 : flows.channel_of(i);
    auto fits = [&](const ThreadBlockPlan &t) {
      return (local || t.channel == ch) &&
             (!in.send_peer || !t.send_peer || *t.send_peer == *in.send_peer) &&
             (!in.recv_peer || !t.recv_peer || *t.recv_peer == *in.recv_peer) &&
             (!hint || t.hint == hint) && (hint || !t.hint);
    };
    int tb = -1;
    std::optional<int> owner_s, owner_r;
    if (in.send_peer)
      if (auto it = send_owner.find({in.rank.value(), in.send_peer->value(), ch});
          it != send_owner.end())
        owner_s = it->second;
    if (in.recv_peer)
      if (auto it = recv_owner.find({in.rank.value(), in.recv_peer->value(), ch});
          it != recv_owner.end())
        owner_r = it->second;
    auto conflict = [&](const std::string &why) {
      return Conflict{flows.find(i),
                      fmt::format("rank {} channel {}: {}", in.rank.value(), ch, why)};
    };
    if (owner_s && owner_r && *owner_s != *owner_r)
      return conflict("its send and receive connections belong to different thread blocks");
    if (owner_s || owner_r) {
      tb = owner_s ? *owner_s : *owner_r;
      if (!fits(rank_tbs[size_t(tb)]))
        return conflict("the thread block owning its connection talks to another peer");
    } else if (local) {
      // Local work joins the thread block of its latest same-rank predecessor (fewest
      // cross-thread-block dependencies), else a thread block of its own.
      for (int p : preds[size_t(i)])
        if (last_tb[size_t(p)] >= 0 && fits(rank_tbs[size_t(last_tb[size_t(p)])]))
          tb = last_tb[size_t(p)];
    }
    // A thread block the program named by hand takes the instruction if it can.
    if (tb < 0 && hint)
      for (size_t t = 0; t < rank_tbs.size() && tb < 0; ++t)
        if (rank_tbs[t].hint == hint) {
          if (!fits(rank_tbs[t])) {
            Conflict c = conflict(fmt::format("thread block {} was asked to take instructions "
                                              "for different peers or channels",
                                              *hint));
            c.by_hand = true;
            return c;
          }
          tb = int(t);
        }
    // Local work without a predecessor shares a local thread block.
    if (tb < 0 && local)
      for (size_t t = 0; t < rank_tbs.size() && tb < 0; ++t)
        if (fits(rank_tbs[t]) && !rank_tbs[t].send_peer && !rank_tbs[t].recv_peer)
          tb = int(t);
    // Otherwise a new connection opens a new thread block: msccl-tools' auto policy of separate
    // send and receive thread blocks unless an instruction is fused. One thread block that sends
    // s, s, s and receives r, r, r from one peer holds 2 messages per FIFO with Simple and
    // deadlocks at large sizes (docs/semantics.md, "FIFOs"); apart, they never wait on each other.
    if (tb < 0) {
      rank_tbs.push_back({std::nullopt, std::nullopt, ch, hint, {}});
      tb = int(rank_tbs.size()) - 1;
    }
    ThreadBlockPlan &t = rank_tbs[size_t(tb)];
    if (in.send_peer) {
      t.send_peer = in.send_peer;
      send_owner[{in.rank.value(), in.send_peer->value(), ch}] = tb;
    }
    if (in.recv_peer) {
      t.recv_peer = in.recv_peer;
      recv_owner[{in.rank.value(), in.recv_peer->value(), ch}] = tb;
    }
    t.steps.push_back(i);
    in.thread_block = tb;
    in.channel = t.channel;
    last_tb[size_t(i)] = tb;
  }
  return std::nullopt;
}

} // namespace syncoll::lowering::detail
