// The CPU executor runs verified programs with real data and gets every defined output right,
// bit for bit, in every count-splitting regime; and an unverified program the verifier says
// deadlocks does hang there, where the counterexample says (docs/semantics.md).
#include "backend/executor.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/mscclir.h"
#include "model/runtime_constants.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "tests/backend/deadlocked_example.h"

#include <gtest/gtest.h>

namespace syncoll::backend {
namespace {

// Three sizes as nccl-tests counts them, one per count-splitting regime of the program: a whole
// step per transfer, a few chunks per transfer, and one chunk per transfer with a second, partial
// tile; with how many of the (type, operator) pairs below each runs (the larger, the fewer).
std::vector<std::pair<int64_t, size_t>> regime_sizes(const CollectiveSpec &spec,
                                                     Protocol protocol) {
  const int64_t chunks = nccl_tests_chunks(spec);
  const int64_t tile = protocol_traits(protocol).executor_tile_bytes;
  const int64_t unit = chunks * 4; // whole elements of every type in every chunk
  return {{unit * 8, 5}, {unit * (tile / 4 / 4 / 4 + 1), 3}, {unit * (tile / 4 + 1), 1}};
}

void expect_correct(const verifier::VerifiedProgram &verified, const std::string &what) {
  const std::pair<DataType, ReduceOp> pairs[] = {{DataType::I32, ReduceOp::Sum},
                                                 {DataType::F32, ReduceOp::Max},
                                                 {DataType::BF16, ReduceOp::Min},
                                                 {DataType::I32, ReduceOp::Prod},
                                                 {DataType::F16, ReduceOp::Sum}};
  // With direct puts where lowering proves them safe, and (one pair per size) all staged. Under
  // ThreadSanitizer one element type per size: the threads synchronize the same way whatever the
  // type, and each run there costs tens of times more.
#ifdef __SANITIZE_THREAD__
  constexpr size_t kMostPairs = 1;
#else
  constexpr size_t kMostPairs = std::size(pairs);
#endif
  const ExecutableProgram direct = ExecutableProgram::lower(verified);
  const ExecutableProgram staged = ExecutableProgram::lower(verified, {.direct_puts = false});
  for (auto [size, all_pairs] : regime_sizes(direct.collective(), direct.program().protocol()))
    for (size_t p = 0, how_many = std::min(all_pairs, kMostPairs); p <= how_many; ++p) {
      const ExecutableProgram &e = p < how_many ? direct : staged;
      const auto [type, op] = pairs[p < how_many ? p : 0];
      RunOptions o;
      o.size_bytes = size;
      o.type = type;
      o.op = op;
      o.seed = 7;
      auto run = run_on_cpu(e, o);
      ASSERT_TRUE(run) << what << ": " << run.error().to_string();
      EXPECT_TRUE(run->completed) << what << " hung at " << size << " B"
                                  << (&e == &staged ? " (staged)" : "");
      EXPECT_EQ(run->mismatches, 0u)
          << what << " at " << size << " B, " << data_type_name(type) << " " << reduce_op_name(op)
          << ": " << (run->first_mismatches.empty() ? "" : run->first_mismatches.front());
      EXPECT_GT(run->elements_checked, 0u) << what;
    }
}

// One test per example program, so that ctest runs them side by side (the executor's threads
// keep about one core busy, and under ThreadSanitizer all of them take minutes).
class CpuExecutorExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuExecutorExampleTest, RunsCorrectlyInEverySplittingRegime) {
  const examples::ProgramExample *ex = examples::find_program_example(GetParam());
  ASSERT_NE(ex, nullptr) << GetParam();
  for (bool in_place : ex->in_place_modes) {
    examples::ExampleParams params;
    params.options.in_place = in_place;
    auto dsl = ex->build(params);
    ASSERT_TRUE(dsl) << ex->name << ": " << dsl.error().to_string();
    auto lowered = lowering::lower(*dsl);
    ASSERT_TRUE(lowered) << ex->name << ": " << lowered.error().to_string();
    ASSERT_TRUE(lowered->verified) << ex->name << "\n" << lowered->verified.error().to_text();
    expect_correct(*lowered->verified, ex->name + (in_place ? " (in place)" : ""));
  }
}

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const examples::ProgramExample &ex : examples::program_examples())
    names.push_back(ex.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryExample, CpuExecutorExampleTest, ::testing::ValuesIn(example_names()),
                         [](const ::testing::TestParamInfo<std::string> &example) {
                           return example.param;
                         });

TEST(CpuExecutorTest, NcclRingBaselinesRunCorrectly) {
  std::vector<RankId> ring;
  for (int r = 0; r < 6; ++r)
    ring.emplace_back((r * 5) % 6);
  for (auto kind : {CollectiveKind::Allreduce, CollectiveKind::Allgather,
                    CollectiveKind::ReduceScatter, CollectiveKind::Broadcast}) {
    auto p = nccl::nccl_ring_program(kind, {ring, ring}, Protocol::LL);
    ASSERT_TRUE(p) << p.error().to_string();
    verifier::VerifyOptions vo;
    vo.root = ring.front().value();
    auto verified = verifier::certify(*p, vo);
    ASSERT_TRUE(verified) << verified.error().to_text();
    expect_correct(*verified, std::string(collective_kind_name(kind)));
  }
}

// A copied chunk of a custom collective may start at several places; it is one value at all of
// them, so the rank that serves it from its own input must write what the reference expects.
TEST(CpuExecutorTest, ACopiedChunkWithSeveralPrePlacesIsOneValue) {
  CollectiveDraft d;
  d.name = "keep_or_fetch";
  d.num_ranks = 3;
  d.input_chunks = 2;
  d.output_chunks = 1;
  d.chunks = {{{{RankId(0), 0}}, {{RankId(0), 0}}, false},
              {{{RankId(0), 1}, {RankId(1), 0}, {RankId(2), 0}}, {{RankId(1), 0}}, false}};
  const CollectiveSpec spec = *CollectiveSpec::create(d);
  auto prog = lowering::DslProgram::create("local_copies", *fully_connected(3), spec);
  ASSERT_TRUE(prog);
  // Each post rank copies the chunk from its own input: no message at all.
  for (auto [chunk_rank, slot] : {std::pair{0, 0}, std::pair{1, 0}}) {
    auto c = prog->chunk(chunk_rank, lowering::Buffer::input(), slot);
    ASSERT_TRUE(c) << c.error().to_string();
    ASSERT_TRUE(prog->copy(*c, chunk_rank, lowering::Buffer::output(), 0));
  }
  auto lowered = lowering::lower(*prog);
  ASSERT_TRUE(lowered) << lowered.error().to_string();
  ASSERT_TRUE(lowered->verified) << lowered->verified.error().to_text();
  expect_correct(*lowered->verified, "a chunk copied from any of its pre places");
}

TEST(CpuExecutorTest, AProgramTheVerifierSaysDeadlocksHangsWhereItSays) {
  auto example = executor_testing::deadlocked_example();
  ASSERT_TRUE(example);
  RunOptions o;
  o.size_bytes = example->size_bytes;
  o.watchdog = std::chrono::milliseconds(100);
  auto run = run_on_cpu(example->tables, o);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_FALSE(run->completed);
  executor_testing::expect_blocked_on_the_cycle(example->report, run->blocked);
}

TEST(CpuExecutorTest, ASizeThatDoesNotCutIntoElementsIsBadInput) {
  auto p = nccl::nccl_ring_program(CollectiveKind::Allreduce, {{RankId(0), RankId(1), RankId(2)}},
                                   Protocol::Simple);
  ASSERT_TRUE(p);
  auto verified = verifier::certify(*p, {});
  ASSERT_TRUE(verified);
  RunOptions o;
  o.size_bytes = 3 * 4 + 1;
  auto run = run_on_cpu(ExecutableProgram::lower(*verified), o);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().to_string().find("does not cut into"), std::string::npos);
}

TEST(CpuExecutorTest, MoreThreadBlocksThanHostThreadsIsBadInput) {
  // 2 ranks x 2049 thread blocks of one copy each: 4098 host threads are refused before any
  // starts.
  ProgramDraft d;
  d.name = "wide";
  d.collective = "allreduce";
  d.num_ranks = 2;
  d.chunks_per_loop = 2;
  for (int r = 0; r < 2; ++r) {
    RankProgram rp;
    rp.rank = RankId(r);
    rp.input_chunks = rp.output_chunks = 2;
    for (int t = 0; t < 2049; ++t) {
      ThreadBlockBuilder b(TbId(t), std::nullopt, std::nullopt, ChannelId(0));
      b.step(OpType::Copy, {BufferKind::Input, 0}, {BufferKind::Output, 0});
      rp.thread_blocks.push_back(b.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  auto p = Program::create(d);
  ASSERT_TRUE(p) << p.error().to_string();
  auto collective = collective_for_program(*p, std::nullopt);
  ASSERT_TRUE(collective) << collective.error().to_string();
  RunOptions o;
  o.size_bytes = 2 * 4;
  auto run = run_on_cpu(detail::lower_unchecked(*p, *collective), o);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().to_string().find("one host thread per thread block"), std::string::npos)
      << run.error().to_string();
}

} // namespace
} // namespace syncoll::backend
