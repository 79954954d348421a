// `syncoll lower`: examples and algorithm files to verified MSCCL-IR XML; bad requests exit 2
// with one line and write nothing.
#include "model/mscclir.h"
#include "tests/cli/run_cli.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace syncoll::testing {
namespace {

TEST(LowerCliTest, ExampleWritesVerifiedXmlThatReadsBack) {
  const auto out = temp_file("ring.xml");
  CliRun run = run_cli("lower --example ring_allreduce -n 4 -o " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("verified:"), std::string::npos);
  auto program = read_program_file(out.string());
  ASSERT_TRUE(program) << program.error().to_string();
  EXPECT_TRUE(program->warnings.empty());
  EXPECT_EQ(program->value.num_ranks(), 4);
  // Twice the same input, byte for byte the same output.
  const auto again = temp_file("ring2.xml");
  ASSERT_EQ(run_cli("lower --example ring_allreduce -n 4 -o " + again.string()).exit_code, 0);
  EXPECT_EQ(read_all(out), read_all(again));
  std::filesystem::remove(out);
  std::filesystem::remove(again);
}

TEST(LowerCliTest, AlgorithmFileLowersAndVerifies) {
  CliRun run = run_cli("lower examples/algorithms/dgx1_allgather_ring.json -o -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("<algo name="), std::string::npos);
  EXPECT_NE(run.out.find("coll=\"allgather\""), std::string::npos);
}

TEST(LowerCliTest, BadRequestsExitTwoWithOneLine) {
  for (const std::string args :
       {"lower --example nope", "lower", "lower --example ring_allreduce --protocol Fast",
        "lower --example alltonext --in-place", "lower --example ring_allgather -n 1",
        // An algorithm lowers out of place through either passes: the flag is refused.
        "lower examples/algorithms/dgx1_allgather_ring.json --in-place",
        "lower examples/algorithms/dgx1_allgather_ring.json --in-place --passes gc3",
        "lower --example ring_allgather -n 4 --passes connection"}) {
    SCOPED_TRACE(args);
    const auto out = temp_file("bad.xml");
    CliRun run = run_cli(args + " -o " + out.string());
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(LowerCliTest, ListNamesEveryExample) {
  CliRun run = run_cli("lower --list");
  ASSERT_EQ(run.exit_code, 0);
  for (const char *name : {"ring_allgather", "ring_allreduce", "allpairs_allreduce",
                           "recursive_doubling_allgather", "alltonext"})
    EXPECT_NE(run.out.find(name), std::string::npos) << name;
}

} // namespace
} // namespace syncoll::testing
