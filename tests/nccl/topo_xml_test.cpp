// NCCL's topology dump read as a syncoll machine: the hand-written dumps of examples/nccl_topo/
// and malformed ones, each error at its line and column.
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "nccl/topo_xml.h"
#include "simulator/routes.h"
#include "simulator/system_model.h"
#include "verifier/verify.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>

namespace syncoll::nccl {
namespace {

std::string example(const std::string &name) {
  return std::string(SYNCOLL_SOURCE_DIR) + "/examples/nccl_topo/" + name;
}

XmlMachine read(const std::string &name) {
  auto m = read_nccl_topology_file(example(name));
  EXPECT_TRUE(m) << m.error().to_string();
  return *std::move(m);
}

// The same machine under the library's name, so that two readings compare link for link.
TopologyDraft renamed(const Topology &t, const std::string &name) {
  TopologyDraft d = t.to_draft();
  d.name = name;
  return d;
}

std::string error_of(const std::string &xml) {
  auto m = read_nccl_topology_xml(xml, "node.xml", "node");
  EXPECT_FALSE(m) << "read a malformed dump";
  if (m)
    return {};
  std::string text = m.error().to_string();
  return text.substr(0, text.find_last_not_of('\n') + 1); // one line
}

TEST(NcclTopologyXmlTest, ADgxH100DumpIsTheLibrarysDgxH100) {
  const XmlMachine m = read("dgx_h100.xml");
  EXPECT_FALSE(m.includes_pcie);
  EXPECT_EQ(m.generation, GpuGeneration::Hopper);
  ASSERT_EQ(m.gpus.size(), 8u);
  for (const XmlGpu &g : m.gpus)
    EXPECT_EQ(g.nvswitch_nvlinks, 18);
  EXPECT_EQ(m.cpus.at(0).interconnect.gbps, 22); // Sapphire Rapids
  ASSERT_EQ(m.nics.size(), 8u);
  EXPECT_DOUBLE_EQ(m.nics[3].gbps, 50); // 400 Gb/s
  EXPECT_EQ(m.nics[3].nearest_ranks, std::vector<int>{3});
  const auto same = renamed(dgx_h100(), "dgx_h100");
  EXPECT_EQ(m.topology->to_draft().links, same.links);
  EXPECT_EQ(m.topology->relations(), dgx_h100().relations());
}

TEST(NcclTopologyXmlTest, ADgxA100DumpIsTheLibrarysDgxA100AndItsNicsShareSwitches) {
  const XmlMachine m = read("dgx_a100.xml");
  EXPECT_EQ(m.generation, GpuGeneration::Ampere);
  EXPECT_EQ(m.topology->to_draft().links, dgx_a100().to_draft().links);
  EXPECT_EQ(m.cpus.at(1).interconnect.gbps, 16); // AMD
  ASSERT_EQ(m.nics.size(), 8u);
  EXPECT_DOUBLE_EQ(m.nics[0].gbps, 25); // HDR 200 Gb/s
  EXPECT_EQ(m.nics[5].nearest_ranks, (std::vector<int>{4, 5}));
}

TEST(NcclTopologyXmlTest, AGb200TrayIsAnNvSwitchNodeOfFourBlackwellsWithC2c) {
  const XmlMachine m = read("gb200_tray.xml");
  EXPECT_EQ(m.generation, GpuGeneration::Blackwell);
  EXPECT_EQ(m.topology->num_ranks(), 4);
  EXPECT_EQ(m.topology->num_switches(), 0);
  EXPECT_DOUBLE_EQ(m.topology->links().front().bandwidth.value, 18 * 50.0);
  EXPECT_DOUBLE_EQ(m.gpus[2].c2c_gbps, 450);
  EXPECT_EQ(m.gpus[2].cpu, 1);
}

// Without NVLink the GPUs reach each other through the PCIe switches and, across sockets,
// through the CPUs: the routes say so, and their narrowest link is the sockets' interconnect.
TEST(NcclTopologyXmlTest, APcieServersGpusMeetThroughTheirSwitchesAndSockets) {
  const XmlMachine m = read("pcie_server_8gpu.xml");
  EXPECT_TRUE(m.includes_pcie);
  EXPECT_FALSE(m.generation.has_value()); // sm 89 has no row: no NVLink to price
  const Topology &t = *m.topology;
  EXPECT_EQ(t.num_ranks(), 8);
  EXPECT_EQ(t.num_switches(), 6); // 4 PCIe switches, 2 sockets
  EXPECT_TRUE(t.reaches(RankId(0), RankId(1)));
  EXPECT_TRUE(t.reaches(RankId(0), RankId(7)));
  simulator::Routes routes(t);
  auto narrowest = [&](int a, int b) {
    double gbps = 1e9;
    for (LinkId l : routes.route(RankId(a), RankId(b)))
      gbps = std::min(gbps, t.link(l).bandwidth.value);
    return std::pair{routes.route(RankId(a), RankId(b)).size(), gbps};
  };
  EXPECT_EQ(narrowest(0, 1), (std::pair<size_t, double>{2, 24})); // one switch
  EXPECT_EQ(narrowest(0, 2), (std::pair<size_t, double>{4, 24})); // two switches, one socket
  EXPECT_EQ(narrowest(0, 4), (std::pair<size_t, double>{5, 10})); // across Skylake's UPI
  EXPECT_EQ(m.nics.at(1).nearest_ranks, (std::vector<int>{4, 5}));
}

// NCCL's search walks paths through the PCIe switches and sockets: on the dual-socket server one
// ring crosses the sockets' UPI once each way, so the socket link's 10 GB/s is the channel's
// speed, as NCCL settles on such machines; every ring visits every GPU once.
TEST(NcclTopologyXmlTest, NcclsSearchFindsTheRingThroughPcieThatCrossesTheSocketsOnce) {
  const XmlMachine m = read("pcie_server_8gpu.xml");
  const Topology &t = *m.topology;
  auto graph = nccl_search_rings(t, nccl_generation_for(t));
  ASSERT_TRUE(graph.has_value());
  EXPECT_DOUBLE_EQ(graph->intra_gbps, 10);
  ASSERT_EQ(graph->channels(), 1);
  std::vector<RankId> ring = graph->rings.front();
  std::sort(ring.begin(), ring.end());
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(ring[size_t(r)], RankId(r));
  int crossings = 0;
  const std::vector<RankId> &order = graph->rings.front();
  for (size_t i = 0; i < order.size(); ++i)
    crossings += (order[i].value() < 4) != (order[(i + 1) % order.size()].value() < 4);
  EXPECT_EQ(crossings, 2);
}

// GPUs that meet only through PCIe switches and sockets have no tree over direct links; NCCL's
// tree inside a node is then a chain in the order of each channel's searched ring, and its
// program verifies and runs on the dump's machine.
TEST(NcclTopologyXmlTest, NcclsTreeThroughPcieIsAChainAlongEachSearchedRing) {
  for (const char *dump : {"pcie_server_8gpu.xml", "workstation_4gpu.xml"}) {
    const XmlMachine m = read(dump);
    const Topology &t = *m.topology;
    ASSERT_FALSE(find_tree(t, RankId(0)).has_value()) << dump;
    auto rings = nccl_topology_rings(t, CollectiveKind::Allreduce, 0, std::nullopt, std::nullopt,
                                     nccl_search_host(m));
    ASSERT_TRUE(rings) << rings.error().to_string();
    auto trees = nccl_topology_trees(t, rings->channels, rings->rings);
    ASSERT_TRUE(trees) << trees.error().to_string();
    ASSERT_EQ(trees->size(), rings->rings.size()) << dump;
    for (size_t c = 0; c < trees->size(); ++c) {
      const std::vector<RankId> &ring = rings->rings[c];
      EXPECT_EQ((*trees)[c][size_t(ring.front().value())], -1) << dump << " channel " << c;
      for (size_t k = 1; k < ring.size(); ++k)
        EXPECT_EQ((*trees)[c][size_t(ring[k].value())], ring[k - 1].value())
            << dump << " channel " << c << " position " << k;
    }
    EXPECT_FALSE(nccl_topology_trees(t, rings->channels, {})) << "no ring to chain along";
    auto p = nccl_topology_program(NcclAlgorithm::Tree, CollectiveKind::Allreduce, t, *rings,
                                   Protocol::Simple);
    ASSERT_TRUE(p) << p.error().to_string();
    const auto report = verifier::verify(*p, verifier::VerifyOptions{});
    EXPECT_TRUE(report.all_hold()) << dump << "\n" << report.to_text();
  }
}

TEST(NcclTopologyXmlTest, AWorkstationsGpusHangOffTheSocketsRootPorts) {
  const XmlMachine m = read("workstation_4gpu.xml");
  EXPECT_EQ(m.topology->num_switches(), 1);
  EXPECT_EQ(m.topology->links().size(), 8u);
  ASSERT_EQ(m.nics.size(), 1u);
  EXPECT_FALSE(m.nics[0].gdr);
  EXPECT_EQ(m.nics[0].nearest_ranks, (std::vector<int>{0, 1, 2, 3}));
}

TEST(NcclTopologyXmlTest, RanksComeFromTheRankAttributeElseFromDev) {
  const std::string two = R"(<system version="1"><cpu numaid="0" arch="x86_64">
<pci busid="0000:01:00.0"><gpu dev="0" sm="80" rank="1"/></pci>
<pci busid="0000:02:00.0"><gpu dev="1" sm="80" rank="0"/></pci></cpu></system>)";
  auto m = read_nccl_topology_xml(two, "two.xml", "two");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->gpus[0].busid, "0000:02:00.0");
  std::string unranked = two;
  for (const char *r : {" rank=\"1\"", " rank=\"0\""})
    unranked.erase(unranked.find(r), std::string(r).size());
  auto by_dev = read_nccl_topology_xml(unranked, "two.xml", "two");
  ASSERT_TRUE(by_dev) << by_dev.error().to_string();
  EXPECT_EQ(by_dev->gpus[0].busid, "0000:01:00.0");
}

TEST(NcclTopologyXmlTest, MalformedDumpsAreLocatedErrors) {
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\">\n  <pci busid=\"0000:01:00.0\">\n</system>"),
            "node.xml:3:3: invalid XML: Start-end tags mismatch");
  EXPECT_EQ(error_of("<algo/>"), "node.xml:1:1: root element is <algo>, expected NCCL's <system>");
  EXPECT_EQ(error_of("<system>\n<cpu numaid=\"0\"><pci busid=\"a\">\n<gpu dev=\"x\" sm=\"80\"/>"
                     "</pci></cpu></system>"),
            "node.xml:3:6: attribute 'dev' must be an integer, found 'x'");
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\"/></system>"),
            "node.xml:1:1: the topology holds no <gpu>");
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\"><pci busid=\"a\"><gpu dev=\"0\" sm=\"80\">\n"
                     "<nvlink target=\"b\" count=\"2\" tclass=\"0x030200\"/></gpu></pci></cpu>"
                     "</system>"),
            "node.xml:2:9: NVLink target b is not a GPU of this file (nor an NVSwitch, "
            "tclass 0x068000)");
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\"><pci busid=\"a\"><gpu dev=\"0\" sm=\"80\" "
                     "rank=\"0\"/></pci>\n<pci busid=\"b\"><gpu dev=\"1\" sm=\"80\" rank=\"0\"/>"
                     "</pci></cpu></system>"),
            "node.xml:2:37: a second GPU with rank 0");
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\"><pci busid=\"a\">\n<gpu dev=\"0\" sm=\"86\">"
                     "<nvlink target=\"c\" count=\"1\" tclass=\"0x068000\"/></gpu></pci>"
                     "<pci busid=\"b\"><gpu dev=\"1\" sm=\"86\"/></pci></cpu></system>"),
            "node.xml:2:14: GPU of sm 86 has NVLinks, and syncoll knows no NVLink rate "
            "for it (sm 70, 80, 90 and 100 have one)");
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\"><gpu dev=\"0\" sm=\"80\"/></cpu></system>"),
            "node.xml:1:25: <gpu> must sit inside its <pci> function");
}

// Cloud images ship files for NCCL_TOPO_FILE that place the GPUs' and NICs' PCI functions and
// leave the GPUs to NCCL's detection: without a machine to detect, the error says so, at the
// first GPU function, and names the file that would do.
TEST(NcclTopologyXmlTest, AFileOfGpuFunctionsWithoutGpusNamesTheDumpToGive) {
  EXPECT_EQ(error_of("<system><cpu numaid=\"0\">\n<pci busid=\"ffff:ff:01.0\" class=\"0x060400\">"
                     "\n<pci busid=\"0001:00:00.0\" class=\"0x030200\"/>"
                     "<pci busid=\"0101:00:00.0\" class=\"0x020700\"/>"
                     "<pci busid=\"0002:00:00.0\" class=\"0x030200\"/></pci></cpu></system>"),
            "node.xml:3:1: the topology holds no <gpu>: its 2 GPU function(s) (class 0x030200 at "
            "0001:00:00.0, ...) are PCI placement only, which NCCL_TOPO_FILE completes with the "
            "GPUs NCCL detects; give the file NCCL_TOPO_DUMP_FILE writes on the machine");
}

// A GPU listing NVLinks to its own function (as a shipped NC A100 v4 file does) reads as NCCL
// reads it: the links join no pair, so the GPUs meet over PCIe, and `topo show` names them.
TEST(NcclTopologyXmlTest, NvlinksFromAGpuToItselfJoinNoPair) {
  const std::string two = R"(<system version="1"><cpu numaid="0" arch="x86_64">
<pci busid="0001:00:00.0" class="0x030200"><gpu dev="0" sm="80" rank="0">
<nvlink target="0001:00:00.0" count="12" tclass="0x030200"/></gpu></pci>
<pci busid="0002:00:00.0" class="0x030200"><gpu dev="1" sm="80" rank="1">
<nvlink target="0002:00:00.0" count="12" tclass="0x030200"/></gpu></pci></cpu></system>)";
  auto m = read_nccl_topology_xml(two, "self.xml", "self");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_TRUE(m->includes_pcie);
  for (const XmlGpu &g : m->gpus) {
    EXPECT_EQ(g.self_nvlinks, 12);
    EXPECT_EQ(g.direct_nvlinks, 0);
  }
  std::string without = two;
  for (size_t at; (at = without.find("\n<nvlink")) != std::string::npos;)
    without.erase(at, without.find("/>", at) + 2 - at);
  auto plain = read_nccl_topology_xml(without, "self.xml", "self");
  ASSERT_TRUE(plain) << plain.error().to_string();
  EXPECT_EQ(m->topology->to_draft().links, plain->topology->to_draft().links);
}

// NCCL tries different rings per channel only where its ring does not cross between AMD sockets
// (search.cc): on the AMD server every channel repeats one ring; without the host (syncoll's
// own search) different rings carry more; Intel sockets (the PCIe server) do not restrict it.
TEST(NcclTopologyXmlTest, AcrossAmdSocketsNcclRepeatsOneRing) {
  const XmlMachine amd = read("pcie_amd_4gpu_bridged.xml");
  const NcclSearchHost host = nccl_search_host(amd);
  EXPECT_EQ(host.amd_sockets.size(), 4u);
  const GenerationTraits &g = nccl_generation_for(*amd.topology);
  const auto nccl = nccl_search_rings(*amd.topology, g, host);
  const auto own = nccl_search_rings(*amd.topology, g);
  ASSERT_TRUE(nccl && own);
  for (const auto &ring : nccl->rings)
    EXPECT_EQ(ring, nccl->rings.front());
  EXPECT_GT(double(own->channels()) * own->intra_gbps, double(nccl->channels()) * nccl->intra_gbps);
  EXPECT_TRUE(nccl_search_host(read("pcie_server_8gpu.xml")).amd_sockets.empty());
  // A single AMD socket (the workstation) has no crossing, so nothing to restrict.
  const XmlMachine one = read("workstation_4gpu.xml");
  const auto restricted =
      nccl_search_rings(*one.topology, nccl_generation_for(*one.topology), nccl_search_host(one));
  const auto free = nccl_search_rings(*one.topology, nccl_generation_for(*one.topology));
  ASSERT_TRUE(restricted && free);
  EXPECT_EQ(restricted->rings, free->rings);
}

// `--system node.xml`: the calibrated system whose node the dump is, with the dump's NICs; EFA
// devices (rdmap...) choose the preset on EFA; a node no preset has is refused, located.
TEST(NcclTopologyXmlTest, ADumpsSystemIsThePresetOfItsNodeWithItsNics) {
  const auto h100_system = system_of_dump(read("dgx_h100.xml"), "dgx_h100.xml");
  ASSERT_TRUE(h100_system.has_value()) << h100_system.error().to_string();
  EXPECT_FALSE(h100_system->node);
  const SystemPreset *h100 = &h100_system->preset;
  EXPECT_EQ(h100->name, "dgx_h100");
  EXPECT_EQ(h100->nics_per_node, 8);
  EXPECT_DOUBLE_EQ(h100->nic_gbps, 50.0);
  // The same node with four 200 Gb/s EFA devices: AWS's H100 preset, four NICs of 25 GB/s.
  std::string text;
  {
    std::ifstream in(example("dgx_h100.xml"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  int kept = 0;
  for (size_t at = text.find("<net "); at != std::string::npos; at = text.find("<net ", at + 1)) {
    const size_t name = text.find("name=\"", at) + 6;
    text.replace(name, text.find('"', name) - name, fmt::format("rdmap{}s0", kept));
    const size_t speed = text.find("speed=\"", at) + 7;
    text.replace(speed, text.find('"', speed) - speed, ++kept <= 4 ? "200000" : "100000");
  }
  auto efa_machine = read_nccl_topology_xml(text, "efa.xml", "efa");
  ASSERT_TRUE(efa_machine.has_value()) << efa_machine.error().to_string();
  const auto efa_system = system_of_dump(*efa_machine, "efa.xml");
  ASSERT_TRUE(efa_system.has_value());
  const SystemPreset *efa = &efa_system->preset;
  EXPECT_EQ(efa->name, "aws_p5");
  EXPECT_EQ(efa->nics_per_node, 4);
  EXPECT_DOUBLE_EQ(efa->nic_gbps, 25.0);
  // A node no preset has runs as dumped: its links, switches and sockets, its NICs, and the
  // launch and fabric of its generation's first preset.
  const XmlMachine server = read("pcie_server_8gpu.xml");
  const auto pcie = system_of_dump(server, "pcie_server_8gpu.xml");
  ASSERT_TRUE(pcie.has_value()) << pcie.error().to_string();
  ASSERT_TRUE(pcie->node);
  EXPECT_EQ(*pcie->node, *server.topology);
  EXPECT_EQ(pcie->preset.name, server.topology->name());
  EXPECT_EQ(pcie->preset.gpus_per_node, 8);
  // Its L40S-class GPUs (sm 89) have no row: Ampere's constants, and the label says so; its
  // two 100 Gb/s mlx5 HCAs put it on EDR InfiniBand.
  EXPECT_EQ(pcie->preset.generation, GpuGeneration::Ampere);
  EXPECT_EQ(pcie->label, "8 GPUs of sm 89 with Ampere (A100)'s constants (no row of its own)");
  EXPECT_EQ(pcie->preset.fabric, Fabric::InfinibandEdr);
  EXPECT_EQ(pcie->preset.nics_per_node, 2);
  EXPECT_DOUBLE_EQ(pcie->preset.host_path_gbps, 0.0);
}

// RCCL writes NCCL's file for AMD's GPUs: `gcn` names the architecture, `<xgmi>` the links
// between GPUs. An MI300X platform's dump, one xGMI link between every pair, is the library's
// `mi300x` link for link, and `--system` runs it as the calibrated MI300X system.
TEST(NcclTopologyXmlTest, AnRcclMi300xDumpIsTheLibrarysMi300x) {
  const XmlMachine m = read("mi300x_rccl.xml");
  EXPECT_FALSE(m.includes_pcie);
  EXPECT_EQ(m.generation, GpuGeneration::Cdna3);
  EXPECT_TRUE(written_by_rccl(m));
  EXPECT_FALSE(written_by_rccl(read("dgx_h100.xml")));
  ASSERT_EQ(m.gpus.size(), 8u);
  for (const XmlGpu &g : m.gpus) {
    EXPECT_EQ(g.gcn, "gfx942");
    EXPECT_EQ(kind_of(g), "gfx942");
    EXPECT_EQ(g.direct_nvlinks, 7);
  }
  EXPECT_EQ(m.topology->to_draft().links, renamed(mi300x(), "mi300x").links);
  ASSERT_EQ(m.nics.size(), 8u);
  EXPECT_EQ(m.nics[5].nearest_ranks, std::vector<int>{5});
  const auto system = system_of_dump(m, "mi300x_rccl.xml");
  ASSERT_TRUE(system.has_value()) << system.error().to_string();
  EXPECT_FALSE(system->node);
  EXPECT_EQ(system->preset.generation, GpuGeneration::Cdna3);
  EXPECT_EQ(system->preset.node_topology, "mi300x");
  EXPECT_EQ(system->preset.nics_per_node, 8);
}

// `n` AMD GPUs of architecture `gcn` (as RCCL writes it, with RCCL's `sm` beside it), joined
// pairwise by one xGMI link where `xgmi`, each under its own PCI function of one socket.
std::string amd_dump(const std::string &gcn, int sm, int n, bool xgmi) {
  std::string out = R"(<system version="2"><cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">)";
  for (int g = 0; g < n; ++g) {
    out += fmt::format("\n<pci busid=\"0000:{:02x}:00.0\" class=\"0x120000\">"
                       "<gpu dev=\"{}\" sm=\"{}\" gcn=\"{}\" rank=\"{}\" gdr=\"1\">",
                       g + 1, g, sm, gcn, g);
    for (int p = 0; p < n && xgmi; ++p)
      if (p != g)
        out += fmt::format("<xgmi target=\"0000:{:02x}:00.0\" count=\"1\" tclass=\"0x120000\"/>",
                           p + 1);
    out += "</gpu></pci>";
  }
  return out + "</cpu></system>";
}

// An RCCL dump of a Frontier node: 8 MI250X GCDs under one EPYC socket, 4 xGMI links between a
// package's two GCDs and one to each of two other packages' GCDs (the `mi250x` cube).
std::string frontier_dump() {
  const int links[8][8] = {{0, 4, 1, 0, 0, 0, 1, 0}, {4, 0, 0, 1, 0, 1, 0, 0},
                           {1, 0, 0, 4, 1, 0, 0, 0}, {0, 1, 4, 0, 0, 0, 0, 1},
                           {0, 0, 1, 0, 0, 4, 1, 0}, {0, 1, 0, 0, 4, 0, 0, 1},
                           {1, 0, 0, 0, 1, 0, 0, 4}, {0, 0, 0, 1, 0, 1, 4, 0}};
  std::string out = R"(<system version="2"><cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">)";
  for (int g = 0; g < 8; ++g) {
    out += fmt::format("\n<pci busid=\"0000:{:02x}:00.0\" class=\"0x120000\">"
                       "<gpu dev=\"{}\" sm=\"90\" gcn=\"gfx90a\" rank=\"{}\" gdr=\"1\">",
                       0xc1 + 5 * g, g, g);
    for (int p = 0; p < 8; ++p)
      if (links[g][p] > 0)
        out += fmt::format("<xgmi target=\"0000:{:02x}:00.0\" count=\"{}\" tclass=\"0x120000\"/>",
                           0xc1 + 5 * p, links[g][p]);
    out += "</gpu></pci>";
  }
  return out + "</cpu></system>";
}

// NCCL's search takes the nearest path type that finds a graph: on a dump of GPUs linked to
// each other it rings over their links alone, never through the socket they all hang off (a
// ring through it would ask every GCD's one PCIe link to the host for a share of every channel),
// so the dump's graph is the `frontier` preset's, channel for channel.
TEST(NcclTopologyXmlTest, ADumpsRingsTakeTheNearestPathTypeThatFindsAGraph) {
  auto dump = read_nccl_topology_xml(frontier_dump(), "frontier.xml", "frontier");
  ASSERT_TRUE(dump) << dump.error().to_string();
  ASSERT_GT(dump->topology->num_switches(), 0);
  const GenerationTraits &cdna2 = generation_traits(GpuGeneration::Cdna2);
  auto graph = nccl_search_rings(*dump->topology, cdna2, nccl_search_host(*dump));
  ASSERT_TRUE(graph);
  for (const std::vector<RankId> &ring : graph->rings)
    for (size_t k = 0; k < ring.size(); ++k)
      EXPECT_TRUE(dump->topology->find_link(ring[k], ring[(k + 1) % ring.size()]))
          << ring[k].value() << "->" << ring[(k + 1) % ring.size()].value();
  auto preset = simulator::make_system_model(*find_system_preset("frontier"), 1);
  ASSERT_TRUE(preset);
  auto preset_graph = nccl_search_rings(preset->line_topology, cdna2);
  ASSERT_TRUE(preset_graph);
  EXPECT_EQ(graph->channels(), preset_graph->channels());
  EXPECT_DOUBLE_EQ(graph->intra_gbps, preset_graph->intra_gbps);
  // As a plain topology (-t) the dump's rings are searched with its GPUs' own constants too (RCCL's
  // 36 GB/s a link, not an Ampere NVLink's 20 of 25).
  auto plain = nccl_topology_rings(*dump->topology, CollectiveKind::Allreduce, 0, RankId(0),
                                   std::nullopt, nccl_search_host(*dump));
  ASSERT_TRUE(plain) << plain.error().to_string();
  EXPECT_EQ(plain->graph.channels(), preset_graph->channels());
  EXPECT_DOUBLE_EQ(plain->graph.intra_gbps, preset_graph->intra_gbps);
  // Where the GPUs share no link the search widens to the host's paths (two GCDs of one package
  // without their xGMI links: a PCIe dump of two GPUs under one socket).
  auto pcie = read_nccl_topology_xml(amd_dump("gfx90a", 90, 2, false), "two.xml", "two");
  ASSERT_TRUE(pcie) << pcie.error().to_string();
  auto through_host = nccl_search_rings(*pcie->topology, cdna2, nccl_search_host(*pcie));
  ASSERT_TRUE(through_host);
  EXPECT_GT(through_host->channels(), 0);
}

// NCCL's tuning reads its CPU rows from the dump's CPU nodes: a dumped node's system says whose
// they are, over the preset's where the node is a preset's.
TEST(NcclTopologyXmlTest, ADumpsCpusSayWhatHostItsTuningReads) {
  auto frontier = read_nccl_topology_xml(frontier_dump(), "frontier.xml", "frontier");
  ASSERT_TRUE(frontier);
  auto amd = system_of_dump(*frontier, "frontier.xml");
  ASSERT_TRUE(amd) << amd.error().to_string();
  EXPECT_EQ(amd->preset.host_cpu, HostCpu::Amd);
  const XmlMachine h100 = read("dgx_h100.xml");
  auto intel = system_of_dump(h100, "dgx_h100.xml");
  ASSERT_TRUE(intel) << intel.error().to_string();
  EXPECT_EQ(intel->preset.host_cpu, HostCpu::Intel);
  std::string arm = frontier_dump();
  arm.replace(arm.find(R"(arch="x86_64" vendor="AuthenticAMD")"),
              std::string_view(R"(arch="x86_64" vendor="AuthenticAMD")").size(),
              R"(arch="arm64" vendor="ARM")");
  auto grace = read_nccl_topology_xml(arm, "arm.xml", "arm");
  ASSERT_TRUE(grace) << grace.error().to_string();
  auto arm_system = system_of_dump(*grace, "arm.xml");
  ASSERT_TRUE(arm_system) << arm_system.error().to_string();
  EXPECT_EQ(arm_system->preset.host_cpu, HostCpu::Arm);
}

// NCCL enables LL128 by default only on GPUs it validated it on (sm 70, 80, 90, 100, 120) and
// only where its graph's hops inside a node are NVLink: never on a PCIe server of L40S (sm 89),
// whose rings cross PCIe switches and sockets; NCCL_PROTO=LL128 still runs it there.
TEST(NcclTopologyXmlTest, NcclChoosesLl128OnlyOnNvlinkGraphsOfGpusItValidatedItOn) {
  const XmlMachine pcie = read("pcie_server_8gpu.xml");
  auto dumped = system_of_dump(pcie, "pcie_server_8gpu.xml");
  ASSERT_TRUE(dumped) << dumped.error().to_string();
  EXPECT_FALSE(dumped->preset.ll128_by_default); // sm 89
  ASSERT_TRUE(dumped->node);
  auto system = simulator::make_system_model(dumped->preset, *dumped->node, 1);
  ASSERT_TRUE(system) << system.error().to_string();
  auto machine = nccl_machine(*system);
  ASSERT_TRUE(machine) << machine.error().to_string();
  EXPECT_GT(machine->ring.type_intra, NcclPathType::Nvl);
  for (int64_t bytes = 1 << 10; bytes <= int64_t(1) << 30; bytes *= 4) {
    auto run = simulate_nccl(CollectiveKind::Allreduce, bytes, *system, *machine);
    ASSERT_TRUE(run) << run.error().to_string();
    EXPECT_NE(run->choice.protocol, Protocol::LL128) << bytes << ": " << run->info;
  }
  NcclRunOptions forced;
  forced.protocol = Protocol::LL128;
  auto ll128 = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, *system, *machine, forced);
  ASSERT_TRUE(ll128) << ll128.error().to_string();
  EXPECT_EQ(ll128->choice.protocol, Protocol::LL128);
  // An NVLink node's graph keeps it.
  auto h100 = simulator::make_system_model(*find_system_preset("dgx_h100"), 2);
  ASSERT_TRUE(h100);
  auto h100_machine = nccl_machine(*h100);
  ASSERT_TRUE(h100_machine);
  EXPECT_EQ(h100_machine->ring.type_intra, NcclPathType::Nvl);
  EXPECT_TRUE(h100->preset->ll128_by_default);
}

// The generation comes from `gcn`, never from RCCL's `sm` (gfx90a writes sm 90, which is no
// Hopper); a CDNA GPU without a row has no xGMI rate, which the error names where its links are;
// and a dump of four MI355X (gfx950, with the target features RCCL may keep) is a node of its
// own on CDNA4's row.
TEST(NcclTopologyXmlTest, AnAmdGpusGenerationIsItsArchitectureNotItsSm) {
  auto pcie_mi100 = read_nccl_topology_xml(amd_dump("gfx908", 90, 2, false), "mi100.xml", "mi100");
  ASSERT_TRUE(pcie_mi100) << pcie_mi100.error().to_string();
  EXPECT_FALSE(pcie_mi100->generation.has_value());
  EXPECT_TRUE(pcie_mi100->includes_pcie);
  const auto refused = system_of_dump(*pcie_mi100, "mi100.xml");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().to_string(),
            "mi100.xml:1:1: its GPUs are gfx908, which no generation row has (gfx90a, gfx942 and "
            "gfx950 do); simulate it as one node with -t mi100.xml\n");
  EXPECT_EQ(error_of(amd_dump("gfx908", 90, 2, true)),
            "node.xml:2:65: GPU gfx908 has xGMI links, and syncoll knows no xGMI rate for it "
            "(gfx90a, gfx942 and gfx950 have one)");
  EXPECT_EQ(error_of(amd_dump("908", 90, 2, true)), // an older RCCL's number for gfx908
            "node.xml:2:65: GPU gcn 908 has xGMI links, and syncoll knows no xGMI rate for it "
            "(gfx90a, gfx942 and gfx950 have one)");
  // gfx90a (MI250X's GCDs, MI210; the number 910 in older RCCL) is CDNA2, at its xGMI rate.
  for (const char *gcn : {"gfx90a", "910"}) {
    auto mi250x = read_nccl_topology_xml(amd_dump(gcn, 90, 2, true), "gcds.xml", "gcds");
    ASSERT_TRUE(mi250x) << mi250x.error().to_string();
    EXPECT_EQ(mi250x->generation, GpuGeneration::Cdna2) << gcn;
    for (const Link &l : mi250x->topology->links())
      EXPECT_DOUBLE_EQ(l.bandwidth.value, generation_traits(GpuGeneration::Cdna2).nvlink_line_gbps)
          << gcn;
  }
  auto four =
      read_nccl_topology_xml(amd_dump("gfx950:sramecc+:xnack-", 95, 4, true), "four.xml", "four");
  ASSERT_TRUE(four) << four.error().to_string();
  EXPECT_EQ(four->generation, GpuGeneration::Cdna4);
  EXPECT_FALSE(four->includes_pcie);
  for (const Link &l : four->topology->links())
    EXPECT_DOUBLE_EQ(l.bandwidth.value, generation_traits(GpuGeneration::Cdna4).nvlink_line_gbps);
  const auto system = system_of_dump(*four, "four.xml");
  ASSERT_TRUE(system.has_value()) << system.error().to_string();
  ASSERT_TRUE(system->node);
  EXPECT_EQ(system->preset.generation, GpuGeneration::Cdna4);
  EXPECT_EQ(system->preset.gpus_per_node, 4);
  EXPECT_EQ(system->label, "4 GPUs CDNA4 (MI355X)");
  EXPECT_EQ(system->preset.description, "a node read from RCCL's topology dump");
  EXPECT_EQ(generation_of_gcn("942"), GpuGeneration::Cdna3); // older RCCL writes the number
  EXPECT_FALSE(generation_of_gcn("gfx908").has_value());
}

} // namespace
} // namespace syncoll::nccl
