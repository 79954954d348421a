// The NCCL release a run models: which algorithms NCCL chooses among, and the names it accepts.
#include "model/hardware.h"
#include "nccl/run.h"
#include "nccl/version.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>

namespace syncoll::nccl {
namespace {

NcclRunOptions under(std::string_view release) {
  NcclRunOptions o;
  auto version = find_nccl_version(release);
  EXPECT_TRUE(version) << release;
  o.version = version.value_or(kNewestNcclVersion);
  return o;
}

TEST(NcclVersionTest, ReleasesAreFoundByNameAndAMinorMeansItsNewestPatch) {
  auto exact = find_nccl_version("2.21.5");
  ASSERT_TRUE(exact);
  EXPECT_EQ(nccl_version_name(*exact), "2.21.5");
  auto minor = find_nccl_version("2.27");
  ASSERT_TRUE(minor);
  EXPECT_EQ(nccl_version_name(*minor), "2.27.7");
  EXPECT_EQ(nccl_version_name(kNewestNcclVersion), "2.29.7");
  for (std::string_view bad :
       {"2.17.1", "2.30", "2.21.4", "3.0", "2.", "2.21.", "2.x", "221", "", "2.021", " 2.21"})
    EXPECT_FALSE(find_nccl_version(bad)) << bad;
  EXPECT_EQ(known_nccl_versions(), "2.18.1 to 2.29.7 (or 2.M for the newest patch of 2.M)");
}

// A log's NCCL_VERSION_CODE in both of NCCL's layouts, and the modelled release it is held
// against: itself, the newest modelled before it, or the oldest for a release before them all.
TEST(NcclVersionTest, AVersionCodeNamesItsReleaseAndTheNearestModelledOne) {
  ASSERT_TRUE(nccl_version_of_code(22105));
  EXPECT_EQ(nccl_version_name(*nccl_version_of_code(22105)), "2.21.5");
  EXPECT_EQ(nccl_version_name(*nccl_version_of_code(2708)), "2.7.8");
  for (const NcclVersion &v : kNcclReleases) // the code each release prints reads back as it
    EXPECT_EQ(nccl_version_of_code(nccl_version_code(v)), v) << nccl_version_name(v);
  for (int bad : {0, 1, 30000, 20805, 12345, 2999})
    EXPECT_FALSE(nccl_version_of_code(bad)) << bad;
  const auto nearest = [](int code) {
    return nccl_version_name(nearest_modelled_release(*nccl_version_of_code(code)));
  };
  EXPECT_EQ(nearest(22105), "2.21.5");
  EXPECT_EQ(nearest(22106), "2.21.5"); // a patch the model does not list
  EXPECT_EQ(nearest(22202), "2.21.5"); // before 2.22.3
  EXPECT_EQ(nearest(21304), "2.18.1"); // before every modelled release
  EXPECT_EQ(nearest(23001), "2.29.7"); // after them
}

TEST(NcclVersionTest, TwoH100NodesTakeNvlsTreeFrom218AndNeverBefore) {
  // Before 2.18 there was no NVLS tree; every release here has it, and two NVSwitch nodes take it
  // for a large AllReduce under each. Forced under a release without it, the run says which
  // release added it.
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  for (std::string_view release : {"2.18.1", "2.21", "2.29"}) {
    auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *system, *machine,
                             under(release));
    ASSERT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(run->choice.algorithm, NcclAlgorithm::NvlsTree) << release;
  }
  EXPECT_TRUE(nccl_has_algorithm(kNcclReleases[0], NcclAlgorithm::NvlsTree));
}

TEST(NcclVersionTest, OneGpuPerNodeAllgatherRunsPatFrom223AndRingBefore) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 16, 1);
  ASSERT_TRUE(system) << system.error().to_string();
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  const int64_t bytes = int64_t(2) << 20;
  auto newer = simulate_nccl(CollectiveKind::Allgather, bytes, *system, *machine, under("2.23"));
  ASSERT_TRUE(newer) << newer.error().to_string();
  EXPECT_EQ(newer->choice.algorithm, NcclAlgorithm::Pat);
  auto older = simulate_nccl(CollectiveKind::Allgather, bytes, *system, *machine, under("2.22"));
  ASSERT_TRUE(older) << older.error().to_string();
  EXPECT_NE(older->choice.algorithm, NcclAlgorithm::Pat);
  NcclRunOptions forced = under("2.22.3");
  forced.algorithm = NcclAlgorithm::Pat;
  auto refused = simulate_nccl(CollectiveKind::Allgather, bytes, *system, *machine, forced);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().to_string(), "NCCL 2.22.3 has no PAT: it came in 2.23\n");
}

} // namespace
} // namespace syncoll::nccl
