// NCCL's graph file: the rings syncoll's search finds written as NCCL writes them, read back to
// the same rings, and a graph NCCL could not run on the topology a verdict at its channel.
#include "model/hardware.h"
#include "model/topology_library.h"
#include "nccl/graph_xml.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>
#include <numeric>

namespace syncoll::nccl {
namespace {

std::vector<int> identity(int n) {
  std::vector<int> devs(static_cast<size_t>(n), 0);
  std::iota(devs.begin(), devs.end(), 0);
  return devs;
}

TEST(NcclGraphXmlTest, TheSearchsRingsRoundTripThroughTheGraphFile) {
  const Topology t = dgx1();
  const auto graph = nccl_search_rings(t, nccl_generation_for(t));
  ASSERT_TRUE(graph.has_value());
  const std::string xml = ring_graph_xml(*graph, identity(8));
  EXPECT_NE(xml.find("pattern=\"4\""), std::string::npos);
  EXPECT_NE(xml.find("typeintra=\"NVL\""), std::string::npos);
  auto file = read_nccl_graph_xml(xml, "graph.xml");
  ASSERT_TRUE(file) << file.error().to_string();
  ASSERT_TRUE(file->ring);
  const GraphRings read = rings_of_graph(*file->ring, t, identity(8));
  ASSERT_FALSE(read.broken) << read.broken->to_string();
  EXPECT_EQ(read.graph.rings, graph->rings);
  EXPECT_DOUBLE_EQ(read.graph.intra_gbps, graph->intra_gbps);
}

std::string ring(const std::vector<int> &devs) {
  std::string xml = "<graphs version=\"1\">\n<graph id=\"0\" pattern=\"4\" nchannels=\"1\" "
                    "speedintra=\"20\">\n<channel>";
  for (int d : devs)
    xml += "<gpu dev=\"" + std::to_string(d) + "\"/>";
  return xml + "</channel>\n</graph>\n</graphs>\n";
}

std::string verdict(const std::vector<int> &devs) {
  auto file = read_nccl_graph_xml(ring(devs), "g.xml");
  EXPECT_TRUE(file) << file.error().to_string();
  const GraphRings read = rings_of_graph(*file->ring, dgx1(), identity(8));
  return read.broken ? read.broken->to_string() : std::string();
}

// DGX-1's GPU 0 has no NVLink to GPU 5: a ring hopping there is one NCCL cannot run on it.
TEST(NcclGraphXmlTest, ARingNcclCouldNotRunIsAVerdictAtItsChannel) {
  EXPECT_EQ(verdict({0, 1, 2, 3, 7, 6, 5, 4}), "");
  EXPECT_EQ(verdict({0, 5, 1, 2, 3, 7, 6, 4}),
            "g.xml:3:1: channel 0 hops from GPU 0 to GPU 5, which 'dgx1' does not join");
  EXPECT_EQ(verdict({0, 1, 2, 3, 7, 6, 5}), "g.xml:3:1: channel 0 visits 7 of the 8 GPUs");
  EXPECT_EQ(verdict({0, 1, 1, 3, 7, 6, 5, 4}), "g.xml:3:1: channel 0 visits GPU 1 twice");
  EXPECT_EQ(verdict({0, 1, 2, 3, 7, 6, 5, 9}),
            "g.xml:3:1: channel 0 names GPU 9, which 'dgx1' does not have");
}

TEST(NcclGraphXmlTest, MalformedGraphFilesAreLocatedErrors) {
  auto error = [](const std::string &xml) {
    auto file = read_nccl_graph_xml(xml, "g.xml");
    EXPECT_FALSE(file);
    return file ? std::string() : file.error().to_string();
  };
  EXPECT_EQ(error("<graphs><graph pattern=\"4\"><channel>"),
            "g.xml:1:36: invalid XML: Start-end tags mismatch\n");
  EXPECT_EQ(error("<graphs>\n<graph pattern=\"x\"/></graphs>"),
            "g.xml:2:8: attribute 'pattern' must be an integer, found 'x'\n");
  EXPECT_EQ(error("<graphs><graph pattern=\"1\"/></graphs>"),
            "g.xml:1:1: no ring graph (a <graph> with pattern=\"4\"), tree graph (id=\"1\" "
            "with pattern 1, 2 or 3) or NVLS graph (id=\"3\" with pattern 5)\n");
  EXPECT_EQ(error("<graphs><graph pattern=\"4\">\n<channel><net dev=\"0\"/><gpu dev=\"0\"/>"
                  "<net dev=\"0\"/><net dev=\"1\"/></channel></graph></graphs>"),
            "g.xml:2:52: a third <net> in one <channel> (a channel enters and leaves its node "
            "once)\n");
  EXPECT_EQ(error("<graphs><graph id=\"1\" pattern=\"3\">\n</graph></graphs>"),
            "g.xml:1:9: the tree graph has no <channel>\n");
  EXPECT_EQ(error("<graphs><graph pattern=\"4\">\n<channel/></graph></graphs>"),
            "g.xml:2:1: a <channel> without a <gpu>\n");
  EXPECT_EQ(error("<graphs><graph pattern=\"4\" typeintra=\"NET\">\n<channel><gpu dev=\"0\"/>"
                  "</channel></graph></graphs>"),
            "g.xml:1:28: attribute 'typeintra' names no path type of a node, found 'NET' (LOC, "
            "NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB or SYS)\n");
}

// NCCL's tree patterns hang a node's chain on its parent node's chain at the head (Tree), at
// the second GPU for a first child (BalancedTree), or at the second GPU for both (SplitTree).
TEST(NcclGraphXmlTest, TreePatternsHangChildNodesWhereNcclConnectsThem) {
  const std::vector<int> chain = {2, 0, 1, 3};
  auto heads_parents = [&](NcclTreePattern pattern) {
    const std::vector<int> parent = nccl_tree_parents(3, NcclTreeChain{chain, pattern});
    // On 3 nodes NCCL's first tree is 0 -> 2 -> 1: node 1 is node 2's first child (below it),
    // node 2 the root's only child (above it). Their heads' parents:
    return std::pair{parent[4 + 2], parent[8 + 2]};
  };
  EXPECT_EQ(heads_parents(NcclTreePattern::Tree), std::pair(8 + 2, 2));
  EXPECT_EQ(heads_parents(NcclTreePattern::BalancedTree), std::pair(8 + 0, 2));
  EXPECT_EQ(heads_parents(NcclTreePattern::SplitTree), std::pair(8 + 0, 0));
  const std::vector<int> parent = nccl_tree_parents(3, NcclTreeChain{chain, NcclTreePattern::Tree});
  EXPECT_EQ(parent[2], -1);
  EXPECT_EQ(parent[0], 2);
  EXPECT_EQ(parent[4 + 3], 4 + 1);
}

// NCCL's double binary tree (trees.cc): its first tree hangs each node on the node that clears
// its lowest set bit and sets the next, so half the nodes are leaves; its second is the first's
// mirror image on an even count and the first shifted by one on an odd count, so every node is
// a leaf of one tree at least and no node's NICs carry both trees' inner traffic.
TEST(NcclTreeTest, TheSecondTreeMakesTheFirstTreesLeavesItsInnerNodes) {
  EXPECT_EQ(nccl_tree_parent_node(8, 0, 0), -1);
  EXPECT_EQ(nccl_tree_parent_node(8, 4, 0), 0); // the root's one child
  EXPECT_EQ(nccl_tree_parent_node(8, 2, 0), 4);
  EXPECT_EQ(nccl_tree_parent_node(8, 6, 0), 4);
  EXPECT_EQ(nccl_tree_parent_node(8, 5, 0), 6);
  EXPECT_EQ(nccl_tree_parent_node(8, 7, 0), 6);
  EXPECT_EQ(nccl_tree_parent_node(8, 7, 1), -1); // the mirror's root
  EXPECT_EQ(nccl_tree_parent_node(8, 3, 1), 7);
  EXPECT_EQ(nccl_tree_parent_node(5, 1, 1), -1); // shifted by one on an odd count
  EXPECT_EQ(nccl_tree_parent_node(5, 4, 1), 3);  // node 3 hangs on node 2 in the first tree
  EXPECT_EQ(nccl_tree_parent_node(5, 3, 0), 2);
  for (int nodes : {2, 3, 4, 5, 8, 13, 64}) {
    std::vector<int> children(size_t(2 * nodes), 0);
    for (int tree : {0, 1})
      for (int node = 0; node < nodes; ++node) {
        const int up = nccl_tree_parent_node(nodes, node, tree);
        ASSERT_EQ(up < 0, node == (tree == 0        ? 0
                                   : nodes % 2 == 0 ? nodes - 1
                                                    : 1))
            << nodes << " nodes, tree " << tree << ", node " << node;
        if (up >= 0)
          ++children[size_t(tree * nodes + up)];
      }
    for (int node = 0; node < nodes; ++node) {
      EXPECT_LE(children[size_t(node)], 2);
      EXPECT_TRUE(children[size_t(node)] == 0 || children[size_t(nodes + node)] == 0 ||
                  nodes % 2 == 1)
          << nodes << " nodes: node " << node << " is inner in both trees";
    }
  }
  EXPECT_EQ(nccl_channel_tree_index(0, 16), 0);
  EXPECT_EQ(nccl_channel_tree_index(7, 16), 0);
  EXPECT_EQ(nccl_channel_tree_index(8, 16), 1);
  EXPECT_EQ(nccl_channel_tree_index(0, 1), 0);
}

struct TwoNodes {
  simulator::SystemModel system;
  NcclMachine machine;
  SystemGraphShape shape;
};

TwoNodes two_nodes_of(const char *preset) {
  auto system = simulator::make_system_model(*find_system_preset(preset), 2);
  EXPECT_TRUE(system) << system.error().to_string();
  auto machine = nccl_machine(*system);
  EXPECT_TRUE(machine) << machine.error().to_string();
  SystemGraphShape shape{2, 8, 8, identity(8)};
  return {std::move(*system), std::move(*machine), shape};
}

TwoNodes two_h100_nodes() {
  return two_nodes_of("dgx_h100");
}

// The graph file of the search's rings and trees on the two nodes.
std::string searched_graphs(const TwoNodes &h) {
  return system_graphs_xml(h.machine.ring,
                           nccl_tree_chains(h.system, h.machine, h.machine.ring.channels()),
                           nullptr, h.shape);
}

// That file with every `from` (an attribute and its value) replaced by `to`.
std::string edited_graphs(const TwoNodes &h, const std::string &from, const std::string &to) {
  std::string xml = searched_graphs(h);
  for (size_t at = xml.find(from); at != std::string::npos; at = xml.find(from, at + to.size()))
    xml.replace(at, from.size(), to);
  return xml;
}

// NCCL's protocol for a 1 MiB AllReduce on the machine under graph file `xml`; none (and a
// failure) where the file does not read or the run fails.
std::optional<Protocol> protocol_under(const TwoNodes &h, const std::string &xml,
                                       std::optional<Protocol> forced = std::nullopt,
                                       std::optional<NcclAlgorithm> algorithm = std::nullopt) {
  auto file = read_nccl_graph_xml(xml, "g.xml");
  if (!file) {
    ADD_FAILURE() << file.error().to_string();
    return std::nullopt;
  }
  SystemGraphs read = graphs_on_system(*file, h.system.line_topology, h.shape);
  if (read.broken) {
    ADD_FAILURE() << read.broken->to_string();
    return std::nullopt;
  }
  const NcclMachine m = with_graphs(h.system, h.machine, std::move(read.rings),
                                    std::move(read.trees), std::nullopt, read.tree_types);
  NcclRunOptions o;
  o.protocol = forced;
  o.algorithm = algorithm;
  auto run = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, h.system, m, o);
  if (!run) {
    ADD_FAILURE() << run.error().to_string();
    return std::nullopt;
  }
  return run->choice.protocol;
}

TEST(NcclGraphXmlTest, ANodesRingsAndTreesRoundTripAcrossNodesWithTheirNics) {
  const TwoNodes h = two_h100_nodes();
  const std::vector<NcclTreeChain> trees =
      nccl_tree_chains(h.system, h.machine, h.machine.ring.channels());
  const std::string xml = system_graphs_xml(h.machine.ring, trees, nullptr, h.shape);
  auto file = read_nccl_graph_xml(xml, "g.xml");
  ASSERT_TRUE(file) << file.error().to_string();
  ASSERT_TRUE(file->ring && file->tree);
  EXPECT_EQ(file->tree->pattern, 3);
  for (const GraphFileChannel &c : file->ring->channels)
    EXPECT_EQ(c.nets,
              (std::vector<int>{h.shape.nic_of(c.devs.front()), h.shape.nic_of(c.devs.back())}));
  const SystemGraphs read = graphs_on_system(*file, h.system.line_topology, h.shape);
  ASSERT_FALSE(read.broken) << read.broken->to_string();
  EXPECT_TRUE(read.notes.empty());
  ASSERT_TRUE(read.rings && read.trees);
  EXPECT_EQ(read.rings->rings, h.machine.ring.rings);
  EXPECT_DOUBLE_EQ(read.rings->inter_gbps, h.machine.ring.inter_gbps);
  EXPECT_EQ(*read.trees, trees);
}

// NCCL's tuning reads a graph file's typeintra, not its hops: two DGX H100 nodes' own rings
// under a file that calls them PHB run without LL128 by default (its 1 MiB AllReduce takes
// LL128 with the search's NVL), and NCCL_PROTO=LL128 still runs it.
TEST(NcclGraphXmlTest, AGraphFilesTypeIntraDecidesWhetherNcclTakesLl128) {
  const TwoNodes h = two_h100_nodes();
  ASSERT_EQ(h.machine.ring.type_intra, NcclPathType::Nvl);
  EXPECT_EQ(protocol_under(h, searched_graphs(h)), Protocol::LL128);
  const std::string phb = edited_graphs(h, "typeintra=\"NVL\"", "typeintra=\"PHB\"");
  auto file = read_nccl_graph_xml(phb, "g.xml");
  ASSERT_TRUE(file && file->ring && file->ring->type_intra);
  EXPECT_EQ(*file->ring->type_intra, NcclPathType::Phb);
  EXPECT_NE(protocol_under(h, phb), Protocol::LL128);
  EXPECT_EQ(protocol_under(h, phb, Protocol::LL128), Protocol::LL128);
  // NVB (NVLink through a GPU) is as near as NCCL's rule asks.
  EXPECT_EQ(protocol_under(h, edited_graphs(h, "typeintra=\"NVL\"", "typeintra=\"NVB\"")),
            Protocol::LL128);
}

// Across nodes NCCL runs LL128 by default only where a graph's GPUs reach their NICs near
// enough (typeinter): from Hopper on up to PXN, through an NVLink peer's NIC; on A100 up to
// PXB. Both machines take LL128 for a 1 MiB AllReduce with their own NICs (PIX).
TEST(NcclGraphXmlTest, AGraphFilesTypeInterDecidesWhetherNcclTakesLl128AcrossNodes) {
  const TwoNodes h100 = two_h100_nodes();
  const TwoNodes a100 = two_nodes_of("dgx_a100");
  ASSERT_EQ(h100.machine.ring.type_inter, NcclPathType::Pix);
  for (const TwoNodes *h : {&h100, &a100})
    EXPECT_EQ(protocol_under(*h, searched_graphs(*h)), Protocol::LL128);
  auto under = [](const TwoNodes &h, const std::string &type) {
    return protocol_under(h, edited_graphs(h, "typeinter=\"PIX\"", "typeinter=\"" + type + "\""));
  };
  EXPECT_EQ(under(h100, "PXN"), Protocol::LL128);
  EXPECT_NE(under(h100, "PHB"), Protocol::LL128);
  EXPECT_EQ(under(a100, "PXB"), Protocol::LL128);
  EXPECT_NE(under(a100, "PXN"), Protocol::LL128);
  EXPECT_NE(under(a100, "SYS"), Protocol::LL128);
  // The file's typeinter is what syncoll writes back.
  const std::string pxn = edited_graphs(h100, "typeinter=\"PIX\"", "typeinter=\"PXN\"");
  auto file = read_nccl_graph_xml(pxn, "g.xml");
  ASSERT_TRUE(file);
  SystemGraphs read = graphs_on_system(*file, h100.system.line_topology, h100.shape);
  ASSERT_TRUE(read.rings);
  EXPECT_EQ(read.rings->type_inter, NcclPathType::Pxn);
  const std::string again = system_graphs_xml(*read.rings, *read.trees, nullptr, h100.shape);
  EXPECT_EQ(again.find("typeinter=\"PIX\""), std::string::npos) << again;
  EXPECT_NE(again.find("typeinter=\"PXN\""), std::string::npos) << again;
}

// NCCL's tuning reads each algorithm's own graph: a tree graph that says PHB leaves LL128 off
// for the tree alone, and the ring keeps it. Written back, the tree graph keeps its types.
TEST(NcclGraphXmlTest, ATreeGraphsOwnTypesDecideLl128ForTheTreeAlone) {
  const TwoNodes h = two_h100_nodes();
  std::string xml = searched_graphs(h);
  const size_t tree = xml.find("<graph id=\"1\"");
  ASSERT_NE(tree, std::string::npos);
  const size_t type = xml.find("typeinter=\"PIX\"", tree);
  ASSERT_NE(type, std::string::npos);
  xml.replace(type, std::string_view("typeinter=\"PIX\"").size(), "typeinter=\"PHB\"");
  EXPECT_EQ(protocol_under(h, searched_graphs(h), std::nullopt, NcclAlgorithm::Tree),
            Protocol::LL128);
  EXPECT_NE(protocol_under(h, xml, std::nullopt, NcclAlgorithm::Tree), Protocol::LL128);
  EXPECT_EQ(protocol_under(h, xml, Protocol::LL128, NcclAlgorithm::Tree), Protocol::LL128);
  auto file = read_nccl_graph_xml(xml, "g.xml");
  ASSERT_TRUE(file);
  SystemGraphs read = graphs_on_system(*file, h.system.line_topology, h.shape);
  ASSERT_TRUE(read.rings && read.trees);
  EXPECT_EQ(read.tree_types.inter, NcclPathType::Phb);
  EXPECT_EQ(read.rings->type_inter, NcclPathType::Pix);
  const NcclMachine m =
      with_graphs(h.system, h.machine, read.rings, read.trees, std::nullopt, read.tree_types);
  EXPECT_EQ(m.path_types(NcclAlgorithm::Ring).second, NcclPathType::Pix);
  EXPECT_EQ(m.path_types(NcclAlgorithm::Tree).second, NcclPathType::Phb);
  NcclRunOptions ring;
  ring.algorithm = NcclAlgorithm::Ring;
  auto run = simulate_nccl(CollectiveKind::Allreduce, 16 << 20, h.system, m, ring);
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(run->choice.protocol, Protocol::LL128);
  EXPECT_EQ(system_graphs_xml(*read.rings, *read.trees, nullptr, h.shape, read.tree_types), xml);
}

// NCCL writes its tree graph across nodes as a balanced tree (pattern 1): each channel enters at
// its first GPU's NIC and leaves at its second's. Read and written back, the file is the same.
TEST(NcclGraphXmlTest, ABalancedTreeGraphRoundTripsWithItsPatternAndSecondNic) {
  const TwoNodes h = two_h100_nodes();
  const std::string xml =
      edited_graphs(h, "<graph id=\"1\" pattern=\"3\"", "<graph id=\"1\" pattern=\"1\"");
  ASSERT_NE(xml, searched_graphs(h));
  auto file = read_nccl_graph_xml(xml, "g.xml");
  ASSERT_TRUE(file) << file.error().to_string();
  SystemGraphs read = graphs_on_system(*file, h.system.line_topology, h.shape);
  ASSERT_FALSE(read.broken) << read.broken->to_string();
  ASSERT_TRUE(read.rings && read.trees && !read.trees->empty());
  EXPECT_EQ(read.trees->front().pattern, NcclTreePattern::BalancedTree);
  std::vector<NcclTreeChain> written = *read.trees;
  const std::string again = system_graphs_xml(*read.rings, written, nullptr, h.shape);
  EXPECT_NE(again.find("<graph id=\"1\" pattern=\"1\""), std::string::npos) << again;
  // Channel 0 enters at its first GPU's NIC and leaves at its second's.
  const std::vector<int> &chain = written.front().chain;
  ASSERT_GE(chain.size(), 2u);
  ASSERT_NE(chain[0], chain[1]);
  const size_t tree = again.find("<graph id=\"1\"");
  const std::string first = again.substr(tree, again.find("</channel>", tree) - tree);
  const auto net_at = [&](size_t at) {
    return std::stoi(first.substr(at + std::string_view("<net dev=\"").size()));
  };
  EXPECT_EQ(net_at(first.find("<net dev=")), h.shape.nic_of(chain[0])) << first;
  EXPECT_EQ(net_at(first.rfind("<net dev=")), h.shape.nic_of(chain[1])) << first;
  auto back = read_nccl_graph_xml(again, "again.xml");
  ASSERT_TRUE(back) << back.error().to_string();
  SystemGraphs reread = graphs_on_system(*back, h.system.line_topology, h.shape);
  ASSERT_TRUE(reread.trees);
  ASSERT_EQ(reread.trees->size(), read.trees->size());
  for (size_t c = 0; c < read.trees->size(); ++c)
    EXPECT_EQ((*reread.trees)[c].chain, (*read.trees)[c].chain) << "channel " << c;
}

// One tree channel of two nodes of 8 GPUs, its chain 0..7 and the NICs given.
std::string tree_file(const std::string &nets_before, const std::string &nets_after,
                      const std::vector<int> &devs = {0, 1, 2, 3, 4, 5, 6, 7}) {
  std::string xml = "<graphs version=\"1\">\n<graph id=\"1\" pattern=\"3\" speedintra=\"20\" "
                    "speedinter=\"20\">\n<channel>" +
                    nets_before;
  for (int d : devs)
    xml += "<gpu dev=\"" + std::to_string(d) + "\"/>";
  return xml + nets_after + "</channel>\n</graph>\n</graphs>\n";
}

SystemGraphs on_two_nodes(const std::string &xml) {
  const TwoNodes h = two_h100_nodes();
  auto file = read_nccl_graph_xml(xml, "g.xml");
  EXPECT_TRUE(file) << file.error().to_string();
  return graphs_on_system(*file, h.system.line_topology, h.shape);
}

TEST(NcclGraphXmlTest, AcrossNodesAChannelWithoutItsNicsOrWithOneTheNodeLacksIsAVerdict) {
  const std::string net0 = "<net dev=\"0\"/>";
  EXPECT_FALSE(on_two_nodes(tree_file(net0, net0)).broken);
  auto verdict = [](const SystemGraphs &g) {
    return g.broken ? g.broken->to_string() : std::string();
  };
  EXPECT_EQ(verdict(on_two_nodes(tree_file("", ""))),
            "g.xml:3:1: channel 0 lists 0 of its 2 network devices: across nodes a channel "
            "enters and leaves its node through a NIC");
  EXPECT_EQ(verdict(on_two_nodes(tree_file(net0, "<net dev=\"8\"/>"))),
            "g.xml:3:1: channel 0 names network device 8, which a node of 8 NIC(s) does not have");
  EXPECT_EQ(verdict(on_two_nodes(tree_file(net0, net0, {0, 1, 2, 3, 4, 5, 6}))),
            "g.xml:3:1: channel 0 visits 7 of the 8 GPUs of a node");
  // Another GPU's NIC runs, through the GPU's own, and says so.
  const SystemGraphs other = on_two_nodes(tree_file("<net dev=\"3\"/>", "<net dev=\"3\"/>"));
  EXPECT_FALSE(other.broken);
  ASSERT_EQ(other.notes.size(), 1u);
  EXPECT_NE(other.notes.front().find("1 of 1 channel(s)"), std::string::npos) << other.notes[0];
}

TEST(NcclGraphXmlTest, TheNvlsGraphsHeadsRoundTripAcrossNodesWithTheirNics) {
  const TwoNodes h = two_h100_nodes();
  ASSERT_TRUE(h.machine.nvls_graph);
  const std::string xml = system_graphs_xml(
      h.machine.ring, nccl_tree_chains(h.system, h.machine, 1), &*h.machine.nvls_graph, h.shape);
  // NCCL writes an NVLS channel as its head between its NIC twice.
  EXPECT_NE(xml.find("<graph id=\"3\" pattern=\"5\" crossnic=\"0\" nchannels=\"8\" "
                     "speedintra=\"40\" speedinter=\"48\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<channel>\n      <net dev=\"5\"/>\n      <gpu dev=\"5\"/>\n      <net "
                     "dev=\"5\"/>\n    </channel>"),
            std::string::npos);
  auto file = read_nccl_graph_xml(xml, "g.xml");
  ASSERT_TRUE(file) << file.error().to_string();
  ASSERT_TRUE(file->nvls);
  EXPECT_TRUE(file->unread.empty());
  const SystemGraphs read = graphs_on_system(*file, h.system.line_topology, h.shape);
  ASSERT_FALSE(read.broken) << read.broken->to_string();
  ASSERT_TRUE(read.nvls);
  EXPECT_EQ(read.nvls->heads, h.machine.nvls_graph->heads);
  EXPECT_EQ(read.nvls->nics, h.machine.nvls_graph->nics);
  EXPECT_DOUBLE_EQ(read.nvls->intra_gbps, 40);
  EXPECT_DOUBLE_EQ(read.nvls->inter_gbps, 48);
}

// An NVLS graph of two channels, each a head and the nets given.
std::string nvls_file(const std::string &first, const std::string &second) {
  return "<graphs version=\"1\">\n<graph id=\"3\" pattern=\"5\" speedintra=\"40\" "
         "speedinter=\"48\">\n<channel>" +
         first + "</channel>\n<channel>" + second + "</channel>\n</graph>\n</graphs>\n";
}

TEST(NcclGraphXmlTest, AnNvlsHeadTheNodeLacksOrThatHeadsTwiceIsAVerdict) {
  auto verdict = [](const SystemGraphs &g) {
    return g.broken ? g.broken->to_string() : std::string();
  };
  const std::string net = "<net dev=\"0\"/>";
  EXPECT_FALSE(on_two_nodes(nvls_file(net + "<gpu dev=\"0\"/>" + net,
                                      "<net dev=\"1\"/><gpu dev=\"1\"/><net dev=\"1\"/>"))
                   .broken);
  EXPECT_EQ(verdict(on_two_nodes(
                nvls_file(net + "<gpu dev=\"0\"/>" + net, net + "<gpu dev=\"9\"/>" + net))),
            "g.xml:4:1: NVLS channel 1 is headed by GPU 9, which '2x8_dgx_h100' does not have");
  EXPECT_EQ(verdict(on_two_nodes(
                nvls_file(net + "<gpu dev=\"2\"/>" + net, net + "<gpu dev=\"2\"/>" + net))),
            "g.xml:4:1: NVLS channel 1 is headed by GPU 2, which heads channel 0 too (a GPU "
            "heads one NVLS channel)");
  EXPECT_EQ(verdict(on_two_nodes(nvls_file("<gpu dev=\"0\"/>", "<gpu dev=\"1\"/>"))),
            "g.xml:3:1: NVLS channel 0 names no network device: across nodes a head meets the "
            "network through a NIC");
  // A channel listing GPUs after its head (all NCCL reads is the head) runs, and says so.
  const SystemGraphs listed =
      on_two_nodes(nvls_file(net + "<gpu dev=\"0\"/><gpu dev=\"1\"/>" + net,
                             "<net dev=\"1\"/><gpu dev=\"1\"/><net dev=\"1\"/>"));
  ASSERT_FALSE(listed.broken);
  ASSERT_EQ(listed.notes.size(), 1u);
  EXPECT_NE(listed.notes.front().find("1 of 2 channel(s) list GPUs after their head"),
            std::string::npos)
      << listed.notes.front();
}

} // namespace
} // namespace syncoll::nccl
