#include "nccl/graph_xml.h"

#include "model/detail/xml_reader.h"
#include "model/invariant.h"
#include "model/text.h"
#include "model/topology_library.h"
#include "simulator/routes.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <utility>

namespace syncoll::nccl {
namespace {

using detail::XmlReader;

constexpr int64_t kRingPattern = 4; // NCCL_TOPO_PATTERN_RING
constexpr int64_t kNvlsPattern = 5; // NCCL_TOPO_PATTERN_NVLS
constexpr int kNvlsGraphId = 3;

// One <graph> as NCCL writes it (ncclTopoGetXmlFromGraph): its attributes, then a <channel> per
// channel, each its nets around its GPUs.
struct GraphXml {
  int id = 0;
  int64_t pattern = 0;
  std::vector<GraphFileChannel> channels;
  double speed_intra = 0;
  double speed_inter = 0;
  NcclPathType type_intra = NcclPathType::Nvl;
  NcclPathType type_inter = NcclPathType::Pix;
};

std::string graphs_xml(const std::vector<GraphXml> &graphs) {
  std::string out = "<graphs version=\"1\">\n";
  for (const GraphXml &g : graphs) {
    out += fmt::format("  <graph id=\"{}\" pattern=\"{}\" crossnic=\"0\" nchannels=\"{}\" "
                       "speedintra=\"{}\" speedinter=\"{}\" latencyinter=\"0\" typeintra=\"{}\" "
                       "typeinter=\"{}\" samechannels=\"0\">\n",
                       g.id, g.pattern, g.channels.size(), format_decimal(g.speed_intra),
                       format_decimal(g.speed_inter), nccl_path_name(g.type_intra),
                       nccl_path_name(g.type_inter));
    for (const GraphFileChannel &c : g.channels) {
      out += "    <channel>\n";
      if (!c.nets.empty())
        out += fmt::format("      <net dev=\"{}\"/>\n", c.nets.front());
      for (int dev : c.devs)
        out += fmt::format("      <gpu dev=\"{}\"/>\n", dev);
      if (!c.nets.empty())
        out += fmt::format("      <net dev=\"{}\"/>\n", c.nets.back());
      out += "    </channel>\n";
    }
    out += "  </graph>\n";
  }
  return out + "</graphs>\n";
}

// The farthest path a hop of one node's rings takes.
NcclPathType farthest_hop(const std::vector<std::vector<RankId>> &rings, const Topology &node,
                          int gpus) {
  simulator::Routes routes(node);
  NcclPathType farthest = NcclPathType::Nvl;
  for (const std::vector<RankId> &ring : rings)
    for (int i = 0; i < gpus && gpus > 1; ++i)
      farthest =
          std::max(farthest, nccl_path_type(node, routes, RankId(ring[size_t(i)].value() % gpus),
                                            RankId(ring[size_t((i + 1) % gpus)].value() % gpus)));
  return farthest;
}

double number_attr(const XmlReader &x, const pugi::xml_node &g, const char *name,
                   Expected<double> &error) {
  const pugi::xml_attribute a = g.attribute(name);
  if (!a)
    return 0;
  const std::string text = a.value();
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= 0))
    error =
        fail(x.at(g, name), fmt::format("attribute '{}' must be a number, found '{}'", name, text));
  return v;
}

Expected<GraphFileGraph> read_graph(const XmlReader &x, const pugi::xml_node &g, int id,
                                    int pattern) {
  GraphFileGraph out;
  out.id = id;
  out.pattern = pattern;
  out.where = x.at(g);
  Expected<double> error = 0.0;
  out.speed_intra = number_attr(x, g, "speedintra", error);
  out.speed_inter = number_attr(x, g, "speedinter", error);
  if (!error)
    return tl::unexpected(error.error());
  for (auto [name, type] :
       {std::pair{"typeintra", &out.type_intra}, std::pair{"typeinter", &out.type_inter}}) {
    const pugi::xml_attribute attr = g.attribute(name);
    if (!attr)
      continue;
    *type = find_nccl_path_type(attr.value());
    if (!*type)
      return fail(x.at(g, name),
                  fmt::format("attribute '{}' names no path type of a node, found '{}' ({})", name,
                              attr.value(), nccl_path_names()));
  }
  for (const pugi::xml_node &c : g.children("channel")) {
    GraphFileChannel channel;
    channel.where = x.at(c);
    for (const pugi::xml_node &e : c.children()) {
      const std::string_view name = e.name();
      if (name != "gpu" && name != "net")
        continue;
      SYNCOLL_TRY(dev, x.int_attr(e, "dev", 0, 1 << 20));
      if (name == "gpu") {
        channel.devs.push_back(int(dev));
      } else if (channel.nets.size() == 2) {
        return fail(x.at(e), "a third <net> in one <channel> (a channel enters and leaves its "
                             "node once)");
      } else {
        channel.nets.push_back(int(dev));
      }
    }
    if (channel.devs.empty())
      return fail(channel.where, "a <channel> without a <gpu>");
    out.channels.push_back(std::move(channel));
  }
  if (out.channels.empty())
    return fail(out.where,
                fmt::format("the {} graph has no <channel>", pattern == kRingPattern   ? "ring"
                                                             : pattern == kNvlsPattern ? "NVLS"
                                                                                       : "tree"));
  return out;
}

} // namespace

std::string ring_graph_xml(const NcclRingGraph &graph, const std::vector<int> &dev_of_rank) {
  GraphXml ring{
      0, kRingPattern, {}, graph.intra_gbps, graph.inter_gbps, graph.type_intra, graph.type_inter};
  for (const std::vector<RankId> &r : graph.rings) {
    GraphFileChannel channel;
    for (RankId rank : r)
      channel.devs.push_back(dev_of_rank.at(rank.index()));
    ring.channels.push_back(std::move(channel));
  }
  return graphs_xml({ring});
}

std::string system_graphs_xml(const NcclRingGraph &rings, const std::vector<NcclTreeChain> &trees,
                              const NcclNvlsGraph *nvls, const SystemGraphShape &shape,
                              const NcclTreeGraphTypes &tree_types) {
  const int gpus = shape.gpus_per_node;
  const bool nets = shape.nodes > 1;
  auto dev = [&](int gpu) { return shape.dev_of_gpu.at(size_t(gpu)); };
  GraphXml ring{
      0, kRingPattern, {}, rings.intra_gbps, rings.inter_gbps, rings.type_intra, rings.type_inter};
  for (const std::vector<RankId> &r : rings.rings) {
    GraphFileChannel channel;
    for (int k = 0; k < gpus; ++k) {
      SYNCOLL_INVARIANT(r[size_t(k)].value() < gpus, "a ring across nodes starts in node 0");
      channel.devs.push_back(dev(r[size_t(k)].value()));
    }
    if (nets)
      channel.nets = {shape.nic_of(r.front().value()), shape.nic_of(r[size_t(gpus - 1)].value())};
    ring.channels.push_back(std::move(channel));
  }
  const NcclTreePattern pattern = trees.empty() ? NcclTreePattern::Tree : trees.front().pattern;
  GraphXml tree{1,
                int64_t(pattern),
                {},
                rings.intra_gbps,
                rings.inter_gbps,
                tree_types.intra.value_or(rings.type_intra),
                tree_types.inter.value_or(rings.type_inter)};
  for (const NcclTreeChain &t : trees) {
    SYNCOLL_INVARIANT(t.pattern == pattern, "a tree graph's channels share its pattern");
    GraphFileChannel channel;
    for (int gpu : t.chain)
      channel.devs.push_back(dev(gpu));
    const bool second_leaves = pattern != NcclTreePattern::Tree && t.chain.size() > 1;
    if (nets)
      channel.nets = {shape.nic_of(t.chain.front()),
                      shape.nic_of(second_leaves ? t.chain[1] : t.chain.front())};
    tree.channels.push_back(std::move(channel));
  }
  if (!nvls)
    return graphs_xml({ring, tree});
  GraphXml heads{kNvlsGraphId,      kNvlsPattern,    {}, nvls->intra_gbps, nvls->inter_gbps,
                 NcclPathType::Nvl, rings.type_inter};
  for (int c = 0; c < nvls->channels(); ++c) {
    GraphFileChannel channel;
    channel.devs = {dev(nvls->heads[size_t(c)].value())};
    if (nets) {
      SYNCOLL_INVARIANT(nvls->nics.size() == nvls->heads.size(),
                        "an NVLS graph across nodes names a NIC per head");
      channel.nets = {nvls->nics[size_t(c)], nvls->nics[size_t(c)]};
    }
    heads.channels.push_back(std::move(channel));
  }
  return graphs_xml({ring, tree, heads});
}

Expected<GraphFile> read_nccl_graph_xml(std::string_view text, const std::string &file) {
  pugi::xml_document doc;
  SYNCOLL_CHECK(detail::parse_xml(doc, text, file));
  const XmlReader x(text, file, "NCCL's graph file");
  const pugi::xml_node graphs = doc.document_element();
  if (!graphs || std::string_view(graphs.name()) != "graphs")
    return fail(graphs ? x.at(graphs) : SourceLocation{file, 1, 1},
                "expected NCCL's <graphs> as the root element");
  GraphFile out;
  out.where = x.at(graphs);
  for (const pugi::xml_node &g : graphs.children("graph")) {
    SYNCOLL_TRY(pattern, x.int_attr(g, "pattern", 0, 64));
    int64_t id = -1;
    if (g.attribute("id")) {
      SYNCOLL_TRY(given, x.int_attr(g, "id", 0, 64));
      id = given;
    }
    const bool ring = pattern == kRingPattern && !out.ring;
    const bool tree = id == 1 && pattern >= 1 && pattern <= 3 && !out.tree;
    const bool nvls = id == kNvlsGraphId && pattern == kNvlsPattern && !out.nvls;
    if (!ring && !tree && !nvls) {
      out.unread.push_back(fmt::format("id {} (pattern {})", id, pattern));
      continue;
    }
    SYNCOLL_TRY(read, read_graph(x, g, int(id), int(pattern)));
    (ring ? out.ring : tree ? out.tree : out.nvls) = std::move(read);
  }
  if (!out.ring && !out.tree && !out.nvls)
    return fail(out.where,
                "no ring graph (a <graph> with pattern=\"4\"), tree graph (id=\"1\" with "
                "pattern 1, 2 or 3) or NVLS graph (id=\"3\" with pattern 5)");
  return out;
}

namespace {

// A channel's GPUs as ranks of one node, each once and all of them, or what is wrong.
std::optional<std::string> node_order(const GraphFileChannel &c, size_t index,
                                      const Topology &topology, int gpus,
                                      const std::map<int, int> &rank_of_dev,
                                      std::vector<RankId> &order) {
  std::vector<bool> seen(size_t(gpus), false);
  for (int dev : c.devs) {
    auto rank = rank_of_dev.find(dev);
    if (rank == rank_of_dev.end())
      return fmt::format("channel {} names GPU {}, which '{}' does not have", index, dev,
                         topology.name());
    if (seen[size_t(rank->second)])
      return fmt::format("channel {} visits GPU {} twice", index, dev);
    seen[size_t(rank->second)] = true;
    order.emplace_back(rank->second);
  }
  if (int(order.size()) != gpus)
    return fmt::format("channel {} visits {} of the {} GPUs{}", index, order.size(), gpus,
                       gpus == topology.num_ranks() ? "" : " of a node");
  return std::nullopt;
}

// The first hop of `order` (closing the ring where `ring`) the topology does not join.
std::optional<std::string> unjoined_hop(const std::vector<RankId> &order, bool ring, size_t index,
                                        const Topology &topology,
                                        const std::vector<int> &dev_of_rank) {
  const size_t hops = ring ? order.size() : order.size() - 1;
  for (size_t i = 0; i < hops && order.size() > 1; ++i) {
    const RankId a = order[i], b = order[(i + 1) % order.size()];
    if (!topology.reaches(a, b))
      return fmt::format("channel {} hops from GPU {} to GPU {}, which '{}' does not join", index,
                         dev_of_rank[a.index()], dev_of_rank[b.index()], topology.name());
  }
  return std::nullopt;
}

std::map<int, int> ranks_of_devs(const std::vector<int> &dev_of_rank) {
  std::map<int, int> rank_of_dev;
  for (size_t r = 0; r < dev_of_rank.size(); ++r)
    rank_of_dev[dev_of_rank[r]] = int(r);
  return rank_of_dev;
}

// The NVLS graph's heads on node 0 (a channel's first GPU; NCCL reads no other), or the verdict
// on the first channel NCCL could not run: a head the node lacks or that heads two channels,
// across nodes a channel without its NIC or naming one the node lacks.
tl::expected<NcclNvlsGraph, Diagnostic>
nvls_heads(const GraphFileGraph &file, const Topology &system, const SystemGraphShape &shape,
           const std::map<int, int> &rank_of_dev, std::vector<std::string> &notes) {
  NcclNvlsGraph out;
  out.intra_gbps = file.speed_intra;
  out.inter_gbps = file.speed_inter;
  int listed_more = 0;
  for (size_t index = 0; index < file.channels.size(); ++index) {
    const GraphFileChannel &c = file.channels[index];
    auto verdict = [&](std::string what) {
      return tl::unexpected(Diagnostic{Severity::Error, c.where, std::move(what), {}});
    };
    const int dev = c.devs.front();
    auto rank = rank_of_dev.find(dev);
    if (rank == rank_of_dev.end())
      return verdict(fmt::format("NVLS channel {} is headed by GPU {}, which '{}' does not have",
                                 index, dev, system.name()));
    const RankId head(rank->second);
    if (auto earlier = std::find(out.heads.begin(), out.heads.end(), head);
        earlier != out.heads.end())
      return verdict(fmt::format("NVLS channel {} is headed by GPU {}, which heads channel {} "
                                 "too (a GPU heads one NVLS channel)",
                                 index, dev, earlier - out.heads.begin()));
    if (shape.nodes > 1) {
      if (c.nets.empty())
        return verdict(fmt::format("NVLS channel {} names no network device: across nodes a "
                                   "head meets the network through a NIC",
                                   index));
      if (c.nets.front() >= shape.nics_per_node)
        return verdict(fmt::format("NVLS channel {} names network device {}, which a node of "
                                   "{} NIC(s) does not have",
                                   index, c.nets.front(), shape.nics_per_node));
      out.nics.push_back(c.nets.front());
    }
    listed_more += c.devs.size() > 1;
    out.heads.push_back(head);
  }
  if (listed_more > 0)
    notes.push_back(
        fmt::format("the NVLS graph's {} of {} channel(s) list GPUs after their head "
                    "(NCCL reads a channel's first GPU as its head and nothing after it)",
                    listed_more, file.channels.size()));
  return out;
}

} // namespace

GraphRings rings_of_graph(const GraphFileGraph &file, const Topology &topology,
                          const std::vector<int> &dev_of_rank) {
  GraphRings out;
  out.graph.intra_gbps = out.graph.inter_gbps = file.speed_intra;
  const std::map<int, int> rank_of_dev = ranks_of_devs(dev_of_rank);
  for (size_t index = 0; index < file.channels.size(); ++index) {
    const GraphFileChannel &c = file.channels[index];
    std::vector<RankId> ring;
    auto wrong = node_order(c, index, topology, topology.num_ranks(), rank_of_dev, ring);
    if (!wrong)
      wrong = unjoined_hop(ring, true, index, topology, dev_of_rank);
    if (wrong) {
      out.broken = Diagnostic{Severity::Error, c.where, std::move(*wrong), {}};
      return out;
    }
    out.graph.rings.push_back(std::move(ring));
  }
  out.graph.type_intra =
      file.type_intra.value_or(farthest_hop(out.graph.rings, topology, topology.num_ranks()));
  return out;
}

SystemGraphs graphs_on_system(const GraphFile &file, const Topology &system,
                              const SystemGraphShape &shape) {
  SystemGraphs out;
  const std::map<int, int> rank_of_dev = ranks_of_devs(shape.dev_of_gpu);
  const int gpus = shape.gpus_per_node;
  std::string other_nic; // the first channel meeting the network at another GPU's NIC
  int other_nic_channels = 0;
  auto note_other_nics = [&](const char *graph, size_t channels) {
    if (other_nic_channels > 0)
      out.notes.push_back(fmt::format(
          "the {} graph's {} of {} channel(s) meet the network at a NIC other than the GPU's own "
          "(first: {}); NCCL crosses PCIe or an NVLink peer (PXN) to reach it, syncoll sends "
          "every GPU's traffic through its own NIC",
          graph, other_nic_channels, channels, other_nic));
    other_nic.clear();
    other_nic_channels = 0;
  };
  // The channel's GPUs in order on node 0; false once the channel earned the verdict.
  auto channel_order = [&](const GraphFileChannel &c, size_t index, bool ring,
                           std::vector<RankId> &order) {
    auto wrong = node_order(c, index, system, gpus, rank_of_dev, order);
    if (!wrong)
      wrong = unjoined_hop(order, ring, index, system, shape.dev_of_gpu);
    if (!wrong && shape.nodes > 1 && c.nets.size() != 2)
      wrong = fmt::format("channel {} lists {} of its 2 network devices: across nodes a channel "
                          "enters and leaves its node through a NIC",
                          index, c.nets.size());
    if (!wrong && shape.nodes > 1)
      for (int net : c.nets)
        if (net >= shape.nics_per_node)
          wrong = fmt::format("channel {} names network device {}, which a node of {} NIC(s) "
                              "does not have",
                              index, net, shape.nics_per_node);
    if (wrong) {
      out.broken = Diagnostic{Severity::Error, c.where, std::move(*wrong), {}};
      return false;
    }
    if (shape.nodes == 1)
      return true;
    // The GPUs that use the channel's two network devices (ncclTopoGetNetDev: the first GPU the
    // first, any other the second): a ring's first and last; a tree's head, and where its
    // pattern hangs a child on the chain's second GPU, that GPU.
    const int in = order.front().value();
    const bool second_meets = !ring && file.tree->pattern != int(NcclTreePattern::Tree) && gpus > 1;
    const int out_gpu = ring ? order.back().value() : second_meets ? order[1].value() : in;
    for (const auto &[net, gpu] :
         {std::pair{c.nets.front(), in}, std::pair{c.nets.back(), out_gpu}})
      if (net != shape.nic_of(gpu)) {
        if (other_nic.empty())
          other_nic = fmt::format("channel {}, GPU {} through NIC {} where its own is {}", index,
                                  shape.dev_of_gpu[size_t(gpu)], net, shape.nic_of(gpu));
        ++other_nic_channels;
        break;
      }
    return true;
  };
  if (file.ring) {
    NcclRingGraph graph;
    graph.intra_gbps = file.ring->speed_intra;
    graph.inter_gbps = shape.nodes > 1 ? file.ring->speed_inter : file.ring->speed_intra;
    graph.nodes = shape.nodes;
    for (size_t index = 0; index < file.ring->channels.size(); ++index) {
      std::vector<RankId> order;
      if (!channel_order(file.ring->channels[index], index, true, order))
        return out;
      std::vector<RankId> ring;
      for (int n = 0; n < shape.nodes; ++n)
        for (RankId r : order)
          ring.emplace_back(n * gpus + r.value());
      graph.rings.push_back(std::move(ring));
    }
    graph.type_intra = file.ring->type_intra.value_or(farthest_hop(graph.rings, system, gpus));
    graph.type_inter = file.ring->type_inter.value_or(graph.type_inter);
    note_other_nics("ring", file.ring->channels.size());
    out.rings = std::move(graph);
  }
  if (file.tree) {
    std::vector<NcclTreeChain> trees;
    for (size_t index = 0; index < file.tree->channels.size(); ++index) {
      std::vector<RankId> order;
      if (!channel_order(file.tree->channels[index], index, false, order))
        return out;
      NcclTreeChain tree;
      tree.pattern = NcclTreePattern(file.tree->pattern);
      for (RankId r : order)
        tree.chain.push_back(r.value());
      trees.push_back(std::move(tree));
    }
    note_other_nics("tree", file.tree->channels.size());
    out.trees = std::move(trees);
    out.tree_types = {file.tree->type_intra, file.tree->type_inter};
  }
  if (file.nvls) {
    auto nvls = nvls_heads(*file.nvls, system, shape, rank_of_dev, out.notes);
    if (!nvls) {
      out.broken = std::move(nvls.error());
      return out;
    }
    out.nvls = std::move(*nvls);
  }
  return out;
}

} // namespace syncoll::nccl
