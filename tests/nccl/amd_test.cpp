// AMD's 8-GPU platforms under RCCL: the xGMI full mesh, NCCL's search walking chains across its
// nodes, the tree following the rings, and the machine reaching its NICs.
#include "model/hardware.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>
#include <map>
#include <set>

namespace syncoll::nccl {
namespace {

TEST(NcclAmdTest, AnXgmiNodeIsAFullMeshOfOneLinkPerPair) {
  for (auto [name, gbps] : {std::pair{"mi300x", 64.0}, std::pair{"mi355x", 76.8}}) {
    auto node = make_library_topology(name, {});
    ASSERT_TRUE(node) << node.error().to_string();
    EXPECT_EQ(node->num_ranks(), 8) << name;
    EXPECT_EQ(node->links().size(), 56u) << name; // every ordered pair, no switch
    EXPECT_TRUE(node->relations().empty()) << name;
    for (const Link &l : node->links())
      EXPECT_DOUBLE_EQ(l.bandwidth.value, gbps) << name;
  }
}

TEST(NcclAmdTest, AmdGenerationsRunRcclOnTheirMeshes) {
  for (const GenerationTraits &g : all_generations()) {
    const bool amd = g.generation == GpuGeneration::Cdna2 || g.generation == GpuGeneration::Cdna3 ||
                     g.generation == GpuGeneration::Cdna4;
    EXPECT_EQ(g.collective_library, amd ? "RCCL" : "NCCL") << g.name;
    if (amd) { // no switch in the node, so nothing like NVLink SHARP
      EXPECT_EQ(g.nccl_nvls_efficiency, 0) << g.name;
    }
  }
  for (const SystemPreset &s : all_system_presets()) {
    const GpuGeneration gen = s.generation;
    if (gen == GpuGeneration::Cdna2) {
      EXPECT_EQ(s.node_topology, "mi250x") << s.name;
    }
    if (gen == GpuGeneration::Cdna3) {
      EXPECT_EQ(s.node_topology, "mi300x") << s.name;
    }
    if (gen == GpuGeneration::Cdna4) {
      EXPECT_EQ(s.node_topology, "mi355x") << s.name;
    }
  }
  ASSERT_NE(find_system_preset("frontier"), nullptr);
  ASSERT_NE(find_system_preset("mi355x"), nullptr);
  ASSERT_NE(find_system_preset("azure_nd_mi300x_v5"), nullptr);
}

// Frontier's node: the package's two GCDs share 4 links (200 GB/s a direction), and every GCD
// has one link to each of two GCDs of other packages, RCCL's cube.
TEST(NcclAmdTest, AnMi250xNodeIsACubeOfGcdsWithQuadLinksInsideAPackage) {
  auto node = make_library_topology("mi250x", {});
  ASSERT_TRUE(node) << node.error().to_string();
  ASSERT_EQ(node->num_ranks(), 8);
  EXPECT_EQ(node->links().size(), 24u); // 3 peers per GCD, each way
  for (int a = 0; a < 8; ++a) {
    const auto sibling = node->find_link(RankId(a), RankId(a ^ 1));
    ASSERT_TRUE(sibling) << a;
    EXPECT_DOUBLE_EQ(node->link(*sibling).bandwidth.value, 200.0) << a;
  }
  for (const Link &l : node->links()) {
    EXPECT_TRUE(node->find_link(l.dst, l.src)) << l.src.value() << "->" << l.dst.value();
    if ((l.src.value() ^ 1) != l.dst.value()) {
      EXPECT_DOUBLE_EQ(l.bandwidth.value, 50.0) << l.src.value() << "->" << l.dst.value();
    }
  }
  EXPECT_EQ(generation_of_gcn("gfx90a:sramecc+:xnack-"), GpuGeneration::Cdna2);
  EXPECT_EQ(generation_of_gcn("910"), GpuGeneration::Cdna2); // older RCCL writes the number
}

// RCCL's rings on Frontier run over the GCDs' xGMI links alone, as its search keeps one path type
// for a graph; a program still reaches every GCD, the pairs without a link through the host, and
// those paths share each GCD's own link to it.
TEST(NcclAmdTest, FrontiersRingsStayOnXgmiWhileProgramsReachEveryGcd) {
  auto system = simulator::make_system_model(*find_system_preset("frontier"), 1);
  ASSERT_TRUE(system) << system.error().to_string();
  auto graph = nccl_search_rings(system->line_topology, *system->generation);
  ASSERT_TRUE(graph);
  ASSERT_GT(graph->channels(), 0);
  auto node = make_library_topology("mi250x", {});
  ASSERT_TRUE(node);
  for (const std::vector<RankId> &ring : graph->rings)
    for (size_t k = 0; k < ring.size(); ++k)
      EXPECT_TRUE(node->find_link(ring[k], ring[(k + 1) % ring.size()]))
          << ring[k].value() << "->" << ring[(k + 1) % ring.size()].value();
  const Topology &t = system->topology;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b) {
        EXPECT_TRUE(t.find_link(RankId(a), RankId(b))) << a << "->" << b;
      }
  int host_relations = 0;
  for (const BandwidthRelation &r : t.relations())
    host_relations += r.name.find("host") != std::string::npos ? 1 : 0;
  EXPECT_EQ(host_relations, 16); // to and from the host, per GCD
}

// The first 6 GCDs of the cube (CUDA_VISIBLE_DEVICES=0..5) keep 7 of its links and no ring over
// them alone, though every GCD keeps two peers: NCCL's search widens to the host's socket there
// and rings through it, where on the whole node it never leaves the xGMI links. Across nodes a
// mesh with its host is still walked as chains.
TEST(NcclAmdTest, ACubesSubsetRingsThroughTheHostOnlyWhereItsLinksLeaveNoRing) {
  const auto through_host_hops = [](int gpus, int nodes) {
    auto system = simulator::make_system_model(*find_system_preset("frontier"), nodes, gpus);
    EXPECT_TRUE(system) << system.error().to_string();
    auto graph = nccl_search_rings(system->line_topology, *system->generation);
    EXPECT_TRUE(graph);
    EXPECT_GT(graph->channels(), 0);
    EXPECT_EQ(graph->chains, nodes > 1);
    int hops = 0;
    for (const std::vector<RankId> &ring : graph->rings)
      for (size_t k = 0; k < ring.size(); ++k) {
        const RankId a = ring[k], b = ring[(k + 1) % ring.size()];
        if (a.value() / gpus == b.value() / gpus && !system->line_topology.find_link(a, b))
          ++hops;
      }
    return hops;
  };
  EXPECT_EQ(through_host_hops(8, 1), 0);
  EXPECT_GT(through_host_hops(6, 1), 0);
  EXPECT_EQ(through_host_hops(8, 2), 0);
  auto six = simulator::make_system_model(*find_system_preset("frontier"), 1, 6);
  ASSERT_TRUE(six);
  auto machine = nccl_machine(*six);
  ASSERT_TRUE(machine) << machine.error().to_string();
  auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 28, *six, *machine);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_GT(run->result.busbw_gbps, 0);
}

// Per round of as many channels as NICs, each chain enters at its NIC's GPU, runs through every
// GPU of the node once, and leaves through a NIC no other chain of the round leaves through;
// no xGMI link carries more chains than its graph bandwidth.
TEST(NcclAmdTest, ChainsAcrossMeshNodesLeaveThroughEveryNicOnceARound) {
  auto system = simulator::make_system_model(*find_system_preset("mi355x"), 2);
  ASSERT_TRUE(system) << system.error().to_string();
  auto graph = nccl_search_rings(system->line_topology, *system->generation);
  ASSERT_TRUE(graph);
  const int gpus = 8, nics = 8;
  ASSERT_GT(graph->channels(), 0);
  ASSERT_EQ(graph->channels() % nics, 0);
  std::map<std::pair<int, int>, int> chains_on_link;
  for (int round = 0; round < graph->channels(); round += nics) {
    std::set<int> exits;
    for (int c = round; c < round + nics; ++c) {
      const std::vector<RankId> &ring = graph->rings[size_t(c)];
      ASSERT_EQ(ring.size(), size_t(2 * gpus));
      EXPECT_EQ(ring.front().value(), c - round); // NIC c's GPU
      std::set<int> seen;
      for (int k = 0; k < gpus; ++k)
        seen.insert(ring[size_t(k)].value());
      EXPECT_EQ(seen.size(), size_t(gpus));
      exits.insert(ring[size_t(gpus - 1)].value());
      for (int k = 0; k + 1 < gpus; ++k)
        ++chains_on_link[{ring[size_t(k)].value(), ring[size_t(k + 1)].value()}];
    }
    EXPECT_EQ(exits.size(), size_t(nics)) << "round " << round / nics;
  }
  for (auto [link, chains] : chains_on_link)
    EXPECT_LE(chains * graph->intra_gbps, system->generation->nccl_nvlink_gbps + 1e-9)
        << link.first << "->" << link.second;
}

TEST(NcclAmdTest, TwoMi355xNodesReachTheirNicsAtOneGibibyte) {
  // 8 Pollara NICs of 400 Gb/s at RoCE's payload share: 380 GB/s; measured 380 at 1-2 GiB
  // (rccl-tests). The chains keep every NIC busy and no xGMI link the bottleneck.
  auto system = simulator::make_system_model(*find_system_preset("mi355x"), 2);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  auto run = simulate_nccl(CollectiveKind::Allreduce, int64_t(1) << 30, *system, *machine, {});
  ASSERT_TRUE(run) << run.error().to_string();
  const double nics = 8 * system->preset->nic_gbps * system->fabric->nic_payload_share;
  EXPECT_GT(run->result.busbw_gbps, 0.95 * nics) << run->info;
  EXPECT_LT(run->result.busbw_gbps, nics) << run->info;
}

TEST(NcclAmdTest, TreeChainsFollowTheirRingsAndOnASwitchAreTheGpusInOrder) {
  auto mesh = simulator::make_system_model(*find_system_preset("mi355x"), 2);
  ASSERT_TRUE(mesh);
  auto machine = nccl_machine(*mesh);
  ASSERT_TRUE(machine);
  EXPECT_TRUE(machine->ring.chains); // the search walked chains: the tree follows them
  const auto rings = machine->ring.channel_rings(machine->ring.runtime_channels());
  const auto trees = nccl_ring_ordered_trees(2, rings);
  ASSERT_EQ(trees.size(), rings.size());
  std::set<std::pair<int, int>> first_links;
  for (size_t c = 0; c < rings.size(); ++c) {
    // Inside each node a GPU's parent is the one before it on the channel's ring.
    for (int node = 0; node < 2; ++node)
      for (int k = 1; k < 8; ++k)
        EXPECT_EQ(trees[c][size_t(rings[c][size_t(node * 8 + k)].value())],
                  rings[c][size_t(node * 8 + k - 1)].value());
    // Node 0's head is the root of NCCL's first tree, node 1's of its second (the mirror).
    const int root = nccl_channel_tree_index(int(c), int(rings.size())) == 0 ? 0 : 8;
    EXPECT_EQ(trees[c][size_t(rings[c][size_t(root)].value())], -1);
    EXPECT_EQ(trees[c][size_t(rings[c][size_t(8 - root)].value())], rings[c][size_t(root)].value());
    first_links.insert({rings[c][0].value(), rings[c][1].value()});
  }
  // The channels of a round start on different links out of their heads.
  EXPECT_GE(first_links.size(), 8u);
  // Behind an NVSwitch with a NIC per GPU the rings run through the GPUs in order from each
  // NIC's GPU: the same trees as NCCL's chains from each NIC's GPU on.
  auto h100 = simulator::make_system_model(*find_system_preset("dgx_h100"), 4);
  ASSERT_TRUE(h100);
  auto h100_machine = nccl_machine(*h100);
  ASSERT_TRUE(h100_machine);
  EXPECT_FALSE(h100_machine->ring.chains);
  const int channels = h100_machine->ring.runtime_channels();
  EXPECT_EQ(nccl_ring_ordered_trees(4, h100_machine->ring.channel_rings(channels)),
            nccl_channel_trees(4, 8, 8, channels));
}

} // namespace
} // namespace syncoll::nccl
