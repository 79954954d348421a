#include "testing/programs.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "nccl/algorithms.h"

namespace syncoll::testing {
namespace {

// Appends steps to a thread block with the position as `s`.

BufferRef in(int k) {
  return {BufferKind::Input, k};
}
BufferRef out(int k) {
  return {BufferKind::Output, k};
}
BufferRef scratch(int k) {
  return {BufferKind::Scratch, k};
}

Program finish(ProgramDraft d) {
  auto p = Program::create(std::move(d));
  SYNCOLL_INVARIANT(p.has_value(), "test program failed validation");
  return *std::move(p);
}

} // namespace

// NCCL's ring schedules live in nccl/algorithms; the tests use them along 0, 1, ..., n-1.
Program ring_program(CollectiveKind kind, int n, int channels, Protocol proto) {
  std::vector<RankId> ring;
  for (int r = 0; r < n; ++r)
    ring.emplace_back(r);
  auto p = nccl::nccl_ring_program(kind, std::vector(size_t(channels), ring), proto);
  SYNCOLL_INVARIANT(p.has_value(), "ring baseline failed validation");
  return *std::move(p);
}

Program declared_in_full(const Program &p, const CollectiveSpec &c) {
  ProgramDraft d = p.draft();
  for (RankProgram &rp : d.ranks) {
    rp.input_chunks = std::max(rp.input_chunks, c.input_chunks());
    rp.output_chunks = std::max(rp.output_chunks, c.output_chunks());
  }
  return finish(std::move(d));
}

Program aliased_buffer_declared_zero(const Program &p, const CollectiveSpec &c) {
  ProgramDraft d = p.draft();
  for (RankProgram &rp : d.ranks) {
    for (ThreadBlock &tb : rp.thread_blocks) {
      std::vector<Instruction> steps = tb.steps.to_vector();
      for (Instruction &in : steps)
        for (BufferRef *ref : {&in.src, &in.dst})
          if (ref->buffer != BufferKind::Scratch && ref->offset >= 0) {
            const AliasedSlot home = in_place_slot(c, rp.rank, ref->buffer, ref->offset);
            *ref = {home.buffer, home.index};
          }
      tb.steps = StepList(steps);
    }
    if (in_place_home(c, BufferKind::Input) != BufferKind::Input)
      rp.input_chunks = 0;
    if (in_place_home(c, BufferKind::Output) != BufferKind::Output)
      rp.output_chunks = 0;
  }
  return finish(std::move(d));
}

ProgramDraft header(const char *name, const char *coll, int ranks, int channels, int chunks,
                    bool in_place, Protocol proto) {
  ProgramDraft d;
  d.name = name;
  d.collective = coll;
  d.protocol = proto;
  d.num_ranks = ranks;
  d.num_channels = channels;
  d.chunks_per_loop = chunks;
  d.in_place = in_place;
  d.out_of_place = !in_place;
  return d;
}

ThreadBlockBuilder thread_block(int id, int send, int recv, int chan) {
  auto peer = [](int r) { return r >= 0 ? std::optional<RankId>(RankId(r)) : std::nullopt; };
  return ThreadBlockBuilder(TbId(id), peer(send), peer(recv), ChannelId(chan));
}

Program ring_allreduce_program(int n, int channels, Protocol proto) {
  return ring_program(CollectiveKind::Allreduce, n, channels, proto);
}

Program ring_allgather_program(int n, int channels, Protocol proto) {
  return ring_program(CollectiveKind::Allgather, n, channels, proto);
}

namespace {

// `wait_alone`: the final sends wait for the reduction even when it is a single step. Without it
// (the seeded bug of broken_allpairs_allreduce_program) 2 ranks race.
Program allpairs_allreduce(int n, bool wait_alone, const char *name) {
  ProgramDraft d = header(name, "allreduce", n, 1, n, true, Protocol::Simple);
  for (int r = 0; r < n; ++r) {
    RankProgram rp{RankId(r), n, n, n, {}};
    const int reducer = n - 1; // thread blocks 0..n-2 talk to the peers, n-1 reduces
    std::vector<int> peers;
    for (int p = 0; p < n; ++p)
      if (p != r)
        peers.push_back(p);
    for (size_t t = 0; t < peers.size(); ++t) {
      const int p = peers[t];
      ThreadBlockBuilder b = thread_block(int(t), p, p, 0);
      b.step(OpType::Send, in(p), in(p));                   // my contribution to chunk p
      b.step(OpType::Recv, in(r), scratch(p), 1, {}, true); // p's contribution to chunk r
      std::optional<Dependency> reduced = Dependency{TbId(reducer), StepIndex(n - 2)};
      if (n == 2 && !wait_alone)
        reduced.reset();
      b.step(OpType::Send, in(r), in(r), 1, reduced);
      b.step(OpType::Recv, in(p), in(p)); // the reduced chunk p
      rp.thread_blocks.push_back(b.take());
    }
    ThreadBlockBuilder red = thread_block(reducer, -1, -1, 0);
    for (size_t t = 0; t < peers.size(); ++t)
      red.step(OpType::Reduce, scratch(peers[t]), in(r), 1, Dependency{TbId(int(t)), StepIndex(1)},
               t + 1 == peers.size());
    rp.thread_blocks.push_back(red.take());
    d.ranks.push_back(std::move(rp));
  }
  return finish(std::move(d));
}

} // namespace

Program allpairs_allreduce_program(int n) {
  return allpairs_allreduce(n, true, "allpairs_allreduce");
}

Program broken_allpairs_allreduce_program(int n) {
  return allpairs_allreduce(n, false, "broken_allpairs_allreduce");
}

Program recursive_doubling_allgather_program(int n) {
  int rounds = 0;
  while ((1 << rounds) < n)
    ++rounds;
  SYNCOLL_INVARIANT((1 << rounds) == n && n >= 2, "recursive doubling needs a power of two");
  ProgramDraft d =
      header("recursive_doubling_allgather", "allgather", n, 1, n, false, Protocol::Simple);
  for (int r = 0; r < n; ++r) {
    RankProgram rp{RankId(r), 1, n, 0, {}};
    int previous_last = -1; // last step of the previous round, which publishes
    for (int k = 0; k < rounds; ++k) {
      const int partner = r ^ (1 << k), size = 1 << k;
      const int base = r & ~(size - 1), partner_base = partner & ~(size - 1);
      ThreadBlockBuilder b = thread_block(k, partner, partner, 0);
      // The round's first step waits for all of the previous round: its receive wrote half of
      // the block this round sends.
      std::optional<Dependency> after_previous;
      if (k == 0)
        b.step(OpType::Copy, in(0), out(r));
      else
        after_previous = Dependency{TbId(k - 1), StepIndex(previous_last)};
      // Head-to-head sends of `size` chunks deadlock once large messages split them into more
      // transfers than a FIFO holds, so the lower rank of each pair sends first and the higher
      // one receives first.
      if (r < partner) {
        b.step(OpType::Send, out(base), out(base), size, after_previous);
        previous_last = b.step(OpType::Recv, out(partner_base), out(partner_base), size, {}, true);
      } else {
        b.step(OpType::Recv, out(partner_base), out(partner_base), size, after_previous);
        previous_last = b.step(OpType::Send, out(base), out(base), size, {}, true);
      }
      rp.thread_blocks.push_back(b.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  return finish(std::move(d));
}

Program two_step_alltoall_program(int nodes, int gpus) {
  const int n = nodes * gpus;
  ProgramDraft d = header("two_step_alltoall", "alltoall", n, 2, n, false, Protocol::Simple);
  for (int r = 0; r < n; ++r) {
    const int node = r / gpus, g = r % gpus;
    RankProgram rp{RankId(r), n, n, n, {}};
    int next_id = 0;
    std::vector<int> cross_tb(size_t(nodes), -1); // thread block exchanging with node m
    // Direct exchange with the other GPUs of this node, channel 0.
    for (int h = 0; h < gpus; ++h) {
      if (h == g)
        continue;
      const int p = node * gpus + h;
      ThreadBlockBuilder b = thread_block(next_id++, p, p, 0);
      b.step(OpType::Send, in(p), out(r));
      b.step(OpType::Recv, in(r), out(p));
      rp.thread_blocks.push_back(b.take());
    }
    // One transfer per remote node to the GPU with my local index there, channel 0.
    for (int m = 0; m < nodes; ++m) {
      if (m == node)
        continue;
      const int q = m * gpus + g;
      cross_tb[size_t(m)] = next_id;
      ThreadBlockBuilder b = thread_block(next_id++, q, q, 0);
      // Lower rank sends first: head-to-head sends of `gpus` chunks would deadlock for large
      // messages, which split them into `gpus` transfers.
      if (r < q) {
        b.step(OpType::Send, in(m * gpus), scratch(node * gpus), gpus);
        b.step(OpType::Recv, in(node * gpus), scratch(m * gpus), gpus, {}, true);
      } else {
        b.step(OpType::Recv, in(node * gpus), scratch(m * gpus), gpus);
        b.step(OpType::Send, in(m * gpus), scratch(node * gpus), gpus, {}, true);
      }
      rp.thread_blocks.push_back(b.take());
    }
    // Forward what remote nodes sent for my node's other GPUs, channel 1: one sending and one
    // receiving thread block per local peer, so no FIFO holds more than it must.
    for (int h = 0; h < gpus; ++h) {
      if (h == g)
        continue;
      const int t = node * gpus + h;
      ThreadBlockBuilder send = thread_block(next_id++, t, -1, 1);
      for (int m = 0; m < nodes; ++m)
        if (m != node)
          send.step(OpType::Send, scratch(m * gpus + h), out(m * gpus + g), 1,
                    Dependency{TbId(cross_tb[size_t(m)]), StepIndex(1)});
      rp.thread_blocks.push_back(send.take());
      ThreadBlockBuilder recv = thread_block(next_id++, -1, t, 1);
      for (int m = 0; m < nodes; ++m)
        if (m != node)
          recv.step(OpType::Recv, scratch(0), out(m * gpus + h));
      rp.thread_blocks.push_back(recv.take());
    }
    // Local moves: my own chunk, and what remote nodes sent for me.
    ThreadBlockBuilder local = thread_block(next_id++, -1, -1, 0);
    local.step(OpType::Copy, in(r), out(r));
    for (int m = 0; m < nodes; ++m)
      if (m != node)
        local.step(OpType::Copy, scratch(m * gpus + g), out(m * gpus + g), 1,
                   Dependency{TbId(cross_tb[size_t(m)]), StepIndex(1)});
    rp.thread_blocks.push_back(local.take());
    if (nodes == 1)
      rp.scratch_chunks = 0;
    d.ranks.push_back(std::move(rp));
  }
  return finish(std::move(d));
}

} // namespace syncoll::testing
