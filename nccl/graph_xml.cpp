#include "nccl/graph_xml.h"

#include "model/detail/xml_reader.h"
#include "model/invariant.h"
#include "model/text.h"
#include "simulator/routes.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll::nccl {
namespace {

using detail::XmlReader;

constexpr int64_t kRingPattern = 4; // NCCL_TOPO_PATTERN_RING

// NCCL's path type of one hop, by what the route crosses; higher is farther.
enum class PathType { Nvl, Pix, Pxb, Phb, Sys };

std::string_view path_name(PathType type) {
  switch (type) {
  case PathType::Nvl:
    return "NVL";
  case PathType::Pix:
    return "PIX";
  case PathType::Pxb:
    return "PXB";
  case PathType::Phb:
    return "PHB";
  case PathType::Sys:
    return "SYS";
  }
  SYNCOLL_UNREACHABLE("a path type without a name");
}

PathType path_type(const Topology &t, simulator::Routes &routes, RankId a, RankId b) {
  if (t.find_link(a, b))
    return PathType::Nvl;
  int bridges = 0, sockets = 0;
  for (LinkId l : routes.route(a, b)) {
    const RankId v = t.link(l).dst;
    if (!t.is_switch(v))
      continue;
    const std::string name = t.vertex_name(v);
    if (name == "nvswitch")
      return PathType::Nvl;
    (name.rfind("cpu", 0) == 0 ? sockets : bridges) += 1;
  }
  if (sockets > 1)
    return PathType::Sys;
  if (sockets == 1)
    return PathType::Phb;
  return bridges > 1 ? PathType::Pxb : PathType::Pix;
}

} // namespace

std::string ring_graph_xml(const NcclRingGraph &graph, const Topology &topology,
                           const std::vector<int> &dev_of_rank) {
  simulator::Routes routes(topology);
  PathType farthest = PathType::Nvl;
  for (const std::vector<RankId> &ring : graph.rings)
    for (size_t i = 0; i < ring.size() && ring.size() > 1; ++i)
      farthest =
          std::max(farthest, path_type(topology, routes, ring[i], ring[(i + 1) % ring.size()]));
  std::string out = "<graphs version=\"1\">\n";
  out += fmt::format("  <graph id=\"0\" pattern=\"{}\" crossnic=\"0\" nchannels=\"{}\" "
                     "speedintra=\"{}\" speedinter=\"{}\" latencyinter=\"0\" typeintra=\"{}\" "
                     "typeinter=\"PIX\" samechannels=\"0\">\n",
                     kRingPattern, graph.channels(), format_decimal(graph.intra_gbps),
                     format_decimal(graph.inter_gbps), path_name(farthest));
  for (const std::vector<RankId> &ring : graph.rings) {
    out += "    <channel>\n";
    for (RankId r : ring)
      out += fmt::format("      <gpu dev=\"{}\"/>\n", dev_of_rank.at(r.index()));
    out += "    </channel>\n";
  }
  out += "  </graph>\n</graphs>\n";
  return out;
}

Expected<GraphFile> read_nccl_graph_xml(std::string_view text, const std::string &file) {
  pugi::xml_document doc;
  SYNCOLL_CHECK(detail::parse_xml(doc, text, file));
  const XmlReader x(text, file, "NCCL's graph file");
  const pugi::xml_node graphs = doc.document_element();
  if (!graphs || std::string_view(graphs.name()) != "graphs")
    return fail(graphs ? x.at(graphs) : SourceLocation{file, 1, 1},
                "expected NCCL's <graphs> as the root element");
  for (const pugi::xml_node &g : graphs.children("graph")) {
    SYNCOLL_TRY(pattern, x.int_attr(g, "pattern", 0, 64));
    if (pattern != kRingPattern)
      continue; // trees, CollNet and NVLS graphs: not read here
    GraphFile out;
    out.where = x.at(g);
    if (g.attribute("speedintra")) {
      const std::string speed = g.attribute("speedintra").value();
      char *end = nullptr;
      out.speed_intra = std::strtod(speed.c_str(), &end);
      if (speed.empty() || end != speed.c_str() + speed.size() || !(out.speed_intra >= 0))
        return fail(x.at(g, "speedintra"),
                    fmt::format("attribute 'speedintra' must be a number, found '{}'", speed));
    }
    for (const pugi::xml_node &c : g.children("channel")) {
      GraphFileChannel channel;
      channel.where = x.at(c);
      for (const pugi::xml_node &e : c.children()) {
        const std::string_view name = e.name();
        if (name == "net")
          return fail(x.at(e), "a <net> end: channels across nodes are not read (one node only)");
        if (name != "gpu")
          continue;
        SYNCOLL_TRY(dev, x.int_attr(e, "dev", 0, 1 << 20));
        channel.devs.push_back(int(dev));
      }
      if (channel.devs.empty())
        return fail(channel.where, "a <channel> without a <gpu>");
      out.channels.push_back(std::move(channel));
    }
    if (out.channels.empty())
      return fail(out.where, "the ring graph has no <channel>");
    return out;
  }
  return fail(x.at(graphs), "no ring graph (a <graph> with pattern=\"4\")");
}

GraphRings rings_of_graph(const GraphFile &file, const Topology &topology,
                          const std::vector<int> &dev_of_rank) {
  GraphRings out;
  out.graph.intra_gbps = out.graph.inter_gbps = file.speed_intra;
  std::map<int, int> rank_of_dev;
  for (size_t r = 0; r < dev_of_rank.size(); ++r)
    rank_of_dev[dev_of_rank[r]] = int(r);
  auto broken = [&](const GraphFileChannel &c, std::string message) {
    out.broken = Diagnostic{Severity::Error, c.where, std::move(message), {}};
    return out;
  };
  for (size_t index = 0; index < file.channels.size(); ++index) {
    const GraphFileChannel &c = file.channels[index];
    std::vector<RankId> ring;
    std::vector<bool> seen(size_t(topology.num_ranks()), false);
    for (int dev : c.devs) {
      auto rank = rank_of_dev.find(dev);
      if (rank == rank_of_dev.end())
        return broken(c, fmt::format("channel {} names GPU {}, which '{}' does not have", index,
                                     dev, topology.name()));
      if (seen[size_t(rank->second)])
        return broken(c, fmt::format("channel {} visits GPU {} twice", index, dev));
      seen[size_t(rank->second)] = true;
      ring.emplace_back(rank->second);
    }
    if (int(ring.size()) != topology.num_ranks())
      return broken(c, fmt::format("channel {} visits {} of the {} GPUs", index, ring.size(),
                                   topology.num_ranks()));
    for (size_t i = 0; i < ring.size() && ring.size() > 1; ++i) {
      const RankId a = ring[i], b = ring[(i + 1) % ring.size()];
      if (!topology.reaches(a, b))
        return broken(c, fmt::format("channel {} hops from GPU {} to GPU {}, which '{}' does not "
                                     "join",
                                     index, dev_of_rank[a.index()], dev_of_rank[b.index()],
                                     topology.name()));
    }
    out.graph.rings.push_back(std::move(ring));
  }
  return out;
}

} // namespace syncoll::nccl
