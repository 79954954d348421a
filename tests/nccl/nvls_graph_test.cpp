// NCCL's NVLS graph: its heads and speeds as NCCL's search finds them on Hopper and Blackwell
// machines, NVLS on one node costed on it, and a graph file's in its place.
#include "model/hardware.h"
#include "nccl/graph_xml.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "nccl/topo_xml.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>

namespace syncoll::nccl {
namespace {

NcclMachine nvls_machine(const char *preset, int nodes = 1, int gpus = 0) {
  auto made = nccl_system(*find_system_preset(preset), nodes, gpus);
  EXPECT_TRUE(made) << made.error().to_string();
  return std::move(made->nccl);
}

std::vector<RankId> first_ranks(int n) {
  std::vector<RankId> out;
  for (int r = 0; r < n; ++r)
    out.emplace_back(r);
  return out;
}

TEST(NcclNvlsGraphTest, OnOneNodeEveryGpuHeadsAChannelAtTheFastestSpeedAllFit) {
  // A head's port carries its channel twice and the others' once: 9 x 40 = 360 GB/s fits in 18
  // NVLinks x 20.6 = 370.8 where 9 x 50 does not; the inter-node speed then rises to 60.
  const NcclMachine h100 = nvls_machine("dgx_h100");
  ASSERT_TRUE(h100.nvls_graph);
  EXPECT_EQ(h100.nvls_graph->heads, first_ranks(8));
  EXPECT_TRUE(h100.nvls_graph->nics.empty());
  EXPECT_DOUBLE_EQ(h100.nvls_graph->intra_gbps, 40);
  EXPECT_DOUBLE_EQ(h100.nvls_graph->inter_gbps, 60);
  // Blackwell: 18 x 40.1 = 721.8 holds 9 x 80.
  const NcclMachine b200 = nvls_machine("dgx_b200");
  ASSERT_TRUE(b200.nvls_graph);
  EXPECT_EQ(b200.nvls_graph->heads, first_ranks(8));
  EXPECT_DOUBLE_EQ(b200.nvls_graph->intra_gbps, 80);
  EXPECT_DOUBLE_EQ(b200.nvls_graph->inter_gbps, 90);
  // Four GPUs of the node: 5 x 60 fits.
  const NcclMachine half = nvls_machine("dgx_h100", 1, 4);
  ASSERT_TRUE(half.nvls_graph);
  EXPECT_EQ(half.nvls_graph->heads, first_ranks(4));
  EXPECT_DOUBLE_EQ(half.nvls_graph->intra_gbps, 60);
}

TEST(NcclNvlsGraphTest, AnNvl72RackHoldsNcclsMostHeads) {
  // 32 heads at most (NCCL_MAX_NVLS_ARITY): 33 x 20 = 660 GB/s fits in 721.8, 32 x 24 not in
  // the 72/71 share pass 1 starts from.
  const NcclMachine rack = nvls_machine("gb200_nvl72");
  ASSERT_TRUE(rack.nvls_graph);
  EXPECT_EQ(rack.nvls_graph->heads, first_ranks(kNcclMaxNvlsHeads));
  EXPECT_DOUBLE_EQ(rack.nvls_graph->intra_gbps, 20);
  EXPECT_DOUBLE_EQ(rack.nvls_graph->inter_gbps, 40);
}

TEST(NcclNvlsGraphTest, AcrossNodesEachNicsGpuHeadsAChannelAtTheNetworksSpeed) {
  // A 400 Gb/s NIC carries 48 GB/s of NCCL's inter-node list; at 48 seven Hopper channels fit,
  // at 40 all eight, and more heads win; the network speed then rises back to 48.
  const NcclMachine h100 = nvls_machine("dgx_h100", 2);
  ASSERT_TRUE(h100.nvls_graph);
  EXPECT_EQ(h100.nvls_graph->heads, first_ranks(8));
  EXPECT_EQ(h100.nvls_graph->nics, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(h100.nvls_graph->intra_gbps, 40);
  EXPECT_DOUBLE_EQ(h100.nvls_graph->inter_gbps, 48);
  const NcclMachine b200 = nvls_machine("dgx_b200", 2);
  ASSERT_TRUE(b200.nvls_graph);
  EXPECT_EQ(b200.nvls_graph->channels(), 8);
  EXPECT_DOUBLE_EQ(b200.nvls_graph->intra_gbps, 48);
  EXPECT_DOUBLE_EQ(b200.nvls_graph->inter_gbps, 48);
}

TEST(NcclNvlsGraphTest, AMachineWithoutNvlsHasNoNvlsGraph) {
  EXPECT_FALSE(nvls_machine("dgx_a100").nvls_graph);
  EXPECT_FALSE(nvls_machine("dgx_a100", 2).nvls_graph);
}

std::optional<NcclEstimate> estimate(const NcclTuningInput &in, NcclAlgorithm algorithm) {
  for (const NcclEstimate &e :
       nccl_estimates(CollectiveKind::Allreduce, double(int64_t(1) << 30), in))
    if (e.algorithm == algorithm)
      return e;
  return std::nullopt;
}

TEST(NcclNvlsGraphTest, NvlsOnOneNodeIsCostedOnTheNvlsGraph) {
  // NVLS on 8 H100: 8 heads x 40 x 0.85 x 7/8 x 2 = 476 GB/s of bus bandwidth, NCCL's ~480
  // measured.
  const NcclMachine one = nvls_machine("dgx_h100");
  auto nvls = estimate(one.tuning_input(), NcclAlgorithm::Nvls);
  ASSERT_TRUE(nvls);
  EXPECT_NEAR(nvls->bus_gbps, 476, 1e-9);
  // Five GPUs: 5 x 60 x 0.85 x 4/5 x 2 = 408 over the ring's 12 x 30 = 360, NVLS as NCCL ran it
  // on 5 H200s; four: 306, the ring.
  const NcclMachine five = nvls_machine("dgx_h100", 1, 5);
  EXPECT_NEAR(estimate(five.tuning_input(), NcclAlgorithm::Nvls)->bus_gbps, 408, 1e-9);
  EXPECT_EQ(nccl_choose(CollectiveKind::Allreduce, double(int64_t(8) << 30), five.tuning_input())
                ->algorithm,
            NcclAlgorithm::Nvls);
  const NcclMachine four = nvls_machine("dgx_h100", 1, 4);
  EXPECT_EQ(nccl_choose(CollectiveKind::Allreduce, double(int64_t(8) << 30), four.tuning_input())
                ->algorithm,
            NcclAlgorithm::Ring);
  // Without a graph (fewer than two heads) NVLS is not costed.
  NcclTuningInput none = one.tuning_input();
  none.nvls_graph = nullptr;
  EXPECT_FALSE(estimate(none, NcclAlgorithm::Nvls));
}

TEST(NcclNvlsGraphTest, AGraphFilesNvlsSpeedsAreWhatTheTuningCosts) {
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"));
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  const std::string xml = "<graphs version=\"1\">\n"
                          "<graph id=\"3\" pattern=\"5\" nchannels=\"2\" speedintra=\"10\" "
                          "speedinter=\"10\">\n"
                          "<channel><gpu dev=\"3\"/></channel>\n"
                          "<channel><gpu dev=\"5\"/></channel>\n"
                          "</graph>\n</graphs>\n";
  auto file = read_nccl_graph_xml(xml, "nvls.xml");
  ASSERT_TRUE(file) << file.error().to_string();
  ASSERT_TRUE(file->nvls);
  SystemGraphShape shape{1, 8, 8, {0, 1, 2, 3, 4, 5, 6, 7}};
  SystemGraphs graphs = graphs_on_system(*file, system->line_topology, shape);
  ASSERT_FALSE(graphs.broken) << graphs.broken->to_string();
  ASSERT_TRUE(graphs.nvls);
  EXPECT_EQ(graphs.nvls->heads, (std::vector<RankId>{RankId(3), RankId(5)}));
  const NcclMachine steered =
      with_graphs(*system, *machine, std::nullopt, std::nullopt, graphs.nvls);
  // 2 x min(10 x 0.85 x 1/2 x 2, 10) = 17 GB/s: NCCL's ring wins 1 GiB instead.
  auto nvls = estimate(steered.tuning_input(), NcclAlgorithm::Nvls);
  ASSERT_TRUE(nvls);
  EXPECT_NEAR(nvls->bus_gbps, 17, 1e-9);
  auto before =
      nccl_choose(CollectiveKind::Allreduce, double(int64_t(1) << 30), machine->tuning_input());
  auto after =
      nccl_choose(CollectiveKind::Allreduce, double(int64_t(1) << 30), steered.tuning_input());
  ASSERT_TRUE(before && after);
  EXPECT_EQ(before->algorithm, NcclAlgorithm::Nvls);
  EXPECT_EQ(after->algorithm, NcclAlgorithm::Ring);
}

TEST(NcclNvlsGraphTest, AcrossNodesNvlsTreeRunsThroughTheHeadsNics) {
  // Two DGX H100 nodes, NVLS tree at 1 GiB: the network stage runs on the heads' NICs. With the
  // searched eight the switch port sets the pace; four heads on four NICs halve the network's
  // rate, which then does.
  auto system = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(system);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine);
  NcclNvlsGraph four = *machine->nvls_graph;
  four.heads = {RankId(0), RankId(2), RankId(4), RankId(6)};
  four.nics = {0, 2, 4, 6};
  const NcclMachine halved = with_graphs(*system, *machine, std::nullopt, std::nullopt, four);
  NcclRunOptions o;
  o.algorithm = NcclAlgorithm::NvlsTree;
  const int64_t gib = int64_t(1) << 30;
  auto searched = simulate_nccl(CollectiveKind::Allreduce, gib, *system, *machine, o);
  auto fewer = simulate_nccl(CollectiveKind::Allreduce, gib, *system, halved, o);
  ASSERT_TRUE(searched && fewer);
  EXPECT_GT(double(fewer->result.completion), 1.25 * double(searched->result.completion));
}

TEST(NcclNvlsGraphTest, ADumpedNvSwitchNodeOfItsOwnHasNvls) {
  // NCCL's dump of a GB200 tray (4 GPUs, 18 NVLinks each to the NVSwitch) is no preset's node:
  // it reads as the switch's ports, and its NVLS graph heads every GPU at Blackwell's 90 GB/s.
  auto dump = read_nccl_topology_file(std::string(SYNCOLL_SOURCE_DIR) +
                                      "/examples/nccl_topo/gb200_tray.xml");
  ASSERT_TRUE(dump) << dump.error().to_string();
  auto dumped = system_of_dump(*dump, "gb200_tray.xml");
  ASSERT_TRUE(dumped) << dumped.error().to_string();
  ASSERT_TRUE(dumped->node);
  auto system = simulator::make_system_model(dumped->preset, *dumped->node, 1);
  ASSERT_TRUE(system) << system.error().to_string();
  EXPECT_TRUE(system->nvls);
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine && machine->nvls_graph);
  EXPECT_EQ(machine->nvls_graph->heads, first_ranks(4));
  EXPECT_DOUBLE_EQ(machine->nvls_graph->intra_gbps, 90);
}

} // namespace
} // namespace syncoll::nccl
