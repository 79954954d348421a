// Tuner tables from a simulated sweep: the bands cover every size without a gap, cut where the
// choice changes, on multiples of the rank count; each choice is the fastest NCCL can run there;
// both CSV formats as NCCL's and NCCLX's tuners read them (golden).
#include "nccl/tuner_table.h"
#include "simulator/system_model.h"
#include "tests/support/golden.h"

#include <gtest/gtest.h>

namespace syncoll::nccl {
namespace {

NcclSystem machine(const char *preset, int nodes) {
  auto made = nccl_system(*find_system_preset(preset), nodes);
  EXPECT_TRUE(made) << made.error().to_string();
  return *std::move(made);
}

TunerSweep sweep(std::vector<CollectiveKind> kinds) {
  TunerSweep s;
  s.kinds = std::move(kinds);
  for (int64_t bytes = 1024; bytes <= (int64_t(1) << 30); bytes *= 4)
    s.sizes.push_back(bytes);
  return s;
}

TEST(TunerTableTest, BandsCoverEverySizeAndChangeOnlyWhereTheChoiceDoes) {
  const NcclSystem m = machine("dgx_h100", 2);
  const auto table =
      tune_nccl(m.system, m.nccl, sweep({CollectiveKind::Allreduce, CollectiveKind::Allgather}));
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->ranks, 16);
  EXPECT_EQ(table->nodes, 2);
  for (CollectiveKind kind : {CollectiveKind::Allreduce, CollectiveKind::Allgather}) {
    std::optional<int64_t> next = 0;
    const TunerRow *previous = nullptr;
    for (const TunerRow &row : table->rows) {
      if (row.kind != kind)
        continue;
      ASSERT_TRUE(next.has_value()) << "a band after the unbounded one";
      EXPECT_EQ(row.min_bytes, *next);
      if (row.min_bytes > 0) {
        EXPECT_EQ(row.min_bytes % 16, 0) << "an edge off the rank count's multiples";
      }
      if (previous) {
        EXPECT_FALSE(previous->algorithm == row.algorithm && previous->protocol == row.protocol &&
                     previous->channels == row.channels)
            << "two bands in a row with one choice";
      }
      next = row.max_bytes ? std::optional<int64_t>(*row.max_bytes + 1) : std::nullopt;
      previous = &row;
    }
    EXPECT_FALSE(next.has_value()) << "the last band must reach every larger size";
  }
  // Every swept size lies in the band of its own fastest choice.
  for (const TunerPoint &p : table->points) {
    const auto band = std::find_if(table->rows.begin(), table->rows.end(), [&](const TunerRow &r) {
      return r.kind == p.kind && r.min_bytes <= p.bytes &&
             (!r.max_bytes || p.bytes <= *r.max_bytes);
    });
    ASSERT_NE(band, table->rows.end());
    EXPECT_EQ(band->algorithm, p.fastest.algorithm);
    EXPECT_EQ(band->protocol, p.fastest.protocol);
    EXPECT_EQ(band->channels, p.fastest.channels);
  }
}

TEST(TunerTableTest, TheFastestIsNeverSlowerThanNcclsOwnChoiceAndIsOneNcclCanRun) {
  const NcclSystem m = machine("dgx_h100", 1);
  const auto table = tune_nccl(m.system, m.nccl, sweep({CollectiveKind::Allreduce}));
  ASSERT_TRUE(table.has_value());
  bool somewhere_faster = false;
  for (const TunerPoint &p : table->points) {
    EXPECT_LE(p.fastest_us, p.nccl_us) << p.bytes;
    somewhere_faster |= p.fastest_us < p.nccl_us;
    NcclRunOptions forced;
    forced.algorithm = p.fastest.algorithm;
    forced.protocol = p.fastest.protocol;
    const auto run = simulate_nccl(p.kind, p.bytes, m.system, m.nccl, forced);
    ASSERT_TRUE(run.has_value());
    EXPECT_DOUBLE_EQ(double(run->result.completion) / 1e6, p.fastest_us);
  }
  // On one H100 node NVLS is NCCL's choice from 2 MiB, where the ring with LL128 simulates faster
  // up to 32 MiB: the table is not NCCL's choice written down.
  EXPECT_TRUE(somewhere_faster);
}

TEST(TunerTableTest, RefusesWhatNcclNeverAsksItsTunerAndForcedChoices) {
  const NcclSystem m = machine("dgx_h100", 1);
  EXPECT_FALSE(tune_nccl(m.system, m.nccl, sweep({CollectiveKind::Alltoall})).has_value());
  TunerSweep forced = sweep({CollectiveKind::Allreduce});
  forced.options.protocol = Protocol::LL;
  EXPECT_FALSE(tune_nccl(m.system, m.nccl, forced).has_value());
  TunerSweep empty = sweep({CollectiveKind::Allreduce});
  empty.sizes.clear();
  EXPECT_FALSE(tune_nccl(m.system, m.nccl, empty).has_value());
}

// A table built by hand: the writers' formats, independent of any simulated figure.
TunerTable hand_table() {
  TunerTable t;
  t.nodes = 2;
  t.ranks = 16;
  t.rows = {
      {CollectiveKind::Allreduce, 0, 262143, NcclAlgorithm::Tree, Protocol::LL, 16},
      {CollectiveKind::Allreduce, 262144, 1048575, NcclAlgorithm::Ring, Protocol::LL128, 16},
      {CollectiveKind::Allreduce, 1048576, std::nullopt, NcclAlgorithm::NvlsTree, Protocol::Simple,
       16},
      {CollectiveKind::ReduceScatter, 0, std::nullopt, NcclAlgorithm::Pat, Protocol::Simple, 4}};
  return t;
}

TEST(TunerTableTest, NcclsExampleTableFormat) {
  testing::expect_golden(write_nccl_tuner_csv(hand_table(), "a table built by hand"),
                         "tuner_nccl.csv");
}

TEST(TunerTableTest, NcclxTableFormatWithPerRankBands) {
  testing::expect_golden(write_ncclx_tuner_csv(hand_table(), "a table built by hand"),
                         "tuner_ncclx.csv");
}

} // namespace
} // namespace syncoll::nccl
