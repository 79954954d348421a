// Direct puts (zero-copy sends): lowering picks exactly the sends whose receiver leaves the
// destination alone until its receive completes, and programs run to the same outputs with and
// without them.
#include "backend/executor.h"
#include "model/collective_traits.h"
#include "nccl/algorithms.h"

#include <gtest/gtest.h>

namespace syncoll::backend {
namespace {

int receives(const ExecutableProgram &e) {
  int n = 0;
  for (const device::Step &s : e.steps())
    n += (s.bits & device::kReceives) ? 1 : 0;
  return n;
}

void expect_runs_correctly(const ExecutableProgram &e, int64_t size) {
  RunOptions o;
  o.size_bytes = size;
  o.seed = 3;
  auto run = run_on_cpu(e, o);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_TRUE(run->correct()) << (run->first_mismatches.empty() ? "hung"
                                                                : run->first_mismatches.front());
}

TEST(DirectPutsTest, EveryReceiveOfARingAllgatherLandsDirectly) {
  std::vector<RankId> ring{RankId(0), RankId(2), RankId(1), RankId(3)};
  auto p = nccl::nccl_ring_program(CollectiveKind::Allgather, {ring, ring}, Protocol::Simple);
  ASSERT_TRUE(p) << p.error().to_string();
  auto verified = verifier::certify(*p, {});
  ASSERT_TRUE(verified) << verified.error().to_text();
  const ExecutableProgram direct = ExecutableProgram::lower(*verified);
  // Each received chunk of the output is touched by nothing but its receive (and, for rcs, the
  // receive's own forwarding).
  EXPECT_EQ(direct.direct_puts(), receives(direct));
  for (const device::Step &s : direct.steps())
    if (s.bits & device::kPutsDirect) {
      EXPECT_GE(s.put, 0);
    }
  expect_runs_correctly(direct, 4 * 8 * 1024);
  EXPECT_EQ(ExecutableProgram::lower(*verified, {.direct_puts = false}).direct_puts(), 0);
}

TEST(DirectPutsTest, LLMessagesAlwaysGoThroughTheFifo) {
  std::vector<RankId> ring{RankId(0), RankId(1), RankId(2)};
  auto p = nccl::nccl_ring_program(CollectiveKind::Allgather, {ring}, Protocol::LL);
  ASSERT_TRUE(p);
  auto verified = verifier::certify(*p, {});
  ASSERT_TRUE(verified) << verified.error().to_text();
  EXPECT_EQ(ExecutableProgram::lower(*verified).direct_puts(), 0);
}

// Rank 1 receives twice into one scratch chunk and copies it out after each receive. The first
// receive may land directly: everything else that touches the chunk comes after it. The second
// may not: the first copy reads the chunk before it, in the same thread block, and a direct put
// could overwrite the chunk while that copy still reads it.
TEST(DirectPutsTest, AReceiveIntoAChunkReadBeforeItStaysStaged) {
  ProgramDraft d;
  d.name = "scratch reuse";
  d.collective = "allgather";
  d.num_ranks = 2;
  d.chunks_per_loop = 2;
  const BufferRef in0{BufferKind::Input, 0}, out0{BufferKind::Output, 0},
      out1{BufferKind::Output, 1}, scratch{BufferKind::Scratch, 0};
  RankProgram r0;
  r0.rank = RankId(0);
  r0.input_chunks = 1;
  r0.output_chunks = 2;
  {
    ThreadBlockBuilder send(TbId(0), RankId(1), std::nullopt, ChannelId(0));
    send.step(OpType::Send, in0, in0);
    send.step(OpType::Send, in0, in0);
    send.step(OpType::Copy, in0, out0);
    r0.thread_blocks.push_back(send.take());
    ThreadBlockBuilder recv(TbId(1), std::nullopt, RankId(1), ChannelId(0));
    recv.step(OpType::Recv, out1, out1);
    r0.thread_blocks.push_back(recv.take());
  }
  RankProgram r1;
  r1.rank = RankId(1);
  r1.input_chunks = 1;
  r1.output_chunks = 2;
  r1.scratch_chunks = 1;
  {
    ThreadBlockBuilder recv(TbId(0), std::nullopt, RankId(0), ChannelId(0));
    recv.step(OpType::Recv, scratch, scratch);
    recv.step(OpType::Copy, scratch, out0);
    recv.step(OpType::Recv, scratch, scratch);
    recv.step(OpType::Copy, scratch, out0);
    recv.step(OpType::Copy, in0, out1);
    r1.thread_blocks.push_back(recv.take());
    ThreadBlockBuilder send(TbId(1), RankId(0), std::nullopt, ChannelId(0));
    send.step(OpType::Send, in0, in0);
    r1.thread_blocks.push_back(send.take());
  }
  d.ranks = {r0, r1};
  auto p = Program::create(d);
  ASSERT_TRUE(p) << p.error().to_string();
  auto verified = verifier::certify(*p, {});
  ASSERT_TRUE(verified) << verified.error().to_text();
  const ExecutableProgram e = ExecutableProgram::lower(*verified);
  std::vector<uint32_t> rank1_receives;
  for (const device::Block &b : e.blocks())
    for (int k = 0; k < b.num_steps; ++k) {
      const device::Step &s = e.steps()[size_t(b.first_step + k)];
      if (b.rank == 1 && (s.bits & device::kReceives))
        rank1_receives.push_back(s.bits & device::kLandsDirect);
    }
  ASSERT_EQ(rank1_receives.size(), 2u);
  EXPECT_TRUE(rank1_receives[0]);
  EXPECT_FALSE(rank1_receives[1]);
  // Rank 0's receive lands directly in its output.
  EXPECT_EQ(e.direct_puts(), 2);
  expect_runs_correctly(e, 2 * 4 * 3000);
}

} // namespace
} // namespace syncoll::backend
