// The NCCL transport: the unique id's hand-over through a file (runs everywhere), NCCL's device
// API on one rank of this GPU, and a verified program across every GPU of the machine, one thread
// per GPU and rank (NCCL's device-API example drives its ranks the same way). GPU tests skip with
// the reason when the machine has too few GPUs.
#include "backend/nccl_transport.h"
#include "model/collective_traits.h"
#include "nccl/algorithms.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

namespace syncoll::backend {
namespace {

std::string scratch_path(const std::string &name) {
  return (std::filesystem::temp_directory_path() / fmt::format("syncoll-{}-{}", ::getpid(), name))
      .string();
}

TEST(NcclTransportTest, TheUniqueIdReachesEveryRankWhole) {
  const std::string path = scratch_path("id");
  std::filesystem::remove(path);
  UniqueIdBytes id{};
  for (size_t i = 0; i < id.size(); ++i)
    id[i] = char(i * 7 + 1);
  // A reader that starts before the writer waits for it.
  std::thread reader([&] {
    auto got = read_unique_id(path, std::chrono::seconds(10));
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_EQ(*got, id);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(write_unique_id(path, id));
  reader.join();
  std::filesystem::remove(path);
}

TEST(NcclTransportTest, ARankWhoseIdNeverComesSaysSoAfterItsTimeout) {
  const std::string path = scratch_path("never");
  std::filesystem::remove(path);
  auto got = read_unique_id(path, std::chrono::milliseconds(100));
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().to_string().find("no NCCL unique id appeared within 100 ms"),
            std::string::npos)
      << got.error().to_string();
}

TEST(NcclTransportTest, NcclLoadsAtRunTimeAndNamesItsRelease) {
  // Nothing links NCCL: the library is loaded when first used, here the one CMake found, named
  // by SYNCOLL_NCCL_LIBRARY as a user names a wheel's; NCCL 2.28 or newer on this project's
  // machines.
#ifndef SYNCOLL_TEST_NCCL_LIBRARY
  GTEST_SKIP() << "this build has no CUDA backend, so no NCCL to load";
#else
  ASSERT_EQ(setenv("SYNCOLL_NCCL_LIBRARY", SYNCOLL_TEST_NCCL_LIBRARY, 1), 0);
#endif
  auto release = nccl_release();
  ASSERT_TRUE(release) << release.error().to_string();
  int major = 0, minor = 0, patch = 0;
  ASSERT_EQ(std::sscanf(release->c_str(), "%d.%d.%d", &major, &minor, &patch), 3) << *release;
  EXPECT_EQ(major, 2) << *release;
  EXPECT_GE(minor, 28) << *release;
}

TEST(NcclTransportTest, TheDeviceApiWorksOnOneRankOfThisGpu) {
  if (auto reason = cuda_unavailable())
    GTEST_SKIP() << "no GPU: " << *reason;
  auto check = nccl_device_api_check();
  EXPECT_TRUE(check) << check.error().to_string();
}

TEST(NcclTransportTest, ARingRunsAcrossEveryGpuOfThisMachine) {
  if (auto reason = cuda_unavailable())
    GTEST_SKIP() << "no GPU: " << *reason;
  const int devices = cuda_device_count();
  if (devices < 2)
    GTEST_SKIP() << "the NCCL transport runs one rank per GPU (NCCL 2.28 refuses two ranks on "
                    "one GPU); this machine has "
                 << devices;
  std::vector<RankId> ring;
  for (int r = 0; r < devices; ++r)
    ring.emplace_back(r);
  for (auto kind : {CollectiveKind::Allgather, CollectiveKind::Allreduce}) {
    auto p = nccl::nccl_ring_program(kind, {ring, ring}, Protocol::Simple);
    ASSERT_TRUE(p) << p.error().to_string();
    auto verified = verifier::certify(*p, {});
    ASSERT_TRUE(verified) << verified.error().to_text();
    const ExecutableProgram e = ExecutableProgram::lower(*verified);
    const std::string id_file = scratch_path(std::string(collective_kind_name(kind)));
    std::filesystem::remove(id_file);
    std::vector<Expected<CudaReport>> reports(size_t(devices), fail({}, "not run"));
    std::vector<std::thread> ranks;
    for (int r = 0; r < devices; ++r)
      ranks.emplace_back([&, r] {
        NcclRunOptions o;
        o.cuda.run.size_bytes = int64_t(nccl_tests_chunks(e.collective())) * 4 * 100'000;
        o.cuda.timed_launches = 3;
        o.rank = r;
        o.device = r;
        o.id_file = id_file;
        reports[size_t(r)] = run_on_nccl(e, o);
      });
    for (std::thread &t : ranks)
      t.join();
    std::filesystem::remove(id_file);
    for (int r = 0; r < devices; ++r) {
      const auto &report = reports[size_t(r)];
      ASSERT_TRUE(report) << "rank " << r << ": " << report.error().to_string();
      EXPECT_TRUE(report->run.correct())
          << collective_kind_name(kind) << " rank " << r << ": "
          << (report->run.first_mismatches.empty() ? "hung" : report->run.first_mismatches[0]);
    }
  }
}

} // namespace
} // namespace syncoll::backend
