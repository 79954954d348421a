// The CUDA executor under emulation: the same verified programs as the CPU executor's tests, on a
// GPU, bit for bit against the host reference; a deadlocking program stopped by the device
// watchdog where the verifier says; a grid the GPU cannot hold refused before launch. Without a
// GPU (or without a CUDA build) every GPU test skips with the reason, and the executor's calls
// fail with that reason instead of crashing.
#include "backend/cuda_executor.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/mscclir.h"
#include "model/runtime_constants.h"
#include "nccl/algorithms.h"
#include "tests/backend/deadlocked_example.h"

#include <gtest/gtest.h>

namespace syncoll::backend {
namespace {

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    if (auto reason = cuda_unavailable())                                                          \
      GTEST_SKIP() << "no GPU for the CUDA executor: " << *reason;                                 \
  } while (0)

void expect_correct_on_gpu(const verifier::VerifiedProgram &verified, const std::string &what) {
  const ExecutableProgram e = ExecutableProgram::lower(verified);
  const int64_t chunks = nccl_tests_chunks(e.collective());
  const int64_t tile = protocol_traits(e.program().protocol()).executor_tile_bytes;
  const int64_t unit = chunks * 4;
  const std::pair<DataType, ReduceOp> pairs[] = {{DataType::I32, ReduceOp::Sum},
                                                 {DataType::F32, ReduceOp::Max},
                                                 {DataType::BF16, ReduceOp::Min},
                                                 {DataType::F16, ReduceOp::Sum}};
  // The three count-splitting regimes, as in the CPU executor's tests.
  for (int64_t size : {unit * 8, unit * (tile / 4 / 4 / 4 + 1), unit * (tile / 4 + 1)})
    for (auto [type, op] : pairs) {
      CudaRunOptions o;
      o.run.size_bytes = size;
      o.run.type = type;
      o.run.op = op;
      o.run.seed = 11;
      auto run = run_emulated_on_cuda(e, o);
      ASSERT_TRUE(run) << what << ": " << run.error().to_string();
      EXPECT_TRUE(run->run.completed) << what << " hung at " << size << " B";
      EXPECT_EQ(run->run.mismatches, 0u)
          << what << " at " << size << " B, " << data_type_name(type) << " " << reduce_op_name(op)
          << ": " << (run->run.first_mismatches.empty() ? "" : run->run.first_mismatches.front());
      EXPECT_GT(run->run.elements_checked, 0u) << what;
    }
}

TEST(CudaExecutorTest, WithoutAGpuEveryCallSaysWhy) {
  auto reason = cuda_unavailable();
  if (!reason)
    GTEST_SKIP() << "this machine has a GPU; the reason path is not taken";
  EXPECT_FALSE(reason->empty());
  auto p = nccl::nccl_ring_program(CollectiveKind::Allreduce, {{RankId(0), RankId(1)}},
                                   Protocol::Simple);
  ASSERT_TRUE(p);
  auto verified = verifier::certify(*p, {});
  ASSERT_TRUE(verified);
  CudaRunOptions o;
  o.run.size_bytes = 2 * 4 * 64;
  auto run = run_emulated_on_cuda(ExecutableProgram::lower(*verified), o);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().to_string().find(*reason), std::string::npos) << run.error().to_string();
}

TEST(CudaExecutorTest, EveryExampleProgramRunsCorrectlyUnderEmulation) {
  SKIP_WITHOUT_GPU();
  for (const examples::ProgramExample &ex : examples::program_examples())
    for (bool in_place : ex.in_place_modes) {
      examples::ExampleParams params;
      params.options.in_place = in_place;
      auto dsl = ex.build(params);
      ASSERT_TRUE(dsl) << ex.name;
      auto lowered = lowering::lower(*dsl);
      ASSERT_TRUE(lowered && lowered->verified) << ex.name;
      expect_correct_on_gpu(*lowered->verified, ex.name + (in_place ? " (in place)" : ""));
    }
}

TEST(CudaExecutorTest, NcclRingsRunCorrectlyUnderEmulationInEveryProtocol) {
  SKIP_WITHOUT_GPU();
  std::vector<RankId> ring;
  for (int r = 0; r < 8; ++r)
    ring.emplace_back((r * 3) % 8);
  for (Protocol protocol : {Protocol::Simple, Protocol::LL, Protocol::LL128})
    for (auto kind : {CollectiveKind::Allreduce, CollectiveKind::Allgather,
                      CollectiveKind::ReduceScatter, CollectiveKind::Broadcast}) {
      auto p = nccl::nccl_ring_program(kind, {ring, ring, ring, ring}, protocol);
      ASSERT_TRUE(p) << p.error().to_string();
      verifier::VerifyOptions vo;
      vo.root = ring.front().value();
      auto verified = verifier::certify(*p, vo);
      ASSERT_TRUE(verified) << verified.error().to_text();
      expect_correct_on_gpu(*verified, std::string(collective_kind_name(kind)) + " " +
                                           std::string(protocol_traits(protocol).name));
    }
}

TEST(CudaExecutorTest, AProgramTheVerifierSaysDeadlocksIsStoppedByTheDeviceWatchdog) {
  SKIP_WITHOUT_GPU();
  auto example = executor_testing::deadlocked_example();
  ASSERT_TRUE(example);
  CudaRunOptions o;
  o.run.size_bytes = example->size_bytes;
  o.run.watchdog = std::chrono::milliseconds(200);
  auto run = run_emulated_on_cuda(example->tables, o);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_FALSE(run->run.completed);
  executor_testing::expect_blocked_on_the_cycle(example->report, run->run.blocked);
}

TEST(CudaExecutorTest, AGridTheGpuCannotHoldIsRefusedBeforeLaunch) {
  // 32 ranks x 32 rings (NCCL's most channels): 1024 thread blocks, more than any current GPU
  // holds at once at 512 threads each (an H100's 132 SMs hold 4 each). The program verifies
  // (checked without a GPU too: a program the verifier refused would prove nothing here).
  std::vector<RankId> ring;
  for (int r = 0; r < 32; ++r)
    ring.emplace_back(r);
  auto p = nccl::nccl_ring_program(CollectiveKind::Allgather,
                                   std::vector<std::vector<RankId>>(32, ring), Protocol::Simple);
  ASSERT_TRUE(p) << p.error().to_string();
  auto verified = verifier::certify(*p, {});
  ASSERT_TRUE(verified) << verified.error().to_text();
  const ExecutableProgram e = ExecutableProgram::lower(*verified);
  ASSERT_EQ(e.blocks().size(), 1024u);
  SKIP_WITHOUT_GPU();
  CudaRunOptions o;
  o.run.size_bytes = 32 * 4 * 32;
  auto run = run_emulated_on_cuda(e, o);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().to_string().find("holds at once"), std::string::npos)
      << run.error().to_string();
}

} // namespace
} // namespace syncoll::backend
