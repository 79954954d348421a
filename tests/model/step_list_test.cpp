// A thread block's steps as runs: the runs hold exactly the steps given, however they were
// appended, and the runs are maximal (docs/formats.md, "Programs in memory").
#include "model/program.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll {
namespace {

Instruction step(OpType op, int src, int dst, int index) {
  Instruction in;
  in.op = op;
  in.src = {BufferKind::Input, src};
  in.dst = {BufferKind::Output, dst};
  in.declared_index = index;
  return in;
}

// Loop-shaped steps: a few runs of random ops, strides and lengths, back to back, with `s`
// numbered by position (so runs of the same op and strides may meet and merge).
struct Generated {
  std::vector<Instruction> steps;
  std::vector<std::pair<StepRun, int>> runs; ///< as generated: (run, length)
};

Generated gen_loops() {
  Generated g;
  const int runs = *rc::gen::inRange(0, 8);
  for (int r = 0; r < runs; ++r) {
    Instruction first =
        step(*rc::gen::element(OpType::Send, OpType::RecvReduceSend, OpType::Nop),
             *rc::gen::inRange(-1, 40), *rc::gen::inRange(-1, 40), int(g.steps.size()));
    first.count = *rc::gen::inRange(1, 3);
    if (*rc::gen::arbitrary<bool>())
      first.dependency =
          Dependency{TbId(*rc::gen::inRange(0, 2)), StepIndex(*rc::gen::inRange(0, 9))};
    first.has_dep = *rc::gen::arbitrary<bool>();
    const StepRun run{first, *rc::gen::inRange(-2, 3), *rc::gen::inRange(-2, 3),
                      *rc::gen::inRange(0, 2), 1};
    const int length = *rc::gen::inRange(1, 12);
    for (int i = 0; i < length; ++i)
      g.steps.push_back(run.at(i));
    g.runs.emplace_back(run, length);
  }
  return g;
}

RC_GTEST_PROP(StepListProperty, RunsHoldExactlyTheStepsAppended, ()) {
  const Generated g = gen_loops();
  const StepList pushed(g.steps);
  StepList appended;
  for (const auto &[run, length] : g.runs)
    appended.append(run, length);
  RC_ASSERT(pushed == appended);
  RC_ASSERT(pushed.size() == g.steps.size());
  RC_ASSERT(pushed.to_vector() == g.steps);
  for (size_t k = 0; k < g.steps.size(); ++k)
    RC_ASSERT(pushed[k] == g.steps[k]);
  RC_ASSERT(pushed.runs().size() <= g.runs.size());
  // Maximal: no run's next step is where the following run starts.
  const auto runs = pushed.runs();
  for (size_t r = 0; r + 1 < runs.size(); ++r)
    RC_ASSERT(!(runs[r].length >= 2 && runs[r].at(runs[r].length) == runs[r + 1].first));
}

RC_GTEST_PROP(StepListProperty, ListsAreEqualExactlyWhenTheirStepsAre, ()) {
  const Generated g = gen_loops();
  RC_PRE(!g.steps.empty());
  std::vector<Instruction> changed = g.steps;
  const size_t k = *rc::gen::inRange<size_t>(0, changed.size());
  changed[k].dst.offset += *rc::gen::element(0, 1);
  RC_ASSERT((StepList(changed) == StepList(g.steps)) == (changed == g.steps));
}

TEST(StepListTest, ALoopIsOneRun) {
  StepList steps;
  for (int k = 0; k < 1000; ++k)
    steps.push_back(step(OpType::RecvReduceSend, 999 - k, 999 - k, k));
  ASSERT_EQ(steps.runs().size(), 1u);
  EXPECT_EQ(steps.size(), 1000u);
  EXPECT_EQ(steps[500].src.offset, 499);
  EXPECT_EQ(steps.back().declared_index, 999);
}

TEST(StepListTest, ProgramCreateNamesTheFirstBadStepInsideARun) {
  // Ten sends of chunks 0..9 from a 5-chunk input: one run, bad from step 5 on.
  ThreadBlockBuilder b(TbId(0), RankId(1), std::nullopt, ChannelId(0));
  b.steps(OpType::Send, {BufferKind::Input, 0}, 1, {BufferKind::Output, 0}, 1, 10);
  ProgramDraft d;
  d.name = "bad";
  d.collective = "allgather";
  d.num_ranks = 2;
  for (int r = 0; r < 2; ++r) {
    RankProgram rp;
    rp.rank = RankId(r);
    rp.input_chunks = 5;
    rp.output_chunks = 10;
    if (r == 0)
      rp.thread_blocks.push_back(b.get());
    d.ranks.push_back(std::move(rp));
  }
  ASSERT_EQ(b.get().steps.runs().size(), 1u);
  auto p = Program::create(d);
  ASSERT_FALSE(p);
  ASSERT_EQ(p.error().items().size(), 5u);
  EXPECT_NE(p.error().items().front().message.find("step 5: srcoff 5 is past the end"),
            std::string::npos)
      << p.error().to_string();
}

} // namespace
} // namespace syncoll
