#include "lowering/cuda/instruction_table.h"

#include "model/invariant.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace syncoll::backend {

ExecutableProgram ExecutableProgram::lower(const verifier::VerifiedProgram &verified) {
  return detail::lower_unchecked(verified.program(), verified.collective());
}

ExecutableProgram detail::lower_unchecked(const Program &program,
                                          const CollectiveSpec &collective) {
  ExecutableProgram e(program, collective);
  const Program &p = e.program_;
  std::vector<int> first_block(size_t(p.num_ranks()), 0);
  for (const RankProgram &rp : p.ranks()) {
    first_block[rp.rank.index()] = int(e.blocks_.size());
    for (const ThreadBlock &tb : rp.thread_blocks) {
      BlockTable b;
      b.rank = rp.rank;
      b.tb = tb.id;
      e.blocks_.push_back(std::move(b));
    }
  }
  std::map<std::tuple<int, int, int>, int> connection_index;
  auto connection = [&](RankId sender, RankId receiver, ChannelId channel) {
    auto [it, inserted] =
        connection_index.emplace(std::make_tuple(sender.value(), receiver.value(), channel.value()),
                                 int(e.connections_.size()));
    if (inserted)
      e.connections_.push_back({sender, receiver, channel});
    return it->second;
  };
  for (const RankProgram &rp : p.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks) {
      BlockTable &b = e.blocks_[size_t(first_block[rp.rank.index()] + tb.id.value())];
      for (const Instruction &in : tb.steps) {
        StepRecord s;
        s.op = in.op;
        s.src_buffer = in.src.buffer;
        s.src_offset = in.src.offset;
        s.dst_buffer = in.dst.buffer;
        s.dst_offset = in.dst.offset;
        s.count = in.count;
        s.publishes = in.has_dep;
        if (in.dependency) {
          s.dependency_block = first_block[rp.rank.index()] + in.dependency->tb.value();
          s.dependency_step = in.dependency->step.value();
        }
        // Program::create guarantees the peers a step's connections need.
        if (op_sends(in.op) && b.send_connection < 0)
          b.send_connection = connection(rp.rank, *tb.send_peer, tb.channel);
        if (op_receives(in.op) && b.recv_connection < 0)
          b.recv_connection = connection(*tb.recv_peer, rp.rank, tb.channel);
        b.steps.push_back(s);
      }
      e.longest_ = std::max(e.longest_, int(b.steps.size()));
    }
  return e;
}

} // namespace syncoll::backend
