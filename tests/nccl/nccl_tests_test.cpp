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
