// NCCL across nodes of NVSwitch GPUs: its channels beside NVLS, NVLS tree's pipeline.
#include "model/hardware.h"
#include "model/runtime_constants.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "nccl/tuning.h"
#include "simulator/system_model.h"

#include <cmath>
#include <gtest/gtest.h>
#include <string>
#include <string_view>

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

// NCCL's search on SM90 and later also tries the plain tree and keeps it on NIC-per-GPU nodes,
// and its tuning prices a plain tree at 0.85 of the bandwidth: 64 B200 nodes with NVLS off then
// run a 2 GiB AllReduce as a ring (measured 274 GB/s; a forced tree there measures 186), where a
// balanced tree's price would have chosen the tree. A100 nodes keep the balanced tree and its full
// price.
TEST(NcclTuningTest, APlainTreeIsPricedAtEightyFivePercentOfItsBandwidth) {
  EXPECT_EQ(nccl_searched_tree_pattern(GpuGeneration::Hopper, 8, 8), NcclTreePattern::Tree);
  EXPECT_EQ(nccl_searched_tree_pattern(GpuGeneration::Blackwell, 4, 4), NcclTreePattern::Tree);
  EXPECT_EQ(nccl_searched_tree_pattern(GpuGeneration::Hopper, 8, 4), NcclTreePattern::BalancedTree);
  EXPECT_EQ(nccl_searched_tree_pattern(GpuGeneration::Ampere, 8, 8), NcclTreePattern::BalancedTree);
  auto system = simulator::make_system_model(*find_system_preset("dgx_b200"), 64);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  NcclTuningInput in = machine->tuning_input();
  EXPECT_EQ(in.tree_pattern, NcclTreePattern::Tree);
  in.nvls = false;
  const double bytes = double(int64_t(2) << 30);
  auto plain = nccl_choose(CollectiveKind::Allreduce, bytes, in);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->algorithm, NcclAlgorithm::Ring);
  auto tree_bus = [&](const NcclTuningInput &input) {
    for (const NcclEstimate &e : nccl_estimates(CollectiveKind::Allreduce, bytes, input))
      if (e.algorithm == NcclAlgorithm::Tree && e.protocol == Protocol::LL128)
        return e.bus_gbps;
    ADD_FAILURE() << "no tree estimate";
    return 0.0;
  };
  NcclTuningInput balanced = in;
  balanced.tree_pattern = NcclTreePattern::BalancedTree;
  EXPECT_NEAR(tree_bus(in), 0.85 * tree_bus(balanced), 1e-9 * tree_bus(balanced));
  auto chosen = nccl_choose(CollectiveKind::Allreduce, bytes, balanced);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->algorithm, NcclAlgorithm::Tree);
  auto a100 = simulator::make_system_model(*find_system_preset("dgx_a100"), 4);
  ASSERT_TRUE(a100);
  auto a100_machine = nccl_machine(*a100);
  ASSERT_TRUE(a100_machine);
  EXPECT_EQ(a100_machine->tuning_input().tree_pattern, NcclTreePattern::BalancedTree);
  // A graph file's rings alone leave the trees and their price the search's; its trees set the
  // pattern they declare.
  const NcclMachine rings_only =
      with_graphs(*a100, *a100_machine, a100_machine->ring, std::nullopt, std::nullopt);
  EXPECT_EQ(rings_only.tuning_input().tree_pattern, NcclTreePattern::BalancedTree);
  std::vector<NcclTreeChain> plain_chains = nccl_tree_chains(*a100, *a100_machine, 4);
  for (NcclTreeChain &chain : plain_chains)
    chain.pattern = NcclTreePattern::Tree;
  const NcclMachine given =
      with_graphs(*a100, *a100_machine, std::nullopt, plain_chains, std::nullopt);
  EXPECT_EQ(given.tuning_input().tree_pattern, NcclTreePattern::Tree);
}

TEST(NcclRunTest, NvlsTreeFillsItsPipelineInNcclsChunks) {
  // DGX H100 nodes, NVLS tree: NCCL pipelines it in 64 KiB chunks per channel and NVLS head on 4
  // nodes or more, so at 64 MiB the pipeline's fill costs about a third of the time: measured
  // 208 of 325 GB/s (4 nodes) and 228 of 321 GB/s (8 nodes) of the 8 GiB bus bandwidth. A fill
  // in steps of a node's NVLS (884 KiB a channel) reaches half of it.
  for (int nodes : {4, 8}) {
    auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), nodes);
    ASSERT_TRUE(system);
    auto machine = nccl_machine(*system);
    ASSERT_TRUE(machine);
    NcclRunOptions tree;
    tree.algorithm = NcclAlgorithm::NvlsTree;
    auto mid = simulate_nccl(CollectiveKind::Allreduce, int64_t(64) << 20, *system, *machine, tree);
    auto large =
        simulate_nccl(CollectiveKind::Allreduce, int64_t(8) << 30, *system, *machine, tree);
    ASSERT_TRUE(mid && large);
    const double reached = mid->result.busbw_gbps / large->result.busbw_gbps;
    EXPECT_GT(reached, 0.55) << nodes << " nodes";
    EXPECT_LT(reached, 0.85) << nodes << " nodes";
  }
}

TEST(NcclRunTest, BroadcastAndReduceRingsPipelineOneFifoSlotUnderSimple) {
  // NCCL's Broadcast and Reduce move Simple down their 16-GPU chain in chunks of one 512 KiB
  // slot (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1), not the four of AllReduce's: at 32 MiB on
  // two DGX H100 nodes the chain fills and Simple keeps within a tenth of LL128, where a 2 MiB
  // chunk per channel (each hop waiting for a whole one) made it 2.3x slower.
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  for (CollectiveKind kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce}) {
    double us[2] = {};
    for (Protocol protocol : {Protocol::Simple, Protocol::LL128}) {
      NcclRunOptions forced;
      forced.algorithm = NcclAlgorithm::Ring;
      forced.protocol = protocol;
      auto run = simulate_nccl(kind, int64_t(32) << 20, *system, *machine, forced);
      ASSERT_TRUE(run) << run.error().to_string();
      us[protocol == Protocol::Simple ? 0 : 1] = double(run->result.completion) / 1e6;
    }
    EXPECT_LT(us[0], 1.1 * us[1]) << collective_kind_name(kind);
  }
}

TEST(NcclRunTest, RingsPayTheRingsHopAndTreesTheTreesHop) {
  // The generation row holds two LL128 hops: a ring's (every step in series) and NCCL's tree's.
  // Lengthening one moves the algorithm that pays it, by about the hops on its critical path,
  // and leaves the other alone: a ring on 2 DGX H100 nodes has 30 steps, a tree far fewer.
  const SystemPreset &preset = *find_system_preset("dgx_h100");
  const GenerationTraits &row = generation_traits(preset.generation);
  const FabricTraits &fabric = fabric_traits(preset.fabric);
  auto time_us = [&](const GenerationTraits &g, NcclAlgorithm algorithm) {
    auto system = simulator::make_system_model(preset, 2, 0, g, fabric);
    EXPECT_TRUE(system);
    auto machine = nccl_machine(*system);
    EXPECT_TRUE(machine);
    NcclRunOptions forced;
    forced.algorithm = algorithm;
    forced.protocol = Protocol::LL128;
    auto run =
        simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 20, *system, *machine, forced);
    EXPECT_TRUE(run) << run.error().to_string();
    return double(run->result.completion) / 1e6;
  };
  const double extra_us = 2.0;
  GenerationTraits ring_hop = row, tree_hop = row;
  ring_hop.nvlink_hop_us[2] += extra_us;
  tree_hop.nccl_tree_hop_us[2] += extra_us;
  const double ring = time_us(row, NcclAlgorithm::Ring);
  const double tree = time_us(row, NcclAlgorithm::Tree);
  EXPECT_NEAR(time_us(ring_hop, NcclAlgorithm::Ring) - ring, 30 * extra_us, 4 * extra_us);
  EXPECT_DOUBLE_EQ(time_us(tree_hop, NcclAlgorithm::Ring), ring);
  const double tree_longer = time_us(tree_hop, NcclAlgorithm::Tree) - tree;
  EXPECT_GT(tree_longer, 2 * extra_us);
  EXPECT_LT(tree_longer, 30 * extra_us);
  EXPECT_DOUBLE_EQ(time_us(ring_hop, NcclAlgorithm::Tree), tree);
}

TEST(NcclRunTest, LL128ConnectionsAcrossNodesMoveTheFabricsLL128Share) {
  // A forced 4 GiB ring on four DGX B200 nodes (16 channels beside NVLS): under Simple each
  // connection across the network moves the fabric's connection rate, under LL128 its LL128
  // share of it (the 64-node B200 rings measure 208-215 GB/s at 2-4 GiB under LL128).
  auto b200 = nccl_system(*find_system_preset("dgx_b200"), 4);
  ASSERT_TRUE(b200) << b200.error().to_string();
  const FabricTraits &fabric = *b200->system.fabric;
  for (Protocol protocol : {Protocol::Simple, Protocol::LL128}) {
    NcclRunOptions forced;
    forced.algorithm = NcclAlgorithm::Ring;
    forced.protocol = protocol;
    auto run = simulate_nccl(CollectiveKind::Allgather, int64_t(4) << 30, b200->system, b200->nccl,
                             forced);
    ASSERT_TRUE(run) << run.error().to_string();
    const double expected = kNcclRingChannelsBesideNvls * fabric.connection_gbps *
                            (protocol == Protocol::LL128 ? fabric.ll128_connection_share : 1.0);
    EXPECT_NEAR(run->result.busbw_gbps, expected, 0.06 * expected)
        << protocol_traits(protocol).name;
  }
}

TEST(NcclRunTest, SmallMessagesPayTheFabricsMessageCostOncePerTreeLevel) {
  // An 8-byte Allreduce is NCCL's LL tree: one network message per level up and one down. The
  // same DGX H100 nodes on EFA instead of InfiniBand take the difference of the two fabrics'
  // per-message costs that many times longer, and nothing more: 2 messages on 2 nodes, 4 on 4.
  // (EFA's proxy cost, which queues a head's second child behind its first, is left out here:
  // AGpusProxyPostsItsMessagesAcrossTheNetworkOneAfterAnother tests it.)
  const SystemPreset &preset = *find_system_preset("dgx_h100");
  const GenerationTraits &row = generation_traits(preset.generation);
  auto time_us = [&](int nodes, Fabric fabric) {
    FabricTraits unproxied = fabric_traits(fabric);
    unproxied.proxy_message_us = 0;
    auto system = simulator::make_system_model(preset, nodes, 0, row, unproxied);
    EXPECT_TRUE(system);
    auto machine = nccl_machine(*system);
    EXPECT_TRUE(machine);
    auto run = simulate_nccl(CollectiveKind::Allreduce, 8, *system, *machine, {});
    EXPECT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(run->choice.algorithm, NcclAlgorithm::Tree);
    return double(run->result.completion) / 1e6;
  };
  auto message_us = [](Fabric fabric) {
    const FabricTraits &f = fabric_traits(fabric);
    return f.message_latency_us + f.host_cost_us;
  };
  const double apart = message_us(Fabric::EfaV2) - message_us(Fabric::InfinibandNdr);
  ASSERT_GT(apart, 0);
  for (int nodes : {2, 4}) {
    const double levels = 2 * std::log2(double(nodes));
    EXPECT_NEAR(time_us(nodes, Fabric::EfaV2) - time_us(nodes, Fabric::InfinibandNdr),
                levels * apart, 0.05 * levels * apart)
        << nodes << " nodes";
  }
}

TEST(NcclRunTest, EfaStripesAConnectionOverItsGpusDevices) {
  // A p5 gives each GPU four 100 Gb/s EFA devices, a p5en two of 200, and aws-ofi-nccl shows
  // NCCL one 400 Gb/s NIC per GPU either way, a connection striped over its devices: the same
  // H100 nodes move a large Allreduce across 4 nodes in the same time on both.
  auto time_us = [](std::string_view name) {
    auto machine = nccl_system(*find_system_preset(name), 4);
    EXPECT_TRUE(machine) << machine.error().to_string();
    NcclRunOptions own; // NCCL's own choice: the plugin's tables differ between the two
    own.tuner_plugin = false;
    auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(4) << 30, machine->system,
                             machine->nccl, own);
    EXPECT_TRUE(run) << run.error().to_string();
    return double(run->result.completion) / 1e6;
  };
  EXPECT_DOUBLE_EQ(time_us("aws_p5"), time_us("aws_p5en"));
}

TEST(NcclRunTest, AwsNodesRunTheRegionTunersChoiceFromThreeNodes) {
  // aws-ofi-nccl's region tuner picks on 3 nodes or more of 8 GPUs: on 16 p5 nodes a 128 MiB
  // AllReduce runs NCCL's LL128 tree (measured 2.06 ms), where NCCL's own model picks NVLS tree.
  // On 2 nodes, with the plugin off, or with NCCL_ALGO set, NCCL's own model chooses.
  auto choose = [](std::string_view system, int nodes, const NcclRunOptions &o) {
    auto machine = nccl_system(*find_system_preset(system), nodes);
    EXPECT_TRUE(machine) << machine.error().to_string();
    auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(128) << 20, machine->system,
                             machine->nccl, o);
    EXPECT_TRUE(run) << run.error().to_string();
    return *run;
  };
  const NcclRun picked = choose("aws_p5", 16, {});
  EXPECT_EQ(picked.choice.algorithm, NcclAlgorithm::Tree);
  EXPECT_EQ(picked.choice.protocol, Protocol::LL128);
  EXPECT_NE(picked.info.find("aws-ofi-nccl region tuner"), std::string::npos) << picked.info;
  NcclRunOptions own;
  own.tuner_plugin = false;
  const NcclRun nccl_own = choose("aws_p5", 16, own);
  EXPECT_EQ(nccl_own.choice.algorithm, NcclAlgorithm::NvlsTree);
  EXPECT_EQ(nccl_own.info.find("tuner"), std::string::npos) << nccl_own.info;
  const NcclRun pair = choose("aws_p5", 2, {});
  EXPECT_EQ(pair.info.find("tuner"), std::string::npos) << pair.info;
  NcclRunOptions ring;
  ring.algorithm = NcclAlgorithm::Ring;
  EXPECT_EQ(choose("aws_p5", 16, ring).choice.algorithm, NcclAlgorithm::Ring);
  // A machine without the plugin: the same nodes over InfiniBand choose as NCCL does.
  EXPECT_EQ(choose("dgx_superpod_h100", 16, {}).info.find("tuner"), std::string::npos);
}

TEST(NcclRunTest, P4deRunsSimpleAtEverySizeAsAwsOfiNcclSetsIt) {
  // aws-ofi-nccl sets NCCL_PROTO=simple on p4d and p4de, whose EFA devices do not deliver
  // 128-byte stores in order: NCCL runs Simple from 8 B to 1 GiB there, and says why. A protocol
  // the user sets wins (the plugin only warns); A100 nodes on InfiniBand keep LL for 8 bytes.
  auto p4de = nccl_system(*find_system_preset("aws_p4de"), 2);
  ASSERT_TRUE(p4de) << p4de.error().to_string();
  for (int64_t size : {int64_t(8), int64_t(1) << 20, int64_t(1) << 30}) {
    auto run = simulate_nccl(CollectiveKind::Allreduce, size, p4de->system, p4de->nccl, {});
    ASSERT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(run->choice.protocol, Protocol::Simple) << size << " B: " << run->info;
    EXPECT_NE(run->info.find("NCCL_PROTO=simple: aws-ofi-nccl on efa_v1"), std::string::npos)
        << run->info;
  }
  auto candidates = nccl_candidates(CollectiveKind::Allreduce, 8, p4de->system, p4de->nccl, {});
  ASSERT_TRUE(candidates);
  for (const NcclEstimate &e : *candidates)
    EXPECT_EQ(e.protocol, Protocol::Simple);
  NcclRunOptions ll;
  ll.protocol = Protocol::LL;
  auto asked = simulate_nccl(CollectiveKind::Allreduce, 8, p4de->system, p4de->nccl, ll);
  ASSERT_TRUE(asked) << asked.error().to_string();
  EXPECT_EQ(asked->choice.protocol, Protocol::LL);
  EXPECT_EQ(asked->info.find("NCCL_PROTO=simple"), std::string::npos) << asked->info;
  auto hdr = nccl_system(*find_system_preset("dgx_a100"), 2);
  ASSERT_TRUE(hdr);
  auto small = simulate_nccl(CollectiveKind::Allreduce, 8, hdr->system, hdr->nccl, {});
  ASSERT_TRUE(small);
  EXPECT_EQ(small->choice.protocol, Protocol::LL);
}

TEST(NcclTreeChunkTest, SimpleTreeChunksHalveUntilEveryChannelFillsTheTree) {
  // Two nodes of 8 GPUs (a tree 8 deep) on 24 channels: one 512 KiB FIFO slot while a channel
  // holds 64 chunks of it, else halved down to 128 KiB, to 64 KiB while it holds fewer than 32,
  // to 32 KiB while fewer than 8.
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, int64_t(2) << 30, 24, 2, 8), 512 * 1024);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, int64_t(128) << 20, 24, 2, 8), 128 * 1024);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, int64_t(16) << 20, 24, 2, 8), 64 * 1024);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, int64_t(2) << 20, 24, 2, 8), 32 * 1024);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, 8, 1, 2, 8), 32 * 1024);
  // A deeper tree (64 nodes: 7 + 6 levels) halves sooner.
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, int64_t(512) << 20, 24, 2, 8), 256 * 1024);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::Simple, int64_t(512) << 20, 24, 64, 8), 128 * 1024);
}

TEST(NcclTreeChunkTest, Ll128TreeChunksHalveTowardsWhatADeepTreeNeeds) {
  // One 614,400-byte LL128 slot (576,000 B of payload), halved while a channel holds fewer than
  // (1 + log2 nodes + ppn / 10) x 64 / ppn chunks (22.4 on 2 nodes of 8), stopping at or under
  // 128 KiB, then while fewer than a quarter of that (5.6), stopping at or under 32 KiB.
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::LL128, int64_t(2) << 30, 16, 2, 8), 576'000);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::LL128, int64_t(8) << 20, 16, 2, 8), 72'000);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::LL128, int64_t(1) << 20, 16, 2, 8), 18'000);
  // 64 nodes want 62.4 and 15.6 chunks a channel: 8 MiB goes down to the smallest chunk.
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::LL128, int64_t(8) << 20, 16, 64, 8), 18'000);
  // LL: one slot's payload at every size.
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::LL, 8, 1, 2, 8), 32 * 1024);
  EXPECT_EQ(nccl_tree_chunk_bytes(Protocol::LL, int64_t(2) << 30, 16, 64, 8), 32 * 1024);
}

TEST(NcclRunTest, AGpusProxyPostsItsMessagesAcrossTheNetworkOneAfterAnother) {
  // EFA's first software generation holds a GPU's proxy thread for every message: an 8-byte
  // tree's one channel sends one chunk (NCCL's chunk count, not a fixed pipeline), so each head's
  // one message across the network finds its proxy free, while a 16 MiB tree's 24 channels queue
  // their 64 KiB chunks at the proxies of the GPUs that hold the NICs.
  const SystemPreset &preset = *find_system_preset("aws_p4de");
  const GenerationTraits &row = generation_traits(preset.generation);
  FabricTraits without = fabric_traits(preset.fabric);
  ASSERT_GT(without.proxy_message_us, 0);
  without.proxy_message_us = 0;
  auto time_us = [&](const FabricTraits &fabric, int64_t size) {
    auto system = simulator::make_system_model(preset, 2, 0, row, fabric);
    EXPECT_TRUE(system);
    auto machine = nccl_machine(*system);
    EXPECT_TRUE(machine);
    auto run = simulate_nccl(CollectiveKind::Allreduce, size, *system, *machine, {});
    EXPECT_TRUE(run) << run.error().to_string();
    return double(run->result.completion) / 1e6;
  };
  const FabricTraits &with = fabric_traits(preset.fabric);
  const double small = time_us(with, 8) - time_us(without, 8);
  EXPECT_NEAR(small, 0, 1e-6);
  const int64_t mid = int64_t(16) << 20;
  EXPECT_GT(time_us(with, mid), 1.1 * time_us(without, mid));
}

} // namespace
} // namespace syncoll::nccl
