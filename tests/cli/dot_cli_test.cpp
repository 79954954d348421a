// `syncoll dot`: every kind draws; bad requests exit 2 with one line and write nothing.
#include "tests/cli/run_cli.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace syncoll::testing {
namespace {

TEST(DotCliTest, EveryKindDraws) {
  struct Case {
    std::string args, format, expect;
  };
  const std::vector<Case> cases = {
      {"topo dgx1", "dot", "digraph \"dgx1\""},
      {"topo dgx1", "svg", "<svg"},
      {"topo dgx1", "png", "PNG"},
      {"algo examples/algorithms/dgx1_allgather_ring.json", "svg", "<svg"},
      {"program examples/ir/ring_allreduce_4.xml", "dot", "tb 0 send 1 recv 3 ch 0"},
      {"dag example:ring_allreduce -n 3", "dot", "chunk DAG"},
      {"dag example:ring_allreduce -n 3 --level instruction", "dot", "rrcs"},
      {"dag examples/algorithms/dgx1_allgather_ring.json", "dot", "copy: r0 i[0] -> r1 o[0]"},
      {"counterexample examples/ir/faulty/d1_head_to_head.xml", "dot", "waits for"},
      {"counterexample examples/mscclpp/faulty/put_racing_local_read.json", "svg", "races with"},
      {"timeline examples/ir/ring_allreduce_4.xml -t ring -n 4 -s 64KiB", "svg", "<rect"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.args + " " + c.format);
    const auto out = temp_file("out." + c.format);
    CliRun run = run_cli("dot " + c.args + " --format " + c.format + " -o " + out.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(read_all(out).find(c.expect), std::string::npos);
    std::filesystem::remove(out);
  }
}

TEST(DotCliTest, NothingToDrawOnAGoodProgramExitsOne) {
  const auto out = temp_file("none.dot");
  CliRun run = run_cli("dot counterexample examples/ir/ring_allreduce_4.xml -o " + out.string());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(DotCliTest, BadRequestsExitTwoWithOneLine) {
  for (const std::string args :
       {"dot topo nosuch", "dot algo examples/ir/ring_allreduce_4.xml",
        "dot timeline examples/ir/ring_allreduce_4.xml -t ring -n 4 --format dot",
        "dot timeline examples/ir/ring_allreduce_4.xml --format svg", "dot dag example:nope",
        "dot program examples/mscclpp/allreduce_allpairs_4gpu.json"}) {
    SCOPED_TRACE(args);
    const auto out = temp_file("bad.out");
    CliRun run = run_cli(args + " -o " + out.string());
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

} // namespace
} // namespace syncoll::testing
