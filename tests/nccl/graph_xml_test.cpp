// NCCL's graph file: the rings syncoll's search finds written as NCCL writes them, read back to
// the same rings, and a graph NCCL could not run on the topology a verdict at its channel.
#include "model/topology_library.h"
#include "nccl/graph_xml.h"
#include "nccl/search.h"

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
  const std::string xml = ring_graph_xml(*graph, t, identity(8));
  EXPECT_NE(xml.find("pattern=\"4\""), std::string::npos);
  EXPECT_NE(xml.find("typeintra=\"NVL\""), std::string::npos);
  auto file = read_nccl_graph_xml(xml, "graph.xml");
  ASSERT_TRUE(file) << file.error().to_string();
  const GraphRings read = rings_of_graph(*file, t, identity(8));
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
  const GraphRings read = rings_of_graph(*file, dgx1(), identity(8));
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
            "g.xml:1:1: no ring graph (a <graph> with pattern=\"4\")\n");
  EXPECT_EQ(error("<graphs><graph pattern=\"4\">\n<channel><net dev=\"0\"/><gpu dev=\"0\"/>"
                  "</channel></graph></graphs>"),
            "g.xml:2:10: a <net> end: channels across nodes are not read (one node only)\n");
  EXPECT_EQ(error("<graphs><graph pattern=\"4\">\n<channel/></graph></graphs>"),
            "g.xml:2:1: a <channel> without a <gpu>\n");
}

} // namespace
} // namespace syncoll::nccl
