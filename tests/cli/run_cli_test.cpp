#include "tests/cli/run_cli.h"

#include <algorithm>

namespace syncoll::testing {
namespace {

TEST(RunCliTest, AVerifiedProgramRunsAndEveryOutputIsRight) {
  CliRun run = run_cli("run examples/ir/ring_allreduce_4.xml --size 64KiB --dtype f32 --op max "
                       "--iters 2 --seed 3");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("allreduce on 4 ranks, cpu backend, seed 3"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("#wrong"), std::string::npos);
  // One line per iteration, each with no wrong element.
  size_t rows = 0;
  for (size_t at = run.out.find("65536"); at != std::string::npos;
       at = run.out.find("65536", at + 1))
    ++rows;
  EXPECT_EQ(rows, 2u) << run.out;
}

TEST(RunCliTest, AProgramThatDoesNotVerifyIsNotRun) {
  CliRun run = run_cli("run examples/ir/faulty/d1_head_to_head.xml");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("not verified, so not run"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("deadlock freedom: violated"), std::string::npos) << run.out;
}

TEST(RunCliTest, BadOptionsAreOneLineAndExitTwo) {
  for (const char *args : {"run examples/ir/ring_allreduce_4.xml --dtype f64",
                           "run examples/ir/ring_allreduce_4.xml --op avg",
                           "run examples/ir/ring_allreduce_4.xml --size 13",
                           "run examples/ir/ring_allreduce_4.xml --emulate",
                           "run examples/ir/ring_allreduce_4.xml --backend cuda",
                           "run examples/ir/ring_allreduce_4.xml --rank 1 --id-file x"}) {
    CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_TRUE(run.out.find("#wrong") == std::string::npos) << args;
  }
}

// On a machine without a GPU (or a build without CUDA) the CUDA backend is one line saying why,
// exit 2, no table; with a GPU the emulated run is checked like the CPU one.
TEST(RunCliTest, TheCudaBackendRunsOrSaysWhyNot) {
  CliRun run = run_cli("run examples/ir/ring_allreduce_4.xml --backend cuda --emulate --size 64KiB "
                       "--iters 2");
  if (run.exit_code == 0) {
    EXPECT_NE(run.out.find("emulated on one GPU"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("CUDA blocks"), std::string::npos) << run.out;
    return;
  }
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_TRUE(run.err.find("CUDA") != std::string::npos) << run.err;
  EXPECT_TRUE(run.out.find("#wrong") == std::string::npos) << run.out;
}

} // namespace
} // namespace syncoll::testing
