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
                           "run examples/ir/ring_allreduce_4.xml --size 13"}) {
    CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_TRUE(run.out.find("#wrong") == std::string::npos) << args;
  }
}

} // namespace
} // namespace syncoll::testing
