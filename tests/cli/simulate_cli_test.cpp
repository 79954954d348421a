#include "tests/cli/run_cli.h"

#include <filesystem>
#include <nlohmann/json.hpp>

namespace syncoll::testing {
namespace {

TEST(SimulateCliTest, BaselineSweepWithCsv) {
  const auto csv = std::filesystem::temp_directory_path() / "syncoll-sim.csv";
  std::filesystem::remove(csv);
  CliRun run = run_cli("simulate --baseline nccl-ring -c allreduce -t ring -n 4 --sizes 1KiB..1MiB "
                       "--csv " +
                       csv.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("NCCL ring allreduce"), std::string::npos);
  const std::string text = read_all(csv);
  EXPECT_EQ(text.substr(0, 49), "size_bytes,time_us,algbw_gbps,busbw_gbps,deadlock");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 11); // header + 1 KiB .. 1 MiB
  std::filesystem::remove(csv);
}

TEST(SimulateCliTest, TreeBaseline) {
  CliRun run = run_cli("simulate --baseline nccl-tree -c allreduce -t dgx1 -s 1KiB");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("NCCL tree allreduce"), std::string::npos);
  EXPECT_EQ(run_cli("simulate --baseline nccl-tree -c allgather -t dgx1").exit_code, 2);
}

TEST(SimulateCliTest, AlgorithmWithTraceOpensAsChromeTrace) {
  const auto trace = std::filesystem::temp_directory_path() / "syncoll-trace.json";
  CliRun run = run_cli("simulate examples/algorithms/ring4_allreduce.json -t ring -n 4 -s 4MiB "
                       "--mode dataflow --trace " +
                       trace.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(read_all(trace));
  EXPECT_EQ(j["traceEvents"][0]["ph"], "X");
  EXPECT_GT(j["traceEvents"].size(), 24u); // 24 sends plus thread names
  std::filesystem::remove(trace);
}

TEST(SimulateCliTest, ProgramDeadlockExitsOne) {
  CliRun ok = run_cli("simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 -s 1MiB");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  CliRun stuck = run_cli("simulate examples/ir/faulty/d1_head_to_head.xml -t ring -n 2 -s 1MiB");
  EXPECT_EQ(stuck.exit_code, 1);
  EXPECT_NE(stuck.out.find("deadlock"), std::string::npos);
}

TEST(SimulateCliTest, BadArgumentsExitTwo) {
  EXPECT_EQ(run_cli("simulate -t dgx1").exit_code, 2);                      // nothing to simulate
  EXPECT_EQ(run_cli("simulate --baseline nccl-ring -t dgx1").exit_code, 2); // no collective
  EXPECT_EQ(run_cli("simulate --baseline nccl-ring -c allreduce -t star -n 4").exit_code, 2);
  EXPECT_EQ(run_cli("simulate --baseline nccl-ring -c allreduce -t dgx1 -s 12XB").exit_code, 2);
  // A line of 4 has no link 3->0: that send is routed through ranks 2 and 1, and costs more.
  CliRun ring = run_cli("simulate examples/algorithms/ring4_allreduce.json -t ring -n 4 --csv -");
  CliRun line = run_cli("simulate examples/algorithms/ring4_allreduce.json -t line -n 4 --csv -");
  EXPECT_EQ(line.exit_code, 0) << line.err;
  EXPECT_NE(ring.out, line.out);
}

} // namespace
} // namespace syncoll::testing

namespace syncoll::testing {
namespace {

TEST(SimulateCliTest, SharingOverridesEveryRelation) {
  // The tree's root sends to five children through one switch port: FIFO serves them one after
  // another, max-min fair sharing all at once, so the timelines differ (the port is work
  // conserving, so the totals need not).
  const auto dir = std::filesystem::temp_directory_path();
  std::string traces[2];
  for (int i = 0; i < 2; ++i) {
    const auto trace = dir / ("syncoll-sharing-" + std::to_string(i) + ".json");
    CliRun run = run_cli(std::string("simulate --baseline nccl-tree -c allreduce -t "
                                     "hub_and_spoke -n 6 -s 64KiB --sharing ") +
                         (i == 0 ? "fifo" : "fair") + " --trace " + trace.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    traces[i] = read_all(trace);
    std::filesystem::remove(trace);
  }
  EXPECT_NE(traces[0], traces[1]);
  EXPECT_EQ(run_cli("simulate --baseline nccl-tree -c allreduce -t hub_and_spoke -n 6 "
                    "--sharing fast")
                .exit_code,
            2);
}

} // namespace
} // namespace syncoll::testing
