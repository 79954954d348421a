// NCCL's CollNet (in-network reduction, IB SHARP): when NCCL may take it, what it costs, and
// what it refuses.
#include "model/hardware.h"
#include "nccl/run.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>

namespace syncoll::nccl {
namespace {

NcclSystem machine(std::string_view preset, int nodes, int gpus = 0) {
  auto made = nccl_system(*find_system_preset(preset), nodes, gpus);
  EXPECT_TRUE(made) << made.error().to_string();
  return *std::move(made);
}

Expected<NcclRun> run(const NcclSystem &m, CollectiveKind kind, int64_t bytes,
                      std::optional<NcclAlgorithm> algorithm, bool collnet) {
  NcclRunOptions o;
  o.algorithm = algorithm;
  o.collnet = collnet;
  return simulate_nccl(kind, bytes, m.system, m.nccl, o);
}

bool listed(const NcclSystem &m, CollectiveKind kind, NcclAlgorithm algorithm, bool collnet,
            NcclVersion version = kNewestNcclVersion) {
  NcclTuningInput in = m.nccl.tuning_input();
  in.collnet = collnet;
  in.version = version;
  for (const NcclEstimate &e : nccl_estimates(kind, double(int64_t(1) << 30), in))
    if (e.algorithm == algorithm)
      return true;
  return false;
}

constexpr int64_t kGiB = int64_t(1) << 30;

TEST(NcclCollNetTest, OffUnlessEnabledAndOnlyWhereTheNetworkReduces) {
  // NCCL_COLLNET_ENABLE is 0 by default: NCCL's choice never takes CollNet, nor NVLS across
  // nodes, which reduces through CollNet.
  const NcclSystem h100 = machine("dgx_h100", 4);
  for (NcclAlgorithm a :
       {NcclAlgorithm::CollNetDirect, NcclAlgorithm::CollNetChain, NcclAlgorithm::Nvls})
    EXPECT_FALSE(listed(h100, CollectiveKind::Allreduce, a, false)) << nccl_algorithm_name(a);
  for (NcclAlgorithm a :
       {NcclAlgorithm::CollNetDirect, NcclAlgorithm::CollNetChain, NcclAlgorithm::Nvls})
    EXPECT_TRUE(listed(h100, CollectiveKind::Allreduce, a, true)) << nccl_algorithm_name(a);
  auto forced = run(h100, CollectiveKind::Allreduce, kGiB, NcclAlgorithm::CollNetDirect, false);
  ASSERT_FALSE(forced);
  EXPECT_NE(forced.error().to_string().find("NCCL_COLLNET_ENABLE=1"), std::string::npos);
  // EFA's switches reduce nothing: CollNet is refused, naming the fabric.
  const NcclSystem p5 = machine("aws_p5", 2);
  auto efa = run(p5, CollectiveKind::Allreduce, kGiB, std::nullopt, true);
  ASSERT_FALSE(efa);
  EXPECT_NE(efa.error().to_string().find("efa_v2"), std::string::npos);
  // One node has no network to reduce in.
  const NcclSystem one = machine("dgx_h100", 1);
  EXPECT_FALSE(listed(one, CollectiveKind::Allreduce, NcclAlgorithm::CollNetDirect, true));
}

TEST(NcclCollNetTest, DirectNeedsAnNvSwitchAndAtMostEightGpusANode) {
  // DGX-1's fixed NVLink mesh: no CollNet Direct, CollNet Chain yes. A GB200 NVL72 rack is one
  // node of 72 GPUs: neither (NCCL_MAX_DIRECT_ARITY + 1 = 8 local ranks at most).
  const NcclSystem dgx1 = machine("dgx1", 2);
  EXPECT_FALSE(listed(dgx1, CollectiveKind::Allreduce, NcclAlgorithm::CollNetDirect, true));
  EXPECT_TRUE(listed(dgx1, CollectiveKind::Allreduce, NcclAlgorithm::CollNetChain, true));
  const NcclSystem racks = machine("gb200_nvl72", 2);
  EXPECT_FALSE(listed(racks, CollectiveKind::Allreduce, NcclAlgorithm::CollNetDirect, true));
  EXPECT_FALSE(listed(racks, CollectiveKind::Allreduce, NcclAlgorithm::CollNetChain, true));
}

TEST(NcclCollNetTest, GatherAndScatterInTheNetworkFrom220WithANicPerGpu) {
  // SHARP reduces AllGather and ReduceScatter with NCCL 2.20 or newer, each GPU through its own
  // NIC: DGX H100 (8 NICs for 8 GPUs) from 2.20 on; DGX-1 (4 NICs for 8 GPUs) never.
  const NcclSystem h100 = machine("dgx_h100", 2);
  for (CollectiveKind kind : {CollectiveKind::Allgather, CollectiveKind::ReduceScatter}) {
    EXPECT_TRUE(listed(h100, kind, NcclAlgorithm::CollNetDirect, true, {20, 3}));
    EXPECT_FALSE(listed(h100, kind, NcclAlgorithm::CollNetDirect, true, {19, 3}));
    EXPECT_FALSE(listed(h100, kind, NcclAlgorithm::CollNetChain, true));
  }
  const NcclSystem dgx1 = machine("dgx1", 2);
  EXPECT_FALSE(listed(dgx1, CollectiveKind::Allgather, NcclAlgorithm::CollNetDirect, true));
  // It only crosses the network: a node's NICs receive the other nodes' share of the buffer,
  // (N - 1) / N of it, so at 4 GiB 8 nodes take 7/8 / 1/2 = 1.75 times as long as 2 do.
  const NcclSystem two = machine("dgx_h100", 2);
  const NcclSystem eight = machine("dgx_h100", 8);
  auto on_two = run(two, CollectiveKind::Allgather, 4 * kGiB, NcclAlgorithm::CollNetDirect, true);
  auto on_eight =
      run(eight, CollectiveKind::Allgather, 4 * kGiB, NcclAlgorithm::CollNetDirect, true);
  ASSERT_TRUE(on_two && on_eight);
  EXPECT_NEAR(double(on_eight->result.completion) / double(on_two->result.completion), 1.75, 0.03);
}

TEST(NcclCollNetTest, TheNetworkCarriesTheBufferOncePerNodeWhateverTheNodeCount) {
  // The switches reduce: a node's NICs send its buffer once and receive the sum once on 2 nodes
  // as on 64, so CollNet Direct's time at 4 GiB stays put while a tree's grows (it crosses the
  // network twice per node beyond 2 nodes), and on DGX A100 nodes (no NVLS) it beats NCCL's ring
  // by more than the ring's two crossings per node leave it: 1.3x or more of bus bandwidth.
  std::vector<double> direct_us;
  for (int nodes : {2, 8, 64}) {
    const NcclSystem a100 = machine("dgx_a100", nodes);
    auto direct =
        run(a100, CollectiveKind::Allreduce, 4 * kGiB, NcclAlgorithm::CollNetDirect, true);
    ASSERT_TRUE(direct) << direct.error().to_string();
    EXPECT_TRUE(direct->closed_form);
    direct_us.push_back(double(direct->result.completion) / 1e6);
    if (nodes == 8) {
      auto ring = run(a100, CollectiveKind::Allreduce, 4 * kGiB, NcclAlgorithm::Ring, false);
      ASSERT_TRUE(ring);
      EXPECT_GT(direct->result.busbw_gbps, 1.3 * ring->result.busbw_gbps);
    }
  }
  EXPECT_NEAR(direct_us[2] / direct_us[0], 1.0, 0.02);
  EXPECT_NEAR(direct_us[1] / direct_us[0], 1.0, 0.02);
}

TEST(NcclCollNetTest, TheChainPaysItsDepthWhereTheDirectFanOutDoesNot) {
  // Chain pipelines through the node's 8 GPUs one after another; at 64 MiB its fill is a large
  // share of the time and Direct is faster, while at 8 GiB both are limited by their busiest
  // stage (the chain's ports carry the buffer up and down) and the fill has vanished.
  const NcclSystem a100 = machine("dgx_a100", 4);
  auto chain_mid =
      run(a100, CollectiveKind::Allreduce, int64_t(64) << 20, NcclAlgorithm::CollNetChain, true);
  auto direct_mid =
      run(a100, CollectiveKind::Allreduce, int64_t(64) << 20, NcclAlgorithm::CollNetDirect, true);
  auto chain_large =
      run(a100, CollectiveKind::Allreduce, 8 * kGiB, NcclAlgorithm::CollNetChain, true);
  ASSERT_TRUE(chain_mid && direct_mid && chain_large);
  EXPECT_LT(direct_mid->result.completion, chain_mid->result.completion);
  EXPECT_LT(chain_mid->result.busbw_gbps, 0.8 * chain_large->result.busbw_gbps);
}

TEST(NcclCollNetTest, NcclTakesNvlsAcrossNodesOnHopperAndDirectWithoutNvls) {
  // With CollNet enabled NCCL's tuning prices Direct on Hopper at 0.85 of its rate and NVLS
  // reduces in both switches: on 8 DGX H100 nodes at 1 GiB it takes NVLS; on 8 DGX A100 nodes,
  // which have no NVLS, CollNet Direct. Both run as closed forms.
  const NcclSystem h100 = machine("dgx_h100", 8);
  auto hopper = run(h100, CollectiveKind::Allreduce, kGiB, std::nullopt, true);
  ASSERT_TRUE(hopper);
  EXPECT_EQ(hopper->choice.algorithm, NcclAlgorithm::Nvls);
  EXPECT_TRUE(hopper->closed_form);
  const NcclSystem a100 = machine("dgx_a100", 8);
  auto ampere = run(a100, CollectiveKind::Allreduce, kGiB, std::nullopt, true);
  ASSERT_TRUE(ampere);
  EXPECT_EQ(ampere->choice.algorithm, NcclAlgorithm::CollNetDirect);
  EXPECT_NE(ampere->info.find("COLLNET_DIRECT"), std::string::npos);
}

} // namespace
} // namespace syncoll::nccl
