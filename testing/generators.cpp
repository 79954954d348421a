#include "testing/generators.h"

#include "testing/programs.h"

#include <map>
#include <set>

namespace syncoll::testing {

rc::Gen<Topology> gen_topology() {
  return rc::gen::exec([] {
    TopologyDraft d;
    d.num_ranks = *rc::gen::inRange(2, 13);
    d.name = "random" + std::to_string(*rc::gen::inRange(0, 1000));
    std::set<std::pair<int, int>> used;
    const int attempts = *rc::gen::inRange(0, d.num_ranks * d.num_ranks);
    for (int i = 0; i < attempts; ++i) {
      int a = *rc::gen::inRange(0, d.num_ranks);
      int b = *rc::gen::inRange(0, d.num_ranks);
      if (a == b || !used.insert({a, b}).second)
        continue;
      // Latencies with fractional parts exercise the exact round trip of doubles.
      double alpha = *rc::gen::inRange(0, 100000) / 64.0;
      double bw = *rc::gen::inRange(1, 400000) / 1000.0;
      d.links.push_back(
          {RankId(a), RankId(b), *rc::gen::inRange(1, 5), Nanoseconds{alpha}, BytesPerNs{bw}});
    }
    if (!d.links.empty()) {
      const int relations = *rc::gen::inRange(0, 4);
      for (int r = 0; r < relations; ++r) {
        TopologyDraft::Relation rel{"rel" + std::to_string(r), {}, *rc::gen::inRange(1, 8)};
        std::set<size_t> picked;
        const int members = *rc::gen::inRange(1, int(d.links.size()) + 1);
        for (int m = 0; m < members; ++m)
          picked.insert(size_t(*rc::gen::inRange(0, int(d.links.size()))));
        for (size_t k : picked)
          rel.links.emplace_back(d.links[k].src, d.links[k].dst);
        d.relations.push_back(std::move(rel));
      }
    }
    if (*rc::gen::arbitrary<bool>()) {
      for (int nodes = 2; nodes <= d.num_ranks; ++nodes) {
        if (d.num_ranks % nodes == 0) {
          d.hierarchy.levels = {{"node", nodes}, {"gpu", d.num_ranks / nodes}};
          if (*rc::gen::arbitrary<bool>()) {
            d.hierarchy.nics_per_node = *rc::gen::inRange(1, 4);
            d.hierarchy.nic_bandwidth = BytesPerNs{*rc::gen::inRange(1, 100) * 0.5};
          }
          break;
        }
      }
    }
    auto t = Topology::create(std::move(d));
    RC_ASSERT(t.has_value());
    return *t;
  });
}

rc::Gen<Program> gen_program() {
  return rc::gen::exec([] {
    static constexpr const char *kColls[] = {"allreduce", "allgather", "reducescatter",
                                             "alltoall",  "broadcast", "custom"};
    static constexpr OpType kOps[] = {
        OpType::Send,           OpType::Recv,           OpType::RecvCopySend,
        OpType::RecvReduceSend, OpType::RecvReduceCopy, OpType::RecvReduceCopySend,
        OpType::Copy,           OpType::Reduce,         OpType::Nop};
    ProgramDraft d;
    d.name = "random-" + std::to_string(*rc::gen::inRange(0, 100));
    d.collective = kColls[*rc::gen::inRange(0, 6)];
    d.protocol = *rc::gen::element(Protocol::Simple, Protocol::LL, Protocol::LL128);
    d.num_ranks = *rc::gen::inRange(1, 6);
    d.num_channels = *rc::gen::inRange(1, 5);
    d.chunks_per_loop = *rc::gen::inRange(1, 33);
    d.in_place = *rc::gen::arbitrary<bool>();
    d.out_of_place = *rc::gen::arbitrary<bool>();
    d.min_bytes = *rc::gen::inRange(0, 1 << 20);
    d.max_bytes = *rc::gen::element<int64_t>(0, int64_t(1) << 30);
    if (*rc::gen::arbitrary<bool>())
      d.num_threads = 32 * *rc::gen::inRange(1, 20);
    for (int r = 0; r < d.num_ranks; ++r) {
      RankProgram rp;
      rp.rank = RankId(r);
      rp.input_chunks = *rc::gen::inRange(1, 9);
      rp.output_chunks = *rc::gen::inRange(1, 9);
      rp.scratch_chunks = *rc::gen::inRange(0, 5);
      const int tbs = *rc::gen::inRange(0, 4);
      for (int t = 0; t < tbs; ++t) {
        ThreadBlock tb;
        tb.id = TbId(t);
        tb.channel = ChannelId(*rc::gen::inRange(0, d.num_channels));
        if (d.num_ranks > 1 && *rc::gen::arbitrary<bool>())
          tb.send_peer = RankId((r + *rc::gen::inRange(1, d.num_ranks)) % d.num_ranks);
        if (d.num_ranks > 1 && *rc::gen::arbitrary<bool>())
          tb.recv_peer = RankId((r + *rc::gen::inRange(1, d.num_ranks)) % d.num_ranks);
        const int steps = *rc::gen::inRange(0, 7);
        for (int k = 0; k < steps; ++k) {
          Instruction in;
          // Only step types the thread block's peers allow; chosen from a list rather than by
          // retrying, which would not terminate while rapidcheck shrinks.
          std::vector<OpType> allowed;
          for (OpType op : kOps)
            if ((!op_sends(op) || tb.send_peer) && (!op_receives(op) || tb.recv_peer))
              allowed.push_back(op);
          in.op = *rc::gen::elementOf(allowed);
          auto buffer = [&](BufferKind &kind, int &offset) {
            kind = rp.scratch_chunks > 0 ? *rc::gen::element(BufferKind::Input, BufferKind::Output,
                                                             BufferKind::Scratch)
                                         : *rc::gen::element(BufferKind::Input, BufferKind::Output);
            const int size = rp.chunks(kind);
            offset = *rc::gen::inRange(0, size);
          };
          buffer(in.src.buffer, in.src.offset);
          buffer(in.dst.buffer, in.dst.offset);
          in.count = in.op == OpType::Nop ? 0 : *rc::gen::inRange(1, 4);
          // A nop carries a dependency; a real step right after one must carry its own.
          bool after_nop = !tb.steps.empty() && tb.steps.back().op == OpType::Nop;
          if (in.op == OpType::Nop || after_nop || *rc::gen::arbitrary<bool>())
            in.dependency =
                Dependency{TbId(*rc::gen::inRange(0, tbs)), StepIndex(*rc::gen::inRange(0, 7))};
          in.has_dep = *rc::gen::arbitrary<bool>();
          in.declared_index = k;
          tb.steps.push_back(in);
        }
        rp.thread_blocks.push_back(std::move(tb));
      }
      d.ranks.push_back(std::move(rp));
    }
    auto p = Program::create(std::move(d));
    RC_ASSERT(p.has_value());
    return *p;
  });
}

rc::Gen<Program> gen_connected_program(bool share_connections) {
  return rc::gen::exec([share_connections] {
    const int ranks = *rc::gen::inRange(2, 4);
    const int channels = *rc::gen::inRange(1, 3);
    struct TbPlan {
      int rank = 0, id = 0, send = -1, recv = -1, chan = 0;
      std::vector<char> tokens; // S push, R pop, F fused (pop + push), L local
    };
    std::vector<TbPlan> tbs;
    std::set<std::tuple<int, int, int, int>> used; // (rank, chan, peer, direction)
    for (int r = 0; r < ranks; ++r) {
      const int count = *rc::gen::inRange(1, 4);
      for (int t = 0; t < count; ++t) {
        TbPlan plan;
        plan.rank = r;
        plan.id = t;
        plan.chan = *rc::gen::inRange(0, channels);
        for (int dir = 0; dir < 2; ++dir) {
          if (!*rc::gen::arbitrary<bool>())
            continue;
          const int peer = (r + *rc::gen::inRange(1, ranks)) % ranks;
          if (!used.insert({r, plan.chan, peer, dir}).second && !share_connections)
            continue;
          (dir == 0 ? plan.send : plan.recv) = peer;
        }
        const int length = *rc::gen::inRange(0, 9);
        for (int k = 0; k < length; ++k) {
          // Communication weighted over local steps, so FIFOs fill and regimes differ.
          std::vector<char> options = {'L'};
          if (plan.send >= 0)
            options.insert(options.end(), {'S', 'S', 'S'});
          if (plan.recv >= 0)
            options.insert(options.end(), {'R', 'R', 'R'});
          if (plan.send >= 0 && plan.recv >= 0)
            options.push_back('F');
          plan.tokens.push_back(*rc::gen::elementOf(options));
        }
        tbs.push_back(std::move(plan));
      }
    }
    // Balance every connection: pushes of its senders = pops of its receivers.
    std::map<std::tuple<int, int, int>, std::pair<std::vector<size_t>, std::vector<size_t>>> conns;
    for (size_t i = 0; i < tbs.size(); ++i) {
      if (tbs[i].send >= 0)
        conns[{tbs[i].rank, tbs[i].send, tbs[i].chan}].first.push_back(i);
      if (tbs[i].recv >= 0)
        conns[{tbs[i].recv, tbs[i].rank, tbs[i].chan}].second.push_back(i);
    }
    auto count = [&](size_t i, bool pushes) {
      int n = 0;
      for (char c : tbs[i].tokens)
        n += c == 'F' || c == (pushes ? 'S' : 'R');
      return n;
    };
    // Messages pushed and popped on a connection, over all its thread blocks.
    auto traffic = [&](const std::vector<size_t> &pushers, const std::vector<size_t> &poppers) {
      std::pair<int, int> t{0, 0};
      for (size_t i : pushers)
        t.first += count(i, true);
      for (size_t i : poppers)
        t.second += count(i, false);
      return t;
    };
    for (auto &[key, ends] : conns) {
      auto &[pushers, poppers] = ends;
      auto [pushes, pops] = traffic(pushers, poppers);
      if (poppers.empty() || pushers.empty()) {
        // Nobody on the other end: turn this connection's traffic into local steps.
        for (size_t i : pushers)
          for (char &c : tbs[i].tokens)
            c = c == 'S' ? 'L' : c == 'F' ? 'R' : c;
        for (size_t i : poppers)
          for (char &c : tbs[i].tokens)
            c = c == 'R' ? 'L' : c == 'F' ? 'S' : c;
        continue;
      }
      for (; pushes < pops; ++pushes) {
        auto &tokens = tbs[pushers.front()].tokens;
        tokens.insert(tokens.begin() + *rc::gen::inRange<long>(0, long(tokens.size()) + 1), 'S');
      }
      for (; pops < pushes; ++pops) {
        auto &tokens = tbs[poppers.front()].tokens;
        tokens.insert(tokens.begin() + *rc::gen::inRange<long>(0, long(tokens.size()) + 1), 'R');
      }
    }
    // A second pass: the conversions above may have unbalanced other connections, so convert
    // any remaining surplus on either side into local steps.
    for (auto &[key, ends] : conns) {
      auto &[pushers, poppers] = ends;
      auto [pushes, pops] = traffic(pushers, poppers);
      for (size_t i : pushers)
        for (auto it = tbs[i].tokens.rbegin(); it != tbs[i].tokens.rend() && pushes > pops; ++it)
          if (*it == 'S')
            *it = 'L', --pushes;
      for (size_t i : poppers)
        for (auto it = tbs[i].tokens.rbegin(); it != tbs[i].tokens.rend() && pops > pushes; ++it)
          if (*it == 'R')
            *it = 'L', --pops;
      if (pushes != pops) {
        // Fused steps on both sides are left: drop the whole connection's traffic.
        for (size_t i : pushers)
          for (char &c : tbs[i].tokens)
            c = c == 'S' ? 'L' : c;
        for (size_t i : poppers)
          for (char &c : tbs[i].tokens)
            c = c == 'R' ? 'L' : c;
      }
    }

    ProgramDraft d;
    d.name = "connected";
    d.collective = "custom";
    d.num_ranks = ranks;
    d.num_channels = channels;
    d.chunks_per_loop = 4;
    for (int r = 0; r < ranks; ++r)
      d.ranks.push_back({RankId(r), 4, 4, 4, {}});
    for (const TbPlan &plan : tbs) {
      ThreadBlockBuilder tb = thread_block(plan.id, plan.send, plan.recv, plan.chan);
      for (char c : plan.tokens) {
        OpType op = OpType::Nop;
        switch (c) {
        case 'S':
          op = OpType::Send;
          break;
        case 'R':
          op = OpType::Recv;
          break;
        case 'F':
          op = *rc::gen::element(OpType::RecvCopySend, OpType::RecvReduceSend,
                                 OpType::RecvReduceCopySend);
          break;
        default:
          op = *rc::gen::element(OpType::Copy, OpType::Reduce, OpType::Nop);
          break;
        }
        const int chunks = op == OpType::Nop ? 0 : *rc::gen::inRange(1, 4);
        // Offsets 0..1 fit every count up to 3 in buffers of 4 chunks.
        const BufferRef src{*rc::gen::element(BufferKind::Input, BufferKind::Scratch),
                            *rc::gen::inRange(0, 2)};
        const BufferRef dst{*rc::gen::element(BufferKind::Output, BufferKind::Scratch),
                            *rc::gen::inRange(0, 2)};
        const int rank_tbs = int(d.ranks[size_t(plan.rank)].thread_blocks.size()) + 1;
        const auto &steps = tb.get().steps;
        const bool after_nop = !steps.empty() && steps.back().op == OpType::Nop;
        std::optional<Dependency> dep;
        if (op == OpType::Nop || after_nop || *rc::gen::inRange(0, 8) == 0)
          dep =
              Dependency{TbId(*rc::gen::inRange(0, rank_tbs)), StepIndex(*rc::gen::inRange(0, 4))};
        tb.step(op, src, dst, chunks, dep, *rc::gen::inRange(0, 3) != 0);
      }
      d.ranks[size_t(plan.rank)].thread_blocks.push_back(tb.take());
    }
    // Dependencies may name thread blocks created later on the same rank; keep the ones that
    // exist so that every program is one the executor's parser accepts.
    for (auto &rp : d.ranks)
      for (auto &tb : rp.thread_blocks) {
        std::vector<Instruction> steps = tb.steps.to_vector();
        for (auto &in : steps)
          if (in.dependency && in.dependency->tb.index() >= rp.thread_blocks.size())
            in.dependency->tb = TbId(0);
        tb.steps = StepList(steps);
      }
    auto p = Program::create(std::move(d));
    RC_ASSERT(p.has_value());
    return *p;
  });
}

} // namespace syncoll::testing
