// nccl-tests' formats as syncoll writes them: the text table's columns (golden, every width rule
// of nccl-tests' numbers: two decimals, one, none, an exponent) and the JSON's fields.
#include "nccl/nccl_tests.h"
#include "tests/support/golden.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace syncoll::nccl {
namespace {

NcclTestsRun widths() {
  NcclTestsRun run;
  run.kind = CollectiveKind::Allreduce;
  run.ranks = 8;
  run.what = "a constructed run";
  run.rows = {{8, 14.65, 0.000546, 0.000956},
              {1 << 20, 987.654, 1.06, 1.86},
              {int64_t(1) << 30, 12345.678, 86.98, 152.2},
              {int64_t(1) << 34, 123456.7, 139.2, 1234.5},
              {int64_t(1) << 40, 12345678.9, 1.0e6, 1.75e6}};
  return run;
}

TEST(NcclTestsFormatTest, TheTextTableKeepsNcclTestsColumnsAndNumberWidths) {
  testing::expect_golden(nccl_tests_text(widths()), "nccl_tests_widths.txt");
}

TEST(NcclTestsFormatTest, RootedAndGatheringKindsNameTheirProgramRedopAndRoot) {
  NcclTestsRun run = widths();
  run.kind = CollectiveKind::Broadcast;
  run.root = 3;
  const std::string text = nccl_tests_text(run);
  EXPECT_NE(text.find("# Collective test starting: broadcast_perf"), std::string::npos);
  EXPECT_NE(text.find("     float    none       3"), std::string::npos) << text;
  run.kind = CollectiveKind::Allgather;
  run.root.reset();
  EXPECT_NE(nccl_tests_text(run).find("all_gather_perf"), std::string::npos);
}

TEST(NcclTestsFormatTest, TheJsonHasNcclTestsFieldsPerSize) {
  NcclTestsRun run = widths();
  run.nccl_version_code = 22907;
  const auto doc = nlohmann::json::parse(nccl_tests_json(run));
  EXPECT_EQ(doc["version"], 2);
  EXPECT_EQ(doc["nccl_version"], 22907);
  ASSERT_EQ(doc["results"].size(), 5u);
  const auto &row = doc["results"][2];
  EXPECT_EQ(row["size"], int64_t(1) << 30);
  EXPECT_EQ(row["count"], (int64_t(1) << 30) / 4);
  EXPECT_EQ(row["root"], "    -1"); // nccl-tests writes the padded column
  EXPECT_DOUBLE_EQ(row["out_of_place"]["time"].get<double>(), 12345.678);
  EXPECT_DOUBLE_EQ(row["in_place"]["bus_bw"].get<double>(), 152.2);
  EXPECT_TRUE(row["out_of_place"]["nwrong"].is_null());
  EXPECT_EQ(doc["average_bus_bandwidth"]["okay"], "unchecked");
}

} // namespace
} // namespace syncoll::nccl

namespace syncoll::nccl {
namespace {

std::string fixture(const std::string &name) {
  return testing::slurp(std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/nccl_tests/" + name);
}

// A run as an MPI launcher and NCCL_DEBUG=INFO leave it: prefixed lines, NCCL's own lines mixed
// in. The table, the program, the device count and NCCL's algorithm per size are all read.
TEST(NcclTestsLogTest, ATextLogWithMpiPrefixesAndNcclInfoLinesReads) {
  auto log = read_nccl_tests_log(fixture("mpi_info_allgather.log"), "run.log");
  ASSERT_TRUE(log) << log.error().to_string();
  EXPECT_EQ(log->kind, CollectiveKind::Allgather);
  EXPECT_EQ(log->ranks, 8);
  ASSERT_EQ(log->rows.size(), 4u);
  EXPECT_EQ(log->rows[2].size, 262144);
  EXPECT_DOUBLE_EQ(log->rows[2].time_us, 19.85); // out of place
  EXPECT_DOUBLE_EQ(log->rows[2].busbw_gbps, 11.56);
  EXPECT_EQ(log->rows[2].algorithm, "RING");
  EXPECT_EQ(log->rows[2].protocol, "LL128");
  EXPECT_EQ(log->rows[3].protocol, "Simple");
  EXPECT_EQ(log->hosts, 1);
  EXPECT_EQ(log->nccl_version_code, 22803); // nccl-tests' nccl-library= before NCCL's INFO line
}

// The nodes a log ran on are the hosts its device lines name; its release, NCCL's own line
// where nccl-tests' header is missing, or the JSON's code.
TEST(NcclTestsLogTest, ALogSaysItsHostsAndItsNcclRelease) {
  auto text = read_nccl_tests_log(fixture("h100_2node_default.log"), "run.log");
  ASSERT_TRUE(text) << text.error().to_string();
  EXPECT_EQ(text->ranks, 16);
  EXPECT_EQ(text->hosts, 2);
  EXPECT_EQ(text->nccl_version_code, 22105);
  auto json = read_nccl_tests_log(fixture("oci_a100_2node.json"), "run.json");
  ASSERT_TRUE(json) << json.error().to_string();
  EXPECT_EQ(json->hosts, 2);
  EXPECT_EQ(json->nccl_version_code, 21805);
  const std::string info_only =
      "h:1:1 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n"
      "#  Rank  0 Group  0 Pid 1 on a device  0 [0x1] GPU\n"
      "#  Rank  1 Group  0 Pid 1 on b device  0 [0x1] GPU\n"
      "        1024           256     float     sum      -1    10.00    0.10    0.10       0"
      "    10.00    0.10    0.10       0\n";
  auto info = read_nccl_tests_log(info_only, "info.log");
  ASSERT_TRUE(info) << info.error().to_string();
  EXPECT_EQ(info->nccl_version_code, 22703);
  EXPECT_EQ(info->hosts, 2);
  std::string rccl = info_only;
  rccl.replace(rccl.find("NCCL version 2.27.3+cuda12.9"), 28, "RCCL version 2.26.6+hip6.4");
  auto amd = read_nccl_tests_log(rccl, "rccl.log");
  ASSERT_TRUE(amd) << amd.error().to_string();
  EXPECT_EQ(amd->nccl_version_code, 22606);
}

TEST(NcclTestsLogTest, WhatSyncollWritesReadsBackInBothForms) {
  NcclTestsRun run = widths();
  run.rows.resize(3);
  for (const std::string &text : {nccl_tests_text(run), nccl_tests_json(run)}) {
    auto log = read_nccl_tests_log(text, "round.log");
    ASSERT_TRUE(log) << log.error().to_string();
    EXPECT_EQ(log->kind, CollectiveKind::Allreduce) << "all_reduce_perf is not reduce_perf";
    EXPECT_EQ(log->ranks, 8);
    ASSERT_EQ(log->rows.size(), 3u);
    EXPECT_NEAR(log->rows[1].time_us, 987.654, 0.01);
  }
  // Across nodes, a host per node and the release modelled.
  run.ranks_per_host = 4;
  run.nccl_version_code = 22207;
  for (const std::string &text : {nccl_tests_text(run), nccl_tests_json(run)}) {
    auto log = read_nccl_tests_log(text, "round.log");
    ASSERT_TRUE(log) << log.error().to_string();
    EXPECT_EQ(log->hosts, 2);
    EXPECT_EQ(log->nccl_version_code, 22207);
  }
}

// Older nccl-tests printed no root column: the header says where the time is, so an old log's
// busbw is never read as its time.
TEST(NcclTestsLogTest, TheHeaderSaysWhichColumnsHoldTheTimes) {
  const std::string old_layout =
      "# Collective test starting: all_reduce_perf\n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   "
      "algbw   busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  "
      "(GB/s)  (GB/s)\n"
      "     1048576        262144   float     sum   100.00   10.49   18.35  4e-07    99.00   "
      "10.59   18.54  4e-07\n";
  auto log = read_nccl_tests_log(old_layout, "old.log");
  ASSERT_TRUE(log) << log.error().to_string();
  ASSERT_EQ(log->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(log->rows[0].time_us, 100.0);
  EXPECT_DOUBLE_EQ(log->rows[0].algbw_gbps, 10.49);
  EXPECT_DOUBLE_EQ(log->rows[0].busbw_gbps, 18.35);
}

TEST(NcclTestsLogTest, MalformedLogsAreLocatedErrors) {
  auto bad = read_nccl_tests_log(fixture("bad_number.log"), "bad.log");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            "bad.log:4:57: '1x.02' is not a number (a result line's time, algbw and busbw are "
            "its columns 6 to 8, as its header names them)\n");
  auto empty = read_nccl_tests_log("# nothing measured\n", "empty.log");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().to_string().find("empty.log:1:1: no nccl-tests result line"),
            std::string::npos);
  auto json = read_nccl_tests_log("{\"results\": [{\"size\": 8}]}", "r.json");
  ASSERT_FALSE(json);
  EXPECT_NE(json.error().to_string().find("r.json:1:14:"), std::string::npos)
      << json.error().to_string();
}

} // namespace
} // namespace syncoll::nccl
