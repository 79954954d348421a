#include "tests/support/generators.h"

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
            int size = kind == BufferKind::Input    ? rp.input_chunks
                       : kind == BufferKind::Output ? rp.output_chunks
                                                    : rp.scratch_chunks;
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

} // namespace syncoll::testing
