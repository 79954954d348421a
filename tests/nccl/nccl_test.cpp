#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "nccl/tuning.h"
#include "simulator/algorithm_sim.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"
#include "verifier/verify.h"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::nccl {
namespace {

// NCCL's options as its environment sets them: NCCL_ALGO, NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS.
NcclRunOptions forced(std::optional<NcclAlgorithm> algorithm,
                      std::optional<Protocol> protocol = std::nullopt,
                      std::optional<int> channels = std::nullopt) {
  NcclRunOptions o;
  o.algorithm = algorithm;
  o.protocol = protocol;
  o.channels = channels;
  return o;
}

const GenerationTraits &generation_of(const char *system) {
  return generation_traits(find_system_preset(system)->generation);
}

// Every channel's ring visits every rank once over links of the topology.
void expect_rings(const Topology &t, const NcclRingGraph &g) {
  for (const auto &ring : g.rings) {
    ASSERT_EQ(int(ring.size()), t.num_ranks());
    std::vector<RankId> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int r = 0; r < t.num_ranks(); ++r)
      EXPECT_EQ(sorted[size_t(r)], RankId(r));
    for (size_t i = 0; i < ring.size(); ++i)
      EXPECT_TRUE(t.find_link(ring[i], ring[(i + 1) % ring.size()]));
  }
}

TEST(NcclSearchTest, Dgx1GetsSixRingsOverEveryNvlink) {
  // The hybrid cube-mesh has 6 NVLinks per GPU at NCCL's 20 GB/s each: 6 rings at 20, one
  // NVLink each way per GPU and ring, not one ring repeated.
  const Topology t = dgx1();
  auto g = nccl_search_rings(t, generation_traits(GpuGeneration::Volta));
  ASSERT_TRUE(g);
  expect_rings(t, *g);
  EXPECT_EQ(g->channels(), 6);
  EXPECT_DOUBLE_EQ(g->intra_gbps, 20);
  EXPECT_EQ(g->runtime_channels(), 12);
  // No NVLink lane carries two rings in one direction.
  std::map<std::pair<int, int>, int> uses;
  for (const auto &ring : g->rings)
    for (size_t i = 0; i < ring.size(); ++i)
      ++uses[{ring[i].value(), ring[(i + 1) % ring.size()].value()}];
  for (const auto &[link, n] : uses)
    EXPECT_LE(n, t.capacity(RankId(link.first), RankId(link.second)));
}

TEST(NcclSearchTest, NvswitchNodesSplitFastChannels) {
  // A100: 12 NVLinks x 20 = 240 GB/s per port: 6 channels at 40, split into 12 at 20. H100:
  // 18 x 20.6 = 370.8: 6 at 60, split into 12 at 30 (NCCL's 24 runtime channels).
  auto a100 = nccl_search_rings(dgx_a100(), generation_of("dgx_a100"));
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->channels(), 12);
  EXPECT_DOUBLE_EQ(a100->intra_gbps, 20);
  auto h100 = nccl_search_rings(dgx_h100(), generation_of("dgx_h100"));
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->channels(), 12);
  EXPECT_DOUBLE_EQ(h100->intra_gbps, 30);
  EXPECT_EQ(h100->runtime_channels(), 24);
}

TEST(NcclSearchTest, MultiNodeRingsUseEveryNicAlike) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_a100"), 2);
  ASSERT_TRUE(system);
  auto g = nccl_search_rings(system->line_topology, *system->generation);
  ASSERT_TRUE(g);
  expect_rings(system->topology, *g);
  EXPECT_EQ(g->channels() % 8, 0);
  // Channel c enters each node at a GPU of NIC c mod 8: every GPU once per round of 8.
  std::vector<int> entries(8, 0);
  for (const auto &ring : g->rings)
    ++entries[size_t(ring.front().value())];
  for (int e : entries)
    EXPECT_EQ(e, g->channels() / 8);
  EXPECT_LE(g->inter_gbps, g->intra_gbps);
}

TEST(NcclSearchTest, NoRingNoGraph) {
  EXPECT_FALSE(nccl_search_rings(*star(5), generation_traits(GpuGeneration::Ampere)));
}

TEST(NcclRingProgramTest, RingsPerChannelVerify) {
  const Topology t = dgx1();
  auto g = nccl_search_rings(t, generation_traits(GpuGeneration::Volta));
  ASSERT_TRUE(g);
  for (CollectiveKind kind :
       {CollectiveKind::Allreduce, CollectiveKind::Allgather, CollectiveKind::ReduceScatter,
        CollectiveKind::Broadcast, CollectiveKind::Reduce}) {
    // Rooted collectives start every channel's ring at the root, rank 0.
    const auto rings = g->channel_rings(
        g->channels(), collective_traits(kind).rooted ? std::optional(RankId(0)) : std::nullopt);
    auto p = nccl_ring_program(kind, rings, Protocol::Simple);
    ASSERT_TRUE(p) << p.error().to_string();
    auto v = verifier::certify(*p, {});
    EXPECT_TRUE(v) << collective_kind_name(kind) << "\n" << (v ? "" : v.error().to_text());
  }
  // A ring that is not a permutation is bad input, not a program.
  auto bad = nccl_ring_program(CollectiveKind::Allgather,
                               {{RankId(0), RankId(1), RankId(1), RankId(3)}}, Protocol::Simple);
  EXPECT_FALSE(bad);
}

TEST(NcclRingProgramTest, TreesPatAndAlltoallVerify) {
  std::vector<std::vector<int>> trees;
  for (int c = 0; c < 4; ++c)
    trees.push_back(nccl_tree_parents(2, 4, c));
  auto tree = nccl_tree_allreduce_program(trees, 2, Protocol::Simple);
  ASSERT_TRUE(tree) << tree.error().to_string();
  auto v = verifier::certify(*tree, {});
  EXPECT_TRUE(v) << (v ? "" : v.error().to_text());
  for (int n = 2; n <= 9; ++n) {
    for (auto build : {nccl_pat_allgather_program, nccl_pat_reducescatter_program}) {
      auto pat = build(n, Protocol::Simple);
      ASSERT_TRUE(pat) << pat.error().to_string();
      auto checked = verifier::certify(*pat, {});
      EXPECT_TRUE(checked) << pat->name() << " on " << n << " ranks\n"
                           << (checked ? "" : checked.error().to_text());
    }
  }
  auto a2a = nccl_alltoall_program(6, Protocol::Simple, 2);
  ASSERT_TRUE(a2a) << a2a.error().to_string();
  auto w = verifier::certify(*a2a, {});
  EXPECT_TRUE(w) << (w ? "" : w.error().to_text());
  // Network peers on fewer channels than NVLink peers, and the reverse: every part still lands.
  for (auto [intra, net] : {std::pair{4, 2}, std::pair{1, 2}, std::pair{2, 2}}) {
    auto mixed = nccl_alltoall_program(8, Protocol::Simple, intra, 4, net);
    ASSERT_TRUE(mixed) << mixed.error().to_string();
    auto checked = verifier::certify(*mixed, {});
    EXPECT_TRUE(checked) << intra << " and " << net << " channels\n"
                         << (checked ? "" : checked.error().to_text());
  }
  // 3 and 2 channels: each part in 6 chunks.
  auto odd = nccl_alltoall_program(8, Protocol::Simple, 3, 4, 2);
  ASSERT_TRUE(odd) << odd.error().to_string();
  auto checked_odd = verifier::certify(*odd, {});
  EXPECT_TRUE(checked_odd) << (checked_odd ? "" : checked_odd.error().to_text());
}

TEST(NcclSearchTest, ChannelsBeatOneChannelOnDgx1) {
  // The question a co-design study asks: does NCCL use the cube-mesh's NVLinks? One channel
  // runs one ring; NCCL's 12 run its 6 rings, several times faster.
  const Topology t = dgx1();
  auto g = nccl_search_rings(t, generation_traits(GpuGeneration::Volta));
  ASSERT_TRUE(g);
  auto busbw = [&](int channels) {
    auto p =
        nccl_ring_program(CollectiveKind::Allgather, g->channel_rings(channels), Protocol::Simple);
    simulator::ProgramSimOptions o;
    o.size_bytes = int64_t(1) << 30;
    auto sim = simulator::simulate_program(*p, t, o);
    return sim->result.busbw_gbps;
  };
  EXPECT_GT(busbw(12), 2.5 * busbw(1));
}

TEST(NcclTuningTest, ChoosesAsNcclDoesOnOneNode) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"));
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  NcclTuningInput in = machine->tuning_input();
  // Small AllReduce: ring LL; large: NVLS (Simple), as NCCL 2.27 picks on 8 H200.
  auto small = nccl_choose(CollectiveKind::Allreduce, 64 << 10, in);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->algorithm, NcclAlgorithm::Ring);
  EXPECT_EQ(small->protocol, Protocol::LL);
  auto large = nccl_choose(CollectiveKind::Allreduce, double(int64_t(1) << 30), in);
  ASSERT_TRUE(large);
  EXPECT_EQ(large->algorithm, NcclAlgorithm::Nvls);
  EXPECT_EQ(large->protocol, Protocol::Simple);
  // NVLS off (A100 has none): Simple ring at large sizes.
  auto a100 = simulator::make_system_model(*find_system_preset("dgx_a100"));
  auto a100_machine = nccl_machine(*a100);
  NcclTuningInput ain = a100_machine->tuning_input();
  auto ring = nccl_choose(CollectiveKind::Allreduce, double(int64_t(1) << 30), ain);
  EXPECT_EQ(ring->algorithm, NcclAlgorithm::Ring);
  EXPECT_EQ(ring->protocol, Protocol::Simple);
  EXPECT_EQ(
      nccl_info_line(CollectiveKind::Allreduce, double(int64_t(1) << 30), *ring).substr(0, 56),
      "AllReduce: 1073741824 Bytes -> Algo RING proto Simple ch");
}

TEST(NcclTuningTest, SmallCallsRunOnFewerChannelsLargeOnesOnAll) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_a100"));
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  NcclTuningInput in = machine->tuning_input();
  const int all = machine->ring.runtime_channels();
  auto channels = [&](double bytes, NcclAlgorithm a, Protocol p) {
    for (const NcclEstimate &e : nccl_estimates(CollectiveKind::Allreduce, bytes, in))
      if (e.algorithm == a && e.protocol == p)
        return e.channels;
    ADD_FAILURE() << "no estimate";
    return 0;
  };
  // Ring LL: 512 threads x 8 B x 8 ranks = 32 KiB per channel; tree LL: 4 KiB; Simple: 32 KiB.
  EXPECT_EQ(channels(1024, NcclAlgorithm::Ring, Protocol::LL), 1);
  EXPECT_EQ(channels(65536, NcclAlgorithm::Ring, Protocol::LL), 2);
  EXPECT_EQ(channels(32768, NcclAlgorithm::Tree, Protocol::LL), 8);
  EXPECT_EQ(channels(65537, NcclAlgorithm::Ring, Protocol::Simple), 2);
  EXPECT_EQ(channels(double(int64_t(1) << 30), NcclAlgorithm::Ring, Protocol::LL128), all);
  EXPECT_EQ(channels(double(int64_t(1) << 30), NcclAlgorithm::Tree, Protocol::Simple), all);
}

TEST(NcclTuningTest, TreeCapsPerChannelFallWithTheNodeCountAsNcclsTablesDo) {
  // NCCL 2.28's perChMaxTreeBw and perChMaxTreeLL128Bw on Blackwell: 70 and 55.6 GB/s a channel
  // on one node, 42.8 and 31.67 on two, 24 and 20 on four or more.
  const auto bus_per_channel = [](int nodes, Protocol p) {
    auto system = simulator::make_system_model(*find_system_preset("dgx_b200"), nodes);
    EXPECT_TRUE(system);
    auto machine = nccl_machine(*system);
    EXPECT_TRUE(machine);
    NcclTuningInput in = machine->tuning_input();
    in.tree_pattern = NcclTreePattern::BalancedTree; // no 0.85 for a plain tree
    for (const NcclEstimate &e :
         nccl_estimates(CollectiveKind::Allreduce, double(int64_t(1) << 30), in))
      if (e.algorithm == NcclAlgorithm::Tree && e.protocol == p)
        return e.bus_gbps / machine->ring.channels();
    ADD_FAILURE() << "no tree estimate";
    return 0.0;
  };
  const GenerationTraits &b200 = generation_traits(GpuGeneration::Blackwell);
  for (int nodes : {1, 2, 4, 16}) {
    const size_t scale = size_t(std::min(nodes, 3) - 1);
    EXPECT_LE(bus_per_channel(nodes, Protocol::Simple), b200.nccl_tree_channel_gbps[scale] + 1e-9)
        << nodes;
    EXPECT_LE(bus_per_channel(nodes, Protocol::LL128),
              b200.nccl_tree_ll128_channel_gbps[scale] + 1e-9)
        << nodes;
  }
  // LL128's caps bind across nodes (its 120/128 of the Simple tree's 0.92 x 45 and 0.92 x 24
  // GB/s channels is more): an LL128 tree is priced below the Simple one there, where a ring's
  // LL128 cap (40) would not have.
  EXPECT_DOUBLE_EQ(bus_per_channel(2, Protocol::LL128), 31.67);
  EXPECT_DOUBLE_EQ(bus_per_channel(16, Protocol::LL128), 20.0);
  EXPECT_DOUBLE_EQ(bus_per_channel(1, Protocol::LL128),
                   bus_per_channel(1, Protocol::Simple) * 7 / 9);
}

TEST(NcclTuningTest, AnAmdHostsRingStepsAcrossNodesCostMoreAndItsLlIsCappedLower) {
  // NCCL's getNetOverhead: 2 us a ring step on x86 AMD hosts, 1 elsewhere (x3 under Simple);
  // llMaxBws across nodes: the AMD row's 22.5 GB/s on 2 nodes against Intel's 39.0. DGX A100's
  // hosts are AMD EPYC; its sibling on Intel differs in those two figures alone.
  auto system = simulator::make_system_model(*find_system_preset("dgx_a100"), 2);
  ASSERT_TRUE(system);
  EXPECT_EQ(system->preset->host_cpu, HostCpu::Amd);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  NcclTuningInput amd = machine->tuning_input();
  EXPECT_EQ(amd.host_cpu, HostCpu::Amd);
  NcclTuningInput intel = amd;
  intel.host_cpu = HostCpu::Intel;
  const auto ring = [](const NcclTuningInput &in, Protocol p, double bytes) {
    for (const NcclEstimate &e : nccl_estimates(CollectiveKind::Allreduce, bytes, in))
      if (e.algorithm == NcclAlgorithm::Ring && e.protocol == p)
        return e;
    ADD_FAILURE() << "no ring estimate";
    return NcclEstimate{};
  };
  // 16 ranks, 2(n-1) = 30 steps, 2 across the network: 28 NVLink steps at the overhead's floor.
  EXPECT_GT(ring(amd, Protocol::Simple, 1 << 20).latency_us,
            ring(intel, Protocol::Simple, 1 << 20).latency_us);
  EXPECT_DOUBLE_EQ(ring(amd, Protocol::LL, double(int64_t(1) << 30)).bus_gbps, 22.5);
  EXPECT_DOUBLE_EQ(ring(intel, Protocol::LL, double(int64_t(1) << 30)).bus_gbps, 39.0);
  // One node reads no CPU row.
  auto one = simulator::make_system_model(*find_system_preset("dgx_a100"));
  auto one_machine = nccl_machine(*one);
  ASSERT_TRUE(one_machine);
  NcclTuningInput one_amd = one_machine->tuning_input(), one_intel = one_amd;
  one_intel.host_cpu = HostCpu::Intel;
  EXPECT_DOUBLE_EQ(ring(one_amd, Protocol::LL, 1 << 20).time_us,
                   ring(one_intel, Protocol::LL, 1 << 20).time_us);
}

TEST(NcclTuningTest, RingLatencyIsNcclsFormula) {
  // One node, 8 ranks, ring AllReduce: 14 hops; LL 6.6 + 14 x 0.6 = 15.0 us before bytes.
  auto system = simulator::make_system_model(*find_system_preset("dgx_a100"));
  auto machine = nccl_machine(*system);
  NcclTuningInput in = machine->tuning_input();
  int checked = 0;
  for (const NcclEstimate &e : nccl_estimates(CollectiveKind::Allreduce, 1024, in)) {
    if (e.algorithm != NcclAlgorithm::Ring || e.protocol != Protocol::LL)
      continue;
    EXPECT_NEAR(e.latency_us, 15.0, 1e-9);
    ++checked;
  }
  EXPECT_EQ(checked, 1);
}

TEST(NcclRunTest, AlltoallUnderASharingWindowStaysCloseToExactSharing) {
  // NCCL's point-to-point Alltoall on four DGX H100 nodes: every connection's pieces end and
  // start on saturated fair ports. Sharing the rates once per 5 us instead of at every event
  // delays pieces that start inside a window, by 1-2% here, less where pieces take longer (more
  // nodes); the benches use it where exact sharing takes hours.
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 4);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  for (int64_t bytes : {int64_t(4) << 20, int64_t(16) << 20}) {
    auto exact = simulate_nccl(CollectiveKind::Alltoall, bytes, *system, *machine);
    simulator::SystemModel windowed = *system;
    windowed.model.sharing_window = 5'000'000;
    auto coarse = simulate_nccl(CollectiveKind::Alltoall, bytes, windowed, *machine);
    ASSERT_TRUE(exact && coarse);
    EXPECT_EQ(exact->choice.algorithm, NcclAlgorithm::P2p);
    const double ratio = double(coarse->result.completion) / double(exact->result.completion);
    EXPECT_GE(ratio, 1.0) << bytes;
    EXPECT_LE(ratio, 1.025) << bytes;
  }
}

TEST(NcclRunTest, ForcedAlgorithmsAndTheirLimits) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_a100"));
  auto machine = nccl_machine(*system);
  // A100 has no NVLS: forcing it is an error, not a silent fallback.
  auto nvls = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine,
                            forced(NcclAlgorithm::Nvls));
  EXPECT_FALSE(nvls);
  auto tree = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine,
                            forced(NcclAlgorithm::Tree, Protocol::Simple));
  ASSERT_TRUE(tree) << tree.error().to_string();
  EXPECT_EQ(tree->choice.algorithm, NcclAlgorithm::Tree);
  EXPECT_GT(tree->result.completion, system->model.launch);
  EXPECT_FALSE(simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine,
                             forced(std::nullopt, std::nullopt, 0)));
}

// NCCL_NVLS_ENABLE=0 takes NVLS out of NCCL's choice; NCCL_MIN_CTAS raises the channels it
// chose to at least that many.
TEST(NcclRunTest, NvlsOffAndMinimumChannelsAsTheEnvironmentSetsThem) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"));
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(system && machine);
  const int64_t gib = int64_t(1) << 30;
  auto with = simulate_nccl(CollectiveKind::Allreduce, gib, *system, *machine);
  ASSERT_TRUE(with);
  EXPECT_EQ(with->choice.algorithm, NcclAlgorithm::Nvls);
  NcclRunOptions off;
  off.nvls = false;
  auto without = simulate_nccl(CollectiveKind::Allreduce, gib, *system, *machine, off);
  ASSERT_TRUE(without);
  EXPECT_NE(without->choice.algorithm, NcclAlgorithm::Nvls);
  NcclRunOptions at_least;
  at_least.algorithm = NcclAlgorithm::Ring;
  auto ring = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine,
                            forced(NcclAlgorithm::Ring));
  ASSERT_TRUE(ring);
  at_least.min_channels = ring->choice.channels + 4;
  auto more = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine, at_least);
  ASSERT_TRUE(more);
  EXPECT_EQ(more->choice.channels, std::min(32, ring->choice.channels + 4));
  at_least.min_channels = 1; // below NCCL's own count: no change
  auto same = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine, at_least);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->choice.channels, ring->choice.channels);
}

TEST(NcclRunTest, AcrossNodesEachConnectionMovesAtMostTheFabricsRate) {
  // Two DGX H100 nodes on NDR: a ring of 16 channels crosses each node's 8 NICs on two
  // connections per NIC, each at most the fabric's connection rate, so the ring's bus bandwidth
  // plateaus at 16 x that rate; at 24 channels the NICs' payload rate is what limits it (an H100
  // cluster measured 321 and 392 GB/s).
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  const FabricTraits &ndr = *system->fabric;
  ASSERT_EQ(ndr.fabric, Fabric::InfinibandNdr);
  const int64_t size = int64_t(4) << 30;
  auto busbw_on = [&](int channels) {
    auto run = simulate_nccl(CollectiveKind::Allreduce, size, *system, *machine,
                             forced(NcclAlgorithm::Ring, Protocol::Simple, channels));
    EXPECT_TRUE(run) << run.error().to_string();
    return run ? run->result.busbw_gbps : 0.0;
  };
  const double nics = system->preset->nics_per_node * system->preset->nic_gbps;
  EXPECT_NEAR(busbw_on(16), 16 * ndr.connection_gbps, 0.03 * 16 * ndr.connection_gbps);
  EXPECT_NEAR(busbw_on(24), nics * ndr.nic_payload_share, 0.03 * nics);
  // Without the per-connection cap (a fabric whose connection moves a whole NIC), 16 channels
  // reach the NICs' rate too.
  FabricTraits open = ndr;
  open.connection_gbps = system->preset->nic_gbps;
  auto uncapped = simulator::make_system_model(*system->preset, 2, 0, *system->generation, open);
  ASSERT_TRUE(uncapped);
  auto wide = simulate_nccl(CollectiveKind::Allreduce, size, *uncapped, *machine,
                            forced(NcclAlgorithm::Ring, Protocol::Simple, 16));
  ASSERT_TRUE(wide);
  EXPECT_NEAR(wide->result.busbw_gbps, nics * ndr.nic_payload_share, 0.03 * nics);
}

TEST(NcclRunTest, TheFabricsPerMessageCostSetsSmallMessagesAcrossNodes) {
  // A forced ring of small messages on 4 nodes: 2(n-1) steps, 2(nodes-1) of them across the
  // network, each paying the fabric's latency and host cost; TCPXO's are the highest.
  const SystemPreset &h100 = *find_system_preset("dgx_h100");
  auto time_on = [&](Fabric f) {
    auto system = simulator::make_system_model(h100, 4, 0, generation_traits(h100.generation),
                                               fabric_traits(f));
    EXPECT_TRUE(system);
    auto machine = nccl_machine(*system);
    EXPECT_TRUE(machine);
    auto run = simulate_nccl(CollectiveKind::Allreduce, 1 << 16, *system, *machine,
                             forced(NcclAlgorithm::Ring, Protocol::LL));
    EXPECT_TRUE(run);
    return double(run->result.completion) / 1e6;
  };
  const double ndr = time_on(Fabric::InfinibandNdr), tcpxo = time_on(Fabric::GcpTcpxo);
  const auto per_message = [](Fabric f) {
    return fabric_traits(f).message_latency_us + fabric_traits(f).host_cost_us;
  };
  // The ring's chain of 2(n-1) steps crosses the network between 2(nodes-1) times (NCCL's own
  // count) and 2 x nodes times (every node boundary of the ring, twice); each crossing is costlier
  // by the difference of the fabrics' per-message costs, and nothing else differs at 64 KiB.
  const double extra = per_message(Fabric::GcpTcpxo) - per_message(Fabric::InfinibandNdr);
  EXPECT_GE(tcpxo - ndr, 6 * extra - 1);
  EXPECT_LE(tcpxo - ndr, 8 * extra + 2);
}

TEST(NcclRunTest, TwoNvSwitchNodesRunNvlsTreeAboveTheirNicsRate) {
  // Two DGX H100 nodes, large AllReduce: NCCL takes NVLS inside each node and a tree between them
  // (measured 467 GB/s of bus bandwidth at 8 GiB over 400 GB/s of NICs per node); the tree moves
  // each node's buffer once per direction, so the bus bandwidth exceeds the NICs' rate.
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *system, *machine);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(run->choice.algorithm, NcclAlgorithm::NvlsTree);
  EXPECT_TRUE(run->closed_form);
  EXPECT_NE(run->info.find("Algo NVLSTREE proto Simple"), std::string::npos) << run->info;
  const double nics = system->preset->nics_per_node * system->preset->nic_gbps;
  EXPECT_GT(run->result.busbw_gbps, nics);
  // It reduces in the switch: asked for its program, NCCL's model says it has none; the ring
  // beside it has one.
  auto none = nccl_program(CollectiveKind::Allreduce, run->choice, *system, *machine);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().to_string().find("closed form"), std::string::npos)
      << none.error().to_string();
  NcclEstimate ring = run->choice;
  ring.algorithm = NcclAlgorithm::Ring;
  EXPECT_TRUE(nccl_program(CollectiveKind::Allreduce, ring, *system, *machine));
  // On more nodes every node is an inner node of one tree: twice the bytes per NIC, and below
  // the NICs' rate.
  auto eight = simulator::make_system_model(*find_system_preset("dgx_h100"), 8);
  ASSERT_TRUE(eight);
  auto eight_machine = nccl_machine(*eight);
  ASSERT_TRUE(eight_machine);
  auto wide = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *eight, *eight_machine,
                            forced(NcclAlgorithm::NvlsTree));
  ASSERT_TRUE(wide);
  EXPECT_LT(wide->result.busbw_gbps, nics);
  // NVLS tree is an AllReduce across nodes of NVSwitch GPUs with multimem: not on one node, not
  // for AllGather, not on A100.
  auto one = simulator::make_system_model(*find_system_preset("dgx_h100"));
  ASSERT_TRUE(one);
  auto one_machine = nccl_machine(*one);
  ASSERT_TRUE(one_machine);
  EXPECT_FALSE(simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *one, *one_machine,
                             forced(NcclAlgorithm::NvlsTree)));
  EXPECT_FALSE(simulate_nccl(CollectiveKind::Allgather, 1 << 20, *system, *machine,
                             forced(NcclAlgorithm::NvlsTree)));
  auto a100 = simulator::make_system_model(*find_system_preset("dgx_a100"), 2);
  ASSERT_TRUE(a100);
  auto a100_machine = nccl_machine(*a100);
  ASSERT_TRUE(a100_machine);
  EXPECT_FALSE(simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *a100, *a100_machine,
                             forced(NcclAlgorithm::NvlsTree)));
}

TEST(NcclRunTest, BlackwellRunsNvlsOnMoreChannelsAcrossNvlinkDomainsThanInsideOne) {
  // NCCL's default NVLS channel count on SM100 is 24 inside one NVLink domain and 32 once the
  // communicator spans several (hosts, or racks of an NVL72); Hopper's is 16 either way.
  const auto nvls_channels = [](const char *preset, int nodes) {
    auto system = simulator::make_system_model(*find_system_preset(preset), nodes);
    EXPECT_TRUE(system);
    auto machine = nccl_machine(*system);
    EXPECT_TRUE(machine);
    auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *system, *machine);
    EXPECT_TRUE(run) << run.error().to_string();
    EXPECT_TRUE(run->choice.algorithm == NcclAlgorithm::Nvls ||
                run->choice.algorithm == NcclAlgorithm::NvlsTree)
        << run->info;
    EXPECT_NE(run->info.find(fmt::format("channels {} ", run->choice.channels)), std::string::npos)
        << run->info;
    return run->choice.channels;
  };
  EXPECT_EQ(nvls_channels("dgx_b200", 1), 24);
  EXPECT_EQ(nvls_channels("dgx_b200", 4), 32);
  EXPECT_EQ(nvls_channels("gb200_nvl72", 1), 24);
  EXPECT_EQ(nvls_channels("dgx_h100", 1), 16);
  EXPECT_EQ(nvls_channels("dgx_h100", 4), 16);
}

TEST(NcclRunTest, AGb200Nvl72RackIsOneNvlinkDomainAndRacksJoinOverTheNetwork) {
  // One rack: 72 GPUs in one NVLink domain, NVLS across it; no network. Two racks: the same
  // domains joined by their trays' NICs (4 per tray).
  const SystemPreset &nvl72 = *find_system_preset("gb200_nvl72");
  auto rack = simulator::make_system_model(nvl72);
  ASSERT_TRUE(rack);
  EXPECT_EQ(rack->topology.num_ranks(), 72);
  EXPECT_TRUE(rack->nvls);
  auto machine = nccl_machine(*rack);
  ASSERT_TRUE(machine);
  auto nvls = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *rack, *machine);
  ASSERT_TRUE(nvls);
  EXPECT_EQ(nvls->choice.algorithm, NcclAlgorithm::Nvls);
  NcclRunOptions off;
  off.nvls = false;
  auto ring = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *rack, *machine, off);
  ASSERT_TRUE(ring);
  EXPECT_EQ(ring->choice.algorithm, NcclAlgorithm::Ring);
  auto racks = simulator::make_system_model(nvl72, 2);
  ASSERT_TRUE(racks);
  EXPECT_EQ(racks->topology.num_ranks(), 144);
  auto two = nccl_machine(*racks);
  ASSERT_TRUE(two);
  auto across = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *racks, *two,
                              forced(NcclAlgorithm::Ring, Protocol::Simple));
  ASSERT_TRUE(across);
  // The network between racks is slower than the NVLink domain: the ring loses bus bandwidth.
  EXPECT_LT(across->result.busbw_gbps, ring->result.busbw_gbps);
}

TEST(NcclRunTest, ForcedChannelsRunOnThatManyAndCapAt32) {
  auto system = simulator::make_system_model(*find_system_preset("dgx1"));
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  auto time_on = [&](int channels) {
    auto run = simulate_nccl(CollectiveKind::Allgather, int64_t(1) << 28, *system, *machine,
                             forced(NcclAlgorithm::Ring, Protocol::Simple, channels));
    EXPECT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(run->choice.channels, std::min(channels, 32));
    EXPECT_NE(run->info.find(fmt::format("channels {} ", std::min(channels, 32))),
              std::string::npos)
        << run->info;
    return run->result.completion;
  };
  // One channel runs one ring over one NVLink per GPU; the searched rings' count covers them all.
  EXPECT_GT(time_on(1), 3 * time_on(machine->ring.runtime_channels()));
  EXPECT_EQ(time_on(64), time_on(32));
}

TEST(NcclRunTest, AlltoallAcrossNodesRunsSimpleAsNetworkConnectionsHaveNoLlBuffers) {
  auto one = simulator::make_system_model(*find_system_preset("dgx_a100"), 1, 8);
  auto two = simulator::make_system_model(*find_system_preset("dgx_a100"), 2, 8);
  ASSERT_TRUE(one && two);
  auto m1 = nccl_machine(*one);
  auto m2 = nccl_machine(*two);
  auto intra = simulate_nccl(CollectiveKind::Alltoall, 1024, *one, *m1);
  auto inter = simulate_nccl(CollectiveKind::Alltoall, 1024, *two, *m2);
  ASSERT_TRUE(intra && inter);
  EXPECT_EQ(intra->choice.protocol, Protocol::LL);
  EXPECT_EQ(inter->choice.protocol, Protocol::Simple);
  // NCCL_PROTO=Simple reaches the point-to-point path on one node too.
  auto simple = simulate_nccl(CollectiveKind::Alltoall, 1024, *one, *m1,
                              forced(std::nullopt, Protocol::Simple));
  ASSERT_TRUE(simple) << simple.error().to_string();
  EXPECT_EQ(simple->choice.protocol, Protocol::Simple);
}

TEST(SystemModelTest, PresetsBuildAndRejectImpossibleShapes) {
  for (const SystemPreset &preset : all_system_presets()) {
    const int nodes = std::max(1, preset.measured_nodes);
    auto s = simulator::make_system_model(preset, nodes);
    ASSERT_TRUE(s) << preset.name;
    EXPECT_EQ(s->topology.num_ranks(), preset.gpus_per_node * nodes);
    EXPECT_TRUE(nccl_machine(*s)) << preset.name;
  }
  // A machine as one run measured it is that run's node count and no other.
  const SystemPreset &pytorch = *find_system_preset("b200x4_pytorch");
  EXPECT_TRUE(simulator::make_system_model(pytorch, 4));
  auto one_node = simulator::make_system_model(pytorch, 1);
  ASSERT_FALSE(one_node);
  EXPECT_NE(one_node.error().to_string().find("is the 4 nodes one run measured"), std::string::npos)
      << one_node.error().to_string();
  EXPECT_FALSE(simulator::make_system_model(*find_system_preset("dgx1"), 1, 9));
  EXPECT_FALSE(simulator::make_system_model(*find_system_preset("dgx_h100"), 1, 9));
  EXPECT_FALSE(simulator::make_system_model(*find_system_preset("dgx_h100"), 0));
  EXPECT_TRUE(simulator::make_system_model(*find_system_preset("dgx_h100"), 1, 5));
  EXPECT_EQ(find_system_preset("DGX-H100"), find_system_preset("dgx_h100"));
  EXPECT_EQ(find_system_preset("nope"), nullptr);
}

// --gpus K on a fixed mesh is its first K GPUs, as CUDA_VISIBLE_DEVICES=0..K-1 shows NCCL: the
// NVLinks among them, and the host for pairs without one.
TEST(SystemModelTest, FewerGpusOfAFixedMeshAreItsFirstOnes) {
  const SystemPreset &dgx1_preset = *find_system_preset("dgx1");
  auto full = simulator::make_system_model(dgx1_preset);
  auto four = simulator::make_system_model(dgx1_preset, 1, 4);
  auto five = simulator::make_system_model(dgx1_preset, 1, 5);
  ASSERT_TRUE(full && four && five) << four.error().to_string();
  ASSERT_EQ(four->topology.num_ranks(), 4);
  // GPUs 0-3 of the cube-mesh are linked pairwise by NVLink, as in the whole node.
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b) {
        const auto link = four->topology.find_link(RankId(a), RankId(b));
        ASSERT_TRUE(link) << a << "->" << b;
        EXPECT_EQ(four->topology.link(*link),
                  full->topology.link(*full->topology.find_link(RankId(a), RankId(b))));
      }
  // GPU 4's only NVLink among the first five goes to GPU 0; GPUs 1-3 reach it through the host.
  const auto nvlink = five->topology.find_link(RankId(4), RankId(0));
  const auto host = five->topology.find_link(RankId(4), RankId(1));
  ASSERT_TRUE(nvlink && host);
  EXPECT_LT(five->topology.link(*host).bandwidth.value,
            five->topology.link(*nvlink).bandwidth.value);
  auto machine = nccl_machine(*four);
  ASSERT_TRUE(machine) << machine.error().to_string();
  // NCCL's search on the subgraph rings over NVLink, faster than the host path.
  EXPECT_GT(machine->ring.intra_gbps, dgx1_preset.host_path_gbps);
  auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *four, *machine, {});
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(run->choice.algorithm, NcclAlgorithm::Ring);
}

TEST(SystemModelTest, ScclLoweringsChargeWhatTheirExecutorsDo) {
  // A copying DGX-1 Allgather (a ring: 7 steps of one round).
  auto system = simulator::make_system_model(*find_system_preset("dgx1"));
  ASSERT_TRUE(system);
  const auto ag = read_algorithm_file(std::string(SYNCOLL_SOURCE_DIR) +
                                      "/examples/algorithms/dgx1_allgather_ring.json");
  ASSERT_TRUE(ag) << ag.error().to_string();
  auto spec = make_collective(CollectiveKind::Allgather, 8, ag->target.chunk_factor);
  ASSERT_TRUE(spec);
  auto copy = system->copy_engine(*ag);
  ASSERT_TRUE(copy) << copy.error().to_string();
  const simulator::AlgorithmExecutor kernel = system->sccl_kernel();
  auto time = [&](const simulator::AlgorithmExecutor &e, int64_t bytes) {
    auto r = simulator::simulate_algorithm(*ag, e.topology, *spec, bytes, e.options);
    EXPECT_TRUE(r) << r.error().to_string();
    return r ? double(r->completion) : 0.0;
  };
  // Small: one launch beats a host-issued step each; large: the copy engines' bigger packets win
  // by their gain, less the steps' fixed costs.
  EXPECT_LT(time(kernel, 1024), time(*copy, 1024));
  const double large_ratio = time(kernel, int64_t(1) << 28) / time(*copy, int64_t(1) << 28);
  EXPECT_GT(large_ratio, 1.0);
  EXPECT_LE(large_ratio, system->generation->copy_engine_gain);
  EXPECT_GT(large_ratio, 0.98 * system->generation->copy_engine_gain);

  // A copy engine cannot combine, and it does not cross nodes.
  Algorithm reducing = *ag;
  reducing.steps[0].sends[0].op = SendOp::Reduce;
  auto refused = system->copy_engine(reducing);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().to_string().find("only copies"), std::string::npos);
  auto two = simulator::make_system_model(*find_system_preset("dgx1"), 2);
  ASSERT_TRUE(two);
  EXPECT_FALSE(two->copy_engine(*ag));
}

TEST(SystemModelTest, FairPortsShareEveryRelationAndKeepTheLinks) {
  auto s = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(s);
  const Topology fair = simulator::with_fair_ports(s->topology);
  EXPECT_EQ(fair.links(), s->topology.links());
  ASSERT_EQ(fair.relations().size(), s->topology.relations().size());
  for (size_t r = 0; r < fair.relations().size(); ++r) {
    EXPECT_EQ(s->topology.relations()[r].sharing, RelationSharing::Fifo);
    EXPECT_EQ(fair.relations()[r].sharing, RelationSharing::Fair) << fair.relations()[r].name;
    EXPECT_EQ(fair.relations()[r].links, s->topology.relations()[r].links);
  }
}

TEST(SystemModelTest, AProtocolsNvlinkShareStaysInsideTheNode) {
  // LL128 flags cost what the generation measured on NVLink, and 8 of every 128 bytes on a NIC.
  auto two = simulator::make_system_model(*find_system_preset("aws_p4de"), 2);
  ASSERT_TRUE(two);
  const Topology ll128 = two->protocol_topology(Protocol::LL128);
  const auto &g = *two->generation;
  const double nvlink_ratio = g.nvlink_payload_share[2] / g.nvlink_payload_share[0];
  int inside = 0, across = 0;
  for (size_t l = 0; l < ll128.links().size(); ++l) {
    const Link &scaled = ll128.links()[l], &simple = two->topology.links()[l];
    const bool same_node = scaled.src.value() / 8 == scaled.dst.value() / 8;
    const double ratio = scaled.bandwidth.value / simple.bandwidth.value;
    EXPECT_NEAR(ratio, same_node ? nvlink_ratio : 120.0 / 128.0, 1e-9);
    ++(same_node ? inside : across);
  }
  EXPECT_GT(inside, 0);
  EXPECT_GT(across, 0);
  // Simple is the topology itself.
  EXPECT_EQ(two->protocol_topology(Protocol::Simple).links(), two->topology.links());
}

TEST(NcclRunTest, PointToPointAcrossTheNetworkMovesOneSmallChunkPerMessage) {
  // Two nodes of one GPU: NCCL's alltoall sends half of its buffer to the other node on two
  // channels whose messages are 128 KiB, so like the two-channel ring allgather it stays well
  // under the NIC's rate (measured on Azure NDv4: 15.5 and 15.8 GB/s of bus bandwidth).
  auto two = simulator::make_system_model(*find_system_preset("ndv4_mscclpp"), 2, 1);
  ASSERT_TRUE(two);
  auto machine = nccl_machine(*two);
  ASSERT_TRUE(machine);
  auto a2a = simulate_nccl(CollectiveKind::Alltoall, int64_t(1) << 30, *two, *machine);
  auto ag = simulate_nccl(CollectiveKind::Allgather, int64_t(1) << 30, *two, *machine);
  ASSERT_TRUE(a2a && ag);
  const double nic = two->preset->nic_gbps * two->fabric->nic_payload_share;
  EXPECT_LT(a2a->result.busbw_gbps, 0.9 * nic);
  EXPECT_NEAR(a2a->result.busbw_gbps / ag->result.busbw_gbps, 1.0, 0.25);
}

// Upper bound on a collective's bus bandwidth: no rank sends or receives faster than its links
// and the relations over them allow (the singleton cuts of the cut bound).
double singleton_cut_bound(const Topology &t) {
  double bound = 1e300;
  for (int r = 0; r < t.num_ranks(); ++r)
    for (bool out : {true, false}) {
      const auto links = out ? t.out_links(RankId(r)) : t.in_links(RankId(r));
      double sum = 0;
      for (LinkId l : links)
        sum += t.link(l).bandwidth.value;
      double cut = sum;
      for (const BandwidthRelation &rel : t.relations()) {
        double per_unit = 1e300, inside = 0;
        for (LinkId l : rel.links) {
          per_unit = std::min(per_unit, t.link(l).bandwidth.value / t.link(l).capacity);
          if (std::find(links.begin(), links.end(), l) != links.end())
            inside += t.link(l).bandwidth.value;
        }
        cut = std::min(cut, sum - inside + std::min(inside, per_unit * rel.capacity));
      }
      bound = std::min(bound, cut);
    }
  return bound;
}

RC_GTEST_PROP(NcclProperty, BusBandwidthStaysUnderTheCutBoundAndGrowsWithChannels, ()) {
  const std::vector<Topology> topologies = {
      dgx1(), dgx_a100(), dgx_h100(), *ring(6), *torus2d(3, 3), *hypercube(3), *fully_connected(5)};
  const Topology &t = *rc::gen::elementOf(topologies);
  const auto kind = *rc::gen::element(CollectiveKind::Allgather, CollectiveKind::Allreduce);
  const int64_t size = int64_t(1) << *rc::gen::inRange(20, 28);
  auto graph = nccl_search_rings(t, generation_traits(GpuGeneration::Ampere));
  RC_ASSERT(graph.has_value());
  simulator::CostModel model;
  model.thread_block_gbps.fill(20); // one channel is one CUDA block
  const double bound = singleton_cut_bound(t);
  RC_LOG() << t.name() << " " << collective_kind_name(kind) << " " << size << " B\n";
  // Each of the searched rings added in turn, then NCCL's runtime doubling of all of them
  // (other counts put two channels on some rings and not on others).
  std::vector<int> counts;
  for (int c = 1; c <= graph->channels(); ++c)
    counts.push_back(c);
  counts.push_back(graph->runtime_channels());
  double previous = 0;
  for (int channels : counts) {
    auto p = nccl_ring_program(kind, graph->channel_rings(channels), Protocol::Simple);
    RC_ASSERT(p.has_value());
    simulator::ProgramSimOptions o;
    o.size_bytes = size;
    o.model = model;
    auto sim = simulator::simulate_program(*p, t, o);
    RC_ASSERT(sim.has_value() && !sim->deadlocked);
    const double busbw = sim->result.busbw_gbps;
    RC_ASSERT(busbw <= bound * (1 + 1e-9));
    // More channels never lose more than the pipeline's rounding.
    RC_LOG() << channels << " channels: " << busbw << " GB/s (bound " << bound << ")\n";
    RC_ASSERT(busbw >= previous * 0.97);
    previous = std::max(previous, busbw);
  }
}

// NCCL's Broadcast and Reduce move Simple in one-slot chunks on a plain topology too (simulate
// -t, a study's topology variant), as on a system: the chain of 8 hops fills sooner than
// with the executor's four-slot tile (32 MiB: 86 us against 97). AllReduce keeps the tile.
TEST(NcclTopologyTest, BroadcastRingsRunInOneSlotChunksOnAPlainTopology) {
  auto topology = make_library_topology("dgx_h100", {});
  ASSERT_TRUE(topology);
  const simulator::CostModel plain;
  EXPECT_EQ(nccl_chunked(plain, CollectiveKind::Allreduce).iteration_bytes, plain.iteration_bytes);
  auto rings = nccl_topology_rings(*topology, CollectiveKind::Broadcast, 0, RankId(0));
  ASSERT_TRUE(rings);
  auto program = nccl_topology_program(NcclAlgorithm::Ring, CollectiveKind::Broadcast, *topology,
                                       *rings, Protocol::Simple);
  ASSERT_TRUE(program) << program.error().to_string();
  auto time = [&](const simulator::CostModel &model) {
    simulator::ProgramSimOptions o;
    o.size_bytes = int64_t(32) << 20;
    o.model = model;
    auto sim = simulator::simulate_program(*program, *topology, o);
    EXPECT_TRUE(sim);
    return sim ? sim->result.completion : 0;
  };
  EXPECT_LT(double(time(nccl_chunked(plain, CollectiveKind::Broadcast))),
            0.95 * double(time(plain)));
}

} // namespace
} // namespace syncoll::nccl
