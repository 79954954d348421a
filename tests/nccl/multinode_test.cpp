// NCCL's channels across nodes of NVSwitch GPUs, beside NVLS.
#include "model/hardware.h"
#include "model/runtime_constants.h"
#include "nccl/run.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>

namespace syncoll::nccl {
namespace {

TEST(NcclRunTest, RingsAcrossNvlsNodesRunOnSixteenChannelsUnlessNvlsIsOff) {
  // Four DGX B200 nodes, a forced 4 GiB ring: with NVLS enabled it runs 16 channels, held to 16
  // connections at the fabric's rate; with NCCL_NVLS_ENABLE=0 it runs all 32 and reaches the
  // NICs' rate (measured 311 and 361-390 GB/s). NCCL_MIN_NCHANNELS still sets the count.
  auto system = simulator::make_system_model(*find_system_preset("dgx_b200"), 4);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  const int64_t size = int64_t(4) << 30;
  NcclRunOptions ring;
  ring.algorithm = NcclAlgorithm::Ring;
  auto beside = simulate_nccl(CollectiveKind::Allreduce, size, *system, *machine, ring);
  ASSERT_TRUE(beside) << beside.error().to_string();
  EXPECT_EQ(beside->choice.channels, kNcclRingChannelsBesideNvls);
  NcclRunOptions off = ring;
  off.nvls = false;
  auto alone = simulate_nccl(CollectiveKind::Allreduce, size, *system, *machine, off);
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->choice.channels, machine->ring.runtime_channels());
  EXPECT_GT(alone->choice.channels, kNcclRingChannelsBesideNvls);
  const double connection = system->fabric->connection_gbps;
  EXPECT_NEAR(beside->result.busbw_gbps, kNcclRingChannelsBesideNvls * connection,
              0.05 * kNcclRingChannelsBesideNvls * connection);
  EXPECT_GT(alone->result.busbw_gbps, 1.1 * beside->result.busbw_gbps);
  NcclRunOptions pinned = ring;
  pinned.channels = 32;
  auto asked = simulate_nccl(CollectiveKind::Allreduce, size, *system, *machine, pinned);
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->choice.channels, 32);
  // One node has no network connections to spare: its ring keeps every channel.
  auto one = simulator::make_system_model(*find_system_preset("dgx_b200"));
  ASSERT_TRUE(one);
  auto one_machine = nccl_machine(*one);
  ASSERT_TRUE(one_machine);
  auto inside = simulate_nccl(CollectiveKind::Allreduce, size, *one, *one_machine, ring);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->choice.channels, one_machine->ring.runtime_channels());
}

} // namespace
} // namespace syncoll::nccl
