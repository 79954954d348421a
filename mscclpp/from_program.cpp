#include "mscclpp/from_program.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll::mscclpp {
namespace {

PlanBuffer plan_buffer(BufferKind b) {
  switch (b) {
  case BufferKind::Input:
    return PlanBuffer::Input;
  case BufferKind::Output:
    return PlanBuffer::Output;
  case BufferKind::Scratch:
    return PlanBuffer::Scratch;
  }
  SYNCOLL_UNREACHABLE("a buffer kind without a plan buffer");
}

BufferSlice local(BufferRef ref, int count) {
  return {plan_buffer(ref.buffer), std::nullopt, std::nullopt, ref.offset, count, {}};
}
BufferSlice scratch(int index, int count) {
  return {PlanBuffer::Scratch, std::nullopt, std::nullopt, index, count, {}};
}

// A connection: messages from `sender` to `receiver` on a channel.
struct Connection {
  int sender = 0, receiver = 0, channel = 0;
  auto operator<=>(const Connection &) const = default;
};

// Every connection's messages: their count, largest size and first slot in the receiver's
// scratch (after the program's own scratch).
struct Slots {
  std::map<Connection, int> messages, largest, base;
};

Slots count_messages(const Program &p) {
  Slots s;
  for (const RankProgram &r : p.ranks())
    for (const ThreadBlock &tb : r.thread_blocks)
      for (const Instruction &in : tb.steps)
        if (syncoll::op_traits(in.op).sends) {
          const Connection c{r.rank.value(), tb.send_peer->value(), tb.channel.value()};
          ++s.messages[c];
          s.largest[c] = std::max(s.largest[c], in.count);
        }
  std::vector<int> next(size_t(p.num_ranks()), 0);
  for (const RankProgram &r : p.ranks())
    next[r.rank.index()] = r.scratch_chunks;
  for (const auto &[c, n] : s.messages) {
    s.base[c] = next[size_t(c.receiver)];
    next[size_t(c.receiver)] += n * s.largest[c];
  }
  return s;
}

PlanOp channel_op(OpKind kind, ChannelKind channel_kind, int channel) {
  PlanOp op;
  op.kind = kind;
  op.channel_kind = channel_kind;
  op.channels = {channel};
  return op;
}

} // namespace

Expected<ExecutionPlan> plan_from_program(const verifier::VerifiedProgram &verified,
                                          int gpus_per_node) {
  const Program &p = verified.program();
  const CollectiveKind kind = verified.collective().kind();
  if (!is_mscclpp_collective(kind))
    return fail({}, fmt::format("MSCCL++'s executor runs allreduce, allgather, reducescatter, "
                                "broadcast and alltoall plans; '{}' is {}",
                                p.name(), collective_kind_name(kind)));
  if (p.protocol() != Protocol::Simple)
    return fail({},
                fmt::format("'{}' runs {}; its MSCCL++ plan moves data with puts and "
                            "signals (Simple), not {}'s flags: lower it with --protocol Simple",
                            p.name(), protocol_name(p.protocol()), protocol_name(p.protocol())));
  if (kind == CollectiveKind::Broadcast && verified.collective().root() != RankId(0))
    return fail({}, "MSCCL++'s broadcast plans start at GPU 0");
  const Slots slots = count_messages(p);
  ExecutionPlan plan;
  plan.name = p.name();
  plan.collective = kind;
  plan.in_place = p.in_place();
  plan.double_scratch = true;
  const int n = p.num_ranks();
  plan.gpus.resize(static_cast<size_t>(n));
  // GPUs of one node reach each other's memory; across nodes a proxy carries the data.
  auto channel_kind = [gpus_per_node](int a, int b) {
    return gpus_per_node > 0 && a / gpus_per_node != b / gpus_per_node ? ChannelKind::Port
                                                                       : ChannelKind::Memory;
  };
  // Channels between two GPUs: the sender's outgoing connections to the peer, then its incoming
  // ones, so that the m-th channel each way pairs a connection's two ends.
  using PeerChannel = std::map<std::pair<int, int>, int>; // (peer, channel) -> GPU channel
  const size_t ranks = static_cast<size_t>(n);
  std::vector<PeerChannel> out_channel(ranks), in_channel(ranks);
  for (int r = 0; r < n; ++r) {
    PlanGpu &g = plan.gpus[size_t(r)];
    const RankProgram &rp = p.rank(RankId(r));
    g.id = r;
    g.input_chunks = rp.input_chunks;
    g.output_chunks = rp.output_chunks;
    // In place, MSCCL-IR may declare the buffer that lives in the other as 0 chunks; MSCCL++'s
    // executor sizes both.
    if (p.in_place()) {
      if (kind == CollectiveKind::Allgather && g.input_chunks == 0)
        g.input_chunks = g.output_chunks / n;
      else if (kind == CollectiveKind::ReduceScatter && g.output_chunks == 0)
        g.output_chunks = g.input_chunks / n;
      else if (g.output_chunks == 0)
        g.output_chunks = g.input_chunks;
      else if (g.input_chunks == 0)
        g.input_chunks = g.output_chunks;
    }
    g.scratch_chunks = rp.scratch_chunks;
    PlanChannel memory, port;
    memory.kind = ChannelKind::Memory;
    port.kind = ChannelKind::Port;
    for (int peer = 0; peer < n; ++peer) {
      PlanChannel &list = channel_kind(r, peer) == ChannelKind::Port ? port : memory;
      // Both GPUs list the lower-numbered one's connections to the other first.
      for (const bool outgoing : {r<peer, r> peer})
        for (const auto &[c, count] : slots.messages)
          if (outgoing ? c.sender == r && c.receiver == peer
                       : c.receiver == r && c.sender == peer) {
            (outgoing ? out_channel : in_channel)[size_t(r)][{peer, c.channel}] =
                int(list.peers.size());
            list.peers.push_back(peer);
          }
    }
    for (PlanChannel *list : {&memory, &port})
      if (!list->peers.empty())
        g.channels.push_back(*list);
    for (const auto &[c, count] : slots.messages)
      if (c.receiver == r)
        g.scratch_chunks =
            std::max(g.scratch_chunks, slots.base.at(c) + count * slots.largest.at(c));
  }
  // Dependencies as device semaphores, one per dependent step.
  // (thread block, step) -> the semaphores it releases after it, the one it acquires before.
  std::vector<std::map<std::pair<int, int>, std::vector<int>>> releases(ranks);
  std::vector<std::map<std::pair<int, int>, int>> acquires(ranks);
  for (const RankProgram &rp : p.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks) {
      int k = 0;
      for (const Instruction &in : tb.steps) {
        if (in.dependency) {
          const int id = int(plan.gpus[rp.rank.index()].semaphores.size());
          plan.gpus[rp.rank.index()].semaphores.push_back(0);
          releases[rp.rank.index()][{in.dependency->tb.value(), in.dependency->step.value()}]
              .push_back(id);
          acquires[rp.rank.index()][{tb.id.value(), k}] = id;
        }
        ++k;
      }
    }
  std::map<Connection, int> sent, received;
  for (const RankProgram &rp : p.ranks()) {
    const int r = rp.rank.value();
    PlanGpu &g = plan.gpus[size_t(r)];
    // A GPU reaches each peer's scratch it puts into: one remote buffer per such peer.
    std::map<int, int> scratch_of;
    for (const auto &[c, count] : slots.messages)
      if (c.sender == r && !scratch_of.count(c.receiver)) {
        scratch_of[c.receiver] = int(g.remote_buffers.size());
        g.remote_buffers.push_back(
            {c.receiver, PlanBuffer::Scratch, {channel_kind(r, c.receiver)}, {}});
      }
    for (const ThreadBlock &tb : rp.thread_blocks) {
      PlanThreadBlock t;
      t.id = tb.id.value();
      // The thread block's channels of each kind; an op names one by its index among them.
      ThreadBlockChannels memory{ChannelKind::Memory, {}}, port{ChannelKind::Port, {}};
      auto add_channel = [&](int peer, int gpu_channel) {
        ThreadBlockChannels &list = channel_kind(r, peer) == ChannelKind::Port ? port : memory;
        list.ids.push_back(gpu_channel);
        return int(list.ids.size()) - 1;
      };
      int send_channel = -1, recv_channel = -1;
      const ChannelKind send_kind =
          tb.send_peer ? channel_kind(r, tb.send_peer->value()) : ChannelKind::Memory;
      const ChannelKind recv_kind =
          tb.recv_peer ? channel_kind(r, tb.recv_peer->value()) : ChannelKind::Memory;
      if (tb.send_peer &&
          out_channel[size_t(r)].count({tb.send_peer->value(), tb.channel.value()})) {
        send_channel =
            add_channel(tb.send_peer->value(),
                        out_channel[size_t(r)].at({tb.send_peer->value(), tb.channel.value()}));
        t.remote_buffers.push_back({send_kind, {scratch_of.at(tb.send_peer->value())}});
      }
      if (tb.recv_peer && in_channel[size_t(r)].count({tb.recv_peer->value(), tb.channel.value()}))
        recv_channel =
            add_channel(tb.recv_peer->value(),
                        in_channel[size_t(r)].at({tb.recv_peer->value(), tb.channel.value()}));
      for (ThreadBlockChannels *list : {&memory, &port})
        if (!list->ids.empty())
          t.channels.push_back(*list);
      int k = 0;
      for (const Instruction &in : tb.steps) {
        const syncoll::OpTraits &traits = syncoll::op_traits(in.op);
        if (auto a = acquires[size_t(r)].find({t.id, k}); a != acquires[size_t(r)].end()) {
          PlanOp acquire;
          acquire.kind = OpKind::SemAcquire;
          acquire.semaphores = {a->second};
          t.ops.push_back(acquire);
        }
        // What a send puts: the payload's slice here.
        std::optional<BufferSlice> payload;
        if (traits.receives) {
          const Connection c{tb.recv_peer->value(), r, tb.channel.value()};
          const BufferSlice slot =
              scratch(slots.base.at(c) + received[c]++ * slots.largest.at(c), in.count);
          t.ops.push_back(channel_op(OpKind::Wait, recv_kind, recv_channel));
          PlanOp local_op;
          if (traits.reduces) {
            local_op.kind = OpKind::Reduce;
            local_op.src = {local(in.src, in.count), slot};
            local_op.dst = {traits.writes_dst ? local(in.dst, in.count) : slot};
          } else {
            local_op.kind = OpKind::Copy;
            local_op.src = {slot};
            local_op.dst = {local(in.dst, in.count)};
          }
          t.ops.push_back(local_op);
          payload = local_op.dst.front();
        } else if (in.op == OpType::Copy || in.op == OpType::Reduce) {
          PlanOp local_op;
          local_op.kind = in.op == OpType::Copy ? OpKind::Copy : OpKind::Reduce;
          local_op.src = in.op == OpType::Copy
                             ? std::vector{local(in.src, in.count)}
                             : std::vector{local(in.dst, in.count), local(in.src, in.count)};
          local_op.dst = {local(in.dst, in.count)};
          t.ops.push_back(local_op);
        } else if (in.op == OpType::Send) {
          payload = local(in.src, in.count);
        }
        if (traits.sends) {
          const Connection c{r, tb.send_peer->value(), tb.channel.value()};
          // Across nodes the proxy puts, signals after the data, and the thread block waits
          // until it has read the source (which a later step may overwrite).
          PlanOp put = send_kind == ChannelKind::Port
                           ? channel_op(OpKind::PutWithSignalAndFlush, send_kind, send_channel)
                           : channel_op(OpKind::Put, send_kind, send_channel);
          put.src = {*payload};
          put.dst = {{std::nullopt,
                      0,
                      std::nullopt,
                      slots.base.at(c) + sent[c]++ * slots.largest.at(c),
                      in.count,
                      {}}};
          t.ops.push_back(put);
          if (send_kind == ChannelKind::Memory)
            t.ops.push_back(channel_op(OpKind::Signal, send_kind, send_channel));
        }
        if (auto rel = releases[size_t(r)].find({t.id, k}); rel != releases[size_t(r)].end()) {
          PlanOp release;
          release.kind = OpKind::SemRelease;
          release.semaphores = rel->second;
          t.ops.push_back(release);
        }
        ++k;
      }
      g.threadblocks.push_back(std::move(t));
    }
  }
  return plan;
}

} // namespace syncoll::mscclpp
