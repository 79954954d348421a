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
}

TEST(NcclTestsLogTest, MalformedLogsAreLocatedErrors) {
  auto bad = read_nccl_tests_log(fixture("bad_number.log"), "bad.log");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            "bad.log:4:57: '1x.02' is not a number (a result line's time, algbw and busbw follow "
            "size, count, type, redop and root)\n");
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
