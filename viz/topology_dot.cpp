// The topology drawing. A flat topology draws every rank and link. A hierarchy (nodes of GPUs)
// draws each node as a cluster and collapses what a person cannot read one by one at cluster
// scale: a 2-node DGX H100 pair with 8 NICs is 240 links and 64 relations, which laid out one by
// one made a 31,655-px strip. Collapsed, a node's NICs are one box; its links to the other nodes
// one edge to "links between nodes", its cables to a fabric switch one edge; a full mesh of equal
// NVLinks one line of the node's label; each rank's port caps a line of its own label.
#include "viz/dot.h"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <map>
#include <set>

namespace syncoll::viz {
namespace {

std::string vertex_node(int v) {
  return fmt::format("r{}", v);
}

std::string gbps(BytesPerNs b) {
  return fmt::format("{:.4g} GB/s", b.value);
}

// A relation whose links all leave one rank, or all enter one: that rank's port.
struct Port {
  int rank = -1;
  bool out = true;
};

std::optional<Port> port_of(const Topology &t, const BandwidthRelation &rel) {
  std::set<int> srcs, dsts;
  for (LinkId id : rel.links) {
    srcs.insert(t.link(id).src.value());
    dsts.insert(t.link(id).dst.value());
  }
  if (srcs.size() == 1 && !t.is_switch(RankId(*srcs.begin())))
    return Port{*srcs.begin(), true};
  if (dsts.size() == 1 && !t.is_switch(RankId(*dsts.begin())))
    return Port{*dsts.begin(), false};
  return std::nullopt;
}

// "out 18, in 18 per round" for the rank's port relations, in the order out, in.
std::map<int, std::string> port_lines(const Topology &t, const std::vector<bool> &folded) {
  std::map<int, std::pair<std::vector<int>, std::vector<int>>> caps;
  for (size_t i = 0; i < t.relations().size(); ++i)
    if (folded[i]) {
      const Port p = *port_of(t, t.relations()[i]);
      (p.out ? caps[p.rank].first : caps[p.rank].second).push_back(t.relations()[i].capacity);
    }
  std::map<int, std::string> lines;
  for (const auto &[rank, io] : caps) {
    std::string line = "port cap";
    for (int c : io.first)
      line += fmt::format(" out {}", c);
    for (int c : io.second)
      line += fmt::format(" in {}", c);
    lines[rank] = line + " /round";
  }
  return lines;
}

std::string header(const Topology &t) {
  std::string out = fmt::format("digraph {} {{\n", quote(t.name()));
  out += fmt::format(
      "  graph [label={}, labelloc=t, fontname=\"Helvetica\"];\n",
      quote(
          t.num_switches() > 0
              ? fmt::format("{}: {} ranks, {} switch{}, {} links", t.name(), t.num_ranks(),
                            t.num_switches(), t.num_switches() == 1 ? "" : "es", t.links().size())
              : fmt::format("{}: {} ranks, {} links", t.name(), t.num_ranks(), t.links().size())));
  out += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  return out;
}

// One edge per link pair: two-headed when both directions have equal capacity.
std::string link_edge(const Topology &t, const Link &l, const std::string &indent) {
  const int a = l.src.value(), b = l.dst.value();
  const int back = t.capacity(l.dst, l.src);
  if (back == l.capacity && b < a)
    return ""; // drawn with its reverse
  std::string attrs;
  if (back == l.capacity)
    attrs += "dir=both";
  if (l.capacity > 1)
    attrs += fmt::format("{}label=\"x{}\", penwidth={}", attrs.empty() ? "" : ", ", l.capacity,
                         1 + l.capacity);
  return fmt::format("{}{} -> {}{};\n", indent, vertex_node(a), vertex_node(b),
                     attrs.empty() ? "" : " [" + attrs + "]");
}

// A relation drawn as an octagon in a dashed cluster, joined to the given DOT nodes.
std::string relation_cluster(const Topology &t, size_t i, const std::set<std::string> &joined) {
  const BandwidthRelation &rel = t.relations()[i];
  // What the relation carries at once: its capacity in units of its slowest link's rate per
  // unit (a NIC's rate, a switch port's), so a what-if NIC rate shows in the drawing.
  double per_unit = 0;
  for (LinkId id : rel.links) {
    const Link &l = t.link(id);
    const double unit = l.bandwidth.value / std::max(1, l.capacity);
    per_unit = per_unit == 0 ? unit : std::min(per_unit, unit);
  }
  std::string out = fmt::format("  subgraph cluster_relation{} {{\n    label={}; style=dashed; "
                                "color=gray50;\n    rel{} [shape=octagon, label={}];\n  }}\n",
                                i, quote(fmt::format("relation {}", rel.name)), i,
                                quote(fmt::format("{}\ncap {}/round, {:.4g} GB/s", rel.name,
                                                  rel.capacity, per_unit * rel.capacity)));
  for (const std::string &node : joined)
    out += fmt::format("  rel{} -> {} [style=dashed, color=gray50, arrowhead=none];\n", i, node);
  return out;
}

// A switch vertex, an ellipse under its name.
std::string switch_vertex(const Topology &t, int vertex, const std::string &indent) {
  return fmt::format("{}{} [shape=ellipse, style=filled, fillcolor=gray90, label={}];\n", indent,
                     vertex_node(vertex), quote(t.switches()[size_t(vertex - t.num_ranks())]));
}

std::string rank_label(int r, const std::string &second, const std::map<int, std::string> &ports) {
  std::string label = fmt::format("rank {}", r);
  if (!second.empty())
    label += "\n" + second;
  if (auto it = ports.find(r); it != ports.end())
    label += "\n" + it->second;
  return label;
}

std::string flat_topology_dot(const Topology &t) {
  std::vector<bool> folded(t.relations().size());
  for (size_t i = 0; i < folded.size(); ++i)
    folded[i] = port_of(t, t.relations()[i]).has_value();
  const std::map<int, std::string> ports = port_lines(t, folded);
  std::string out = header(t);
  for (int r = 0; r < t.num_ranks(); ++r)
    out += fmt::format("  {} [label={}];\n", vertex_node(r), quote(rank_label(r, "", ports)));
  // Switches are vertices numbered after the ranks; drawn as ellipses under their names.
  for (int s = t.num_ranks(); s < t.num_vertices(); ++s)
    out += switch_vertex(t, s, "  ");
  for (const Link &l : t.links())
    out += link_edge(t, l, "  ");
  for (size_t i = 0; i < t.relations().size(); ++i) {
    if (folded[i])
      continue;
    std::set<std::string> joined;
    for (LinkId id : t.relations()[i].links) {
      joined.insert(vertex_node(t.link(id).src.value()));
      joined.insert(vertex_node(t.link(id).dst.value()));
    }
    out += relation_cluster(t, i, joined);
  }
  return out + "}\n";
}

// Past this many ranks a node is one box: a 64-node cluster of 8-GPU nodes as 512 rank boxes
// is no more readable than its 31,000-px strip was.
constexpr int kMostRanksDrawn = 64;
// Past this many fabric switches of one kind (named alike but for a number), they are one box:
// a 16-node fat tree with 8 NICs a node has 32 spines.
constexpr int kMostSwitchesDrawn = 8;

class NodeDrawing {
public:
  explicit NodeDrawing(const Topology &t)
      : t_(t), level_(t.hierarchy().levels.front().name), nodes_(t.hierarchy().levels.front().size),
        per_node_(t.num_ranks() / nodes_), node_of_(size_t(t.num_vertices()), -1) {
    for (int r = 0; r < t.num_ranks(); ++r)
      node_of_[size_t(r)] = r / per_node_;
    // A switch every link of which stays in one node is that node's (an NVSwitch); the others
    // are the fabric's.
    for (int s = t.num_ranks(); s < t.num_vertices(); ++s) {
      std::set<int> seen; // before this loop places it, any switch is the fabric's
      for (LinkId id : t.out_links(RankId(s)))
        seen.insert(node_of_[size_t(t.link(id).dst.value())]);
      for (LinkId id : t.in_links(RankId(s)))
        seen.insert(node_of_[size_t(t.link(id).src.value())]);
      if (seen.size() == 1 && *seen.begin() >= 0)
        node_of_[size_t(s)] = *seen.begin();
    }
    // Fabric switches named alike past kMostSwitchesDrawn ("spine0".."spine31") are one box.
    std::map<std::string, std::vector<int>> by_stem;
    for (int s = t.num_ranks(); s < t.num_vertices(); ++s)
      if (node_of_[size_t(s)] < 0) {
        const std::string &name = t.switches()[size_t(s - t.num_ranks())];
        by_stem[name.substr(0, name.find_last_not_of("0123456789") + 1)].push_back(s);
      }
    fabric_box_.resize(size_t(t.num_vertices()));
    for (const auto &[stem, members] : by_stem)
      for (int s : members)
        fabric_box_[size_t(s)] =
            members.size() > size_t(kMostSwitchesDrawn)
                ? fmt::format("switches{}", std::distance(by_stem.begin(), by_stem.find(stem)))
                : vertex_node(s);
    for (const auto &[stem, members] : by_stem)
      if (members.size() > size_t(kMostSwitchesDrawn))
        fabric_boxes_.emplace_back(fabric_box_[size_t(members.front())],
                                   fmt::format("{} x {}", members.size(), stem));
  }

  std::string draw() const {
    const bool ranks_drawn = t_.num_ranks() <= kMostRanksDrawn;
    std::vector<RelationPlace> places;
    std::vector<bool> folded;
    for (const BandwidthRelation &rel : t_.relations()) {
      places.push_back(place_of(rel));
      folded.push_back(places.back().kind == RelationPlace::Port);
    }
    const std::map<int, std::string> ports = port_lines(t_, folded);
    std::string out = header(t_);
    out += "  graph [newrank=true];\n";
    if (ranks_drawn) {
      for (int n = 0; n < nodes_; ++n)
        out += node_cluster(n, ranks_drawn, ports, places);
    } else {
      // A box per node; what every node has alike is said once, beside them.
      std::vector<std::string> about;
      for (int n = 0; n < nodes_; ++n)
        about.push_back(node_cluster(n, ranks_drawn, ports, places));
      const bool alike = std::all_of(about.begin(), about.end(),
                                     [&](const std::string &a) { return a == about.front(); });
      if (alike)
        out += fmt::format("  legend [shape=plaintext, label={}];\n",
                           quote(fmt::format("each {}:\n{}", level_, about.front())));
      for (int n = 0; n < nodes_; ++n)
        out += fmt::format(
            "  nic{} [shape=box3d, style=\"\", label={}];\n", n,
            quote(fmt::format("{} {}{}", level_, n, alike ? "" : "\n" + about[size_t(n)])));
      // Nodes in order, left to right.
      std::string chain;
      for (int n = 0; n < nodes_; ++n)
        chain += fmt::format("{}nic{}", n == 0 ? "" : " -> ", n);
      out += fmt::format("  {{ rank=same; {} [style=invis]; }}\n", chain);
    }
    for (int s = t_.num_ranks(); s < t_.num_vertices(); ++s)
      if (node_of_[size_t(s)] < 0 && fabric_box_[size_t(s)] == vertex_node(s))
        out += switch_vertex(t_, s, "  ");
    for (const auto &[box, label] : fabric_boxes_)
      out += fmt::format("  {} [shape=box, style=\"rounded,filled\", fillcolor=gray90, "
                         "label={}];\n",
                         box, quote(label));
    out += collapsed_links();
    for (size_t i = 0; i < places.size(); ++i) {
      const bool apart = places[i].kind == RelationPlace::Apart;
      if (!apart && !(places[i].kind == RelationPlace::Inside && ranks_drawn))
        continue;
      std::set<std::string> joined;
      for (LinkId id : t_.relations()[i].links)
        for (RankId v : {t_.link(id).src, t_.link(id).dst})
          joined.insert(ranks_drawn || node_of_[size_t(v.value())] < 0
                            ? vertex_node(v.value())
                            : fmt::format("nic{}", node_of_[size_t(v.value())]));
      out += relation_cluster(t_, i, joined);
    }
    return out + "}\n";
  }

private:
  // Where a relation is drawn: a rank's port cap on the rank's label; a cap on links inside one
  // node in that node (a shared PCIe switch); a NIC's port cap on its node's NIC box, the node
  // its name starts with ("node3."), else the one all its links leave, else the one all enter;
  // anything else (an oversubscribed group's uplinks) apart, joined to what it caps.
  struct RelationPlace {
    enum Kind { Port, Inside, Nic, Apart } kind = Apart;
    int node = -1;
  };

  RelationPlace place_of(const BandwidthRelation &rel) const {
    std::set<int> homes, srcs, dsts;
    for (LinkId id : rel.links) {
      srcs.insert(node_of_[size_t(t_.link(id).src.value())]);
      dsts.insert(node_of_[size_t(t_.link(id).dst.value())]);
    }
    std::set_union(srcs.begin(), srcs.end(), dsts.begin(), dsts.end(),
                   std::inserter(homes, homes.end()));
    if (homes.size() == 1 && *homes.begin() >= 0)
      return {port_of(t_, rel) ? RelationPlace::Port : RelationPlace::Inside, *homes.begin()};
    for (int n : homes)
      if (n >= 0 && rel.name.starts_with(fmt::format("{}{}.", level_, n)))
        return {RelationPlace::Nic, n};
    if (srcs.size() == 1 && *srcs.begin() >= 0)
      return {RelationPlace::Nic, *srcs.begin()};
    if (dsts.size() == 1 && *dsts.begin() >= 0)
      return {RelationPlace::Nic, *dsts.begin()};
    return {};
  }

  // Whether every ordered pair of the node's ranks is linked alike; the link if so.
  std::optional<Link> uniform_mesh(int n) const {
    std::optional<Link> first;
    int count = 0;
    for (const Link &l : t_.links())
      if (!t_.is_switch(l.src) && !t_.is_switch(l.dst) && node_of_[size_t(l.src.value())] == n &&
          node_of_[size_t(l.dst.value())] == n) {
        if (first && (l.capacity != first->capacity || l.bandwidth != first->bandwidth ||
                      l.alpha != first->alpha))
          return std::nullopt;
        first = first ? first : l;
        ++count;
      }
    if (per_node_ < 3 || count != per_node_ * (per_node_ - 1))
      return std::nullopt;
    return first;
  }

  // The node's cluster; past kMostRanksDrawn ranks, what its one box says instead.
  std::string node_cluster(int n, bool ranks_drawn, const std::map<int, std::string> &ports,
                           const std::vector<RelationPlace> &places) const {
    const std::optional<Link> mesh = uniform_mesh(n);
    const std::string inner =
        t_.hierarchy().levels.size() > 1 ? t_.hierarchy().levels[1].name : std::string("rank");
    std::string label = fmt::format("{} {}: {} x {}", level_, n, per_node_, inner);
    if (mesh)
      label += fmt::format("\nevery pair linked x{}, {}", mesh->capacity, gbps(mesh->bandwidth));
    // Port caps alike on every rank of the node are said once, in the node's label.
    std::set<std::string> node_ports;
    for (int g = 0; g < per_node_; ++g) {
      const auto it = ports.find(n * per_node_ + g);
      node_ports.insert(it == ports.end() ? std::string() : it->second);
    }
    const bool ports_alike = node_ports.size() == 1;
    if (ports_alike && !node_ports.begin()->empty())
      label += fmt::format("\neach {}: {}", inner, *node_ports.begin());
    if (!ranks_drawn)
      return label.substr(label.find(": ") + 2) + "\n" + nic_label(n, places);
    std::string out =
        fmt::format("  subgraph cluster_{}{} {{\n    label={};\n", level_, n, quote(label));
    for (int g = 0; g < per_node_; ++g) {
      const int r = n * per_node_ + g;
      out += fmt::format("    {} [label={}];\n", vertex_node(r),
                         quote(rank_label(r, fmt::format("{} {}", inner, g),
                                          ports_alike ? std::map<int, std::string>() : ports)));
    }
    for (int s = t_.num_ranks(); s < t_.num_vertices(); ++s)
      if (node_of_[size_t(s)] == n)
        out += switch_vertex(t_, s, "    ");
    if (!mesh)
      for (const Link &l : t_.links())
        if (node_of_[size_t(l.src.value())] == n && node_of_[size_t(l.dst.value())] == n)
          out += link_edge(t_, l, "    ");
    out += fmt::format("    nic{} [shape=box3d, style=\"\", label={}];\n", n,
                       quote(nic_label(n, places)));
    // A collapsed mesh draws no edge to place the ranks by: rows of four, the NIC box under
    // them, so that a node of 8 GPUs is about as wide as it is tall.
    const int row = mesh ? std::min(per_node_, 4) : per_node_;
    for (int g = 0; g < per_node_; ++g)
      out += fmt::format("    {} -> {} [style=invis];\n", vertex_node(n * per_node_ + g),
                         g + row < per_node_ ? vertex_node(n * per_node_ + g + row)
                                             : fmt::format("nic{}", n));
    // Ranks in order, left to right, in each row.
    if (mesh)
      for (int first = 0; first < per_node_; first += row) {
        std::string chain;
        for (int g = first; g < std::min(per_node_, first + row); ++g)
          chain += (g == first ? "" : " -> ") + vertex_node(n * per_node_ + g);
        out += fmt::format("    {{ rank=same; {} [style=invis]; }}\n", chain);
      }
    return out + "  }\n";
  }

  std::string nic_label(int n, const std::vector<RelationPlace> &places) const {
    const Hierarchy &h = t_.hierarchy();
    std::string label = h.nics_per_node > 0
                            ? fmt::format("{} NIC{}, {} each", h.nics_per_node,
                                          h.nics_per_node == 1 ? "" : "s", gbps(h.nic_bandwidth))
                            : std::string("links out of the node");
    std::map<int, int> caps; // capacity -> relations
    int inside = 0;
    for (size_t i = 0; i < places.size(); ++i)
      if (places[i].node == n && places[i].kind == RelationPlace::Nic)
        ++caps[t_.relations()[i].capacity];
      else if (places[i].node == n && places[i].kind == RelationPlace::Inside)
        ++inside;
    for (const auto &[cap, count] : caps)
      label += fmt::format("\n{} port cap{} of {}/round", count, count == 1 ? "" : "s", cap);
    if (inside > 0 && t_.num_ranks() > kMostRanksDrawn)
      label += fmt::format("\n{} cap{} inside the node", inside, inside == 1 ? "" : "s");
    return label;
  }

  // Links that leave a node, gathered by the node and what they reach (a fabric switch, or the
  // other nodes when ranks are linked across nodes directly): one edge each, labelled with the
  // count each way and the links' rate.
  std::string collapsed_links() const {
    struct Bundle {
      int out = 0, in = 0;
      std::set<std::pair<int, double>> kinds; // (capacity, GB/s)
      void add(const Link &l, bool leaving) {
        ++(leaving ? out : in);
        kinds.insert({l.capacity, l.bandwidth.value});
      }
      std::string label() const {
        std::string text = out == in ? fmt::format("{} link{} each way", out, out == 1 ? "" : "s")
                                     : fmt::format("{} out, {} in", out, in);
        for (const auto &[cap, rate] : kinds)
          text += cap > 1 ? fmt::format("\nx{}, {:.4g} GB/s", cap, rate)
                          : fmt::format("\n{:.4g} GB/s", rate);
        return text;
      }
      std::string direction() const {
        return out > 0 && in > 0 ? "dir=both" : in > 0 ? "dir=back" : "dir=forward";
      }
    };
    constexpr const char *kDirect = "direct";
    std::map<std::pair<int, std::string>, Bundle> bundles; // (node, switch or kDirect)
    std::map<std::pair<std::string, std::string>, Bundle> switch_bundles; // into a switch box
    std::string out;
    for (const Link &l : t_.links()) {
      const int a = node_of_[size_t(l.src.value())], b = node_of_[size_t(l.dst.value())];
      if (a == b && a >= 0)
        continue; // inside a node
      if (a < 0 && b < 0) {
        const std::string &from = fabric_box_[size_t(l.src.value())],
                          &to = fabric_box_[size_t(l.dst.value())];
        if (from == vertex_node(l.src.value()) && to == vertex_node(l.dst.value()))
          out += link_edge(t_, l, "  "); // switch to switch
        else if (from < to)
          switch_bundles[{from, to}].add(l, true);
        else if (to < from)
          switch_bundles[{to, from}].add(l, false);
        continue;
      }
      if (a >= 0)
        bundles[{a, b >= 0 ? kDirect : fabric_box_[size_t(l.dst.value())]}].add(l, true);
      if (b >= 0)
        bundles[{b, a >= 0 ? kDirect : fabric_box_[size_t(l.src.value())]}].add(l, false);
    }
    for (const auto &[ends, bundle] : switch_bundles)
      out += fmt::format("  {} -> {} [{}, label={}, penwidth=2];\n", ends.first, ends.second,
                         bundle.direction(), quote(bundle.label()));
    if (std::any_of(bundles.begin(), bundles.end(),
                    [&](const auto &b) { return b.first.second == kDirect; }))
      out += fmt::format("  {} [shape=ellipse, style=dashed, label=\"links between {}s\"];\n",
                         kDirect, level_);
    std::map<std::pair<int, std::string>, std::string> labels;
    std::set<std::string> distinct;
    for (const auto &[ends, bundle] : bundles)
      distinct.insert(labels[ends] = bundle.label());
    // Bundles all alike (a rail-optimized fabric: each node one link to each rail's leaf; or
    // nodes linked directly, each alike) are labelled once, beside them, not on each edge.
    const bool alike = distinct.size() == 1 && bundles.size() > 2;
    if (alike)
      out +=
          fmt::format("  bundles [shape=plaintext, label={}];\n",
                      quote(fmt::format("each edge out of a {}:\n{}", level_, *distinct.begin())));
    for (const auto &[ends, bundle] : bundles)
      out += fmt::format("  nic{} -> {} [{}{}, penwidth=2];\n", ends.first, ends.second,
                         bundle.direction(), alike ? "" : ", label=" + quote(labels.at(ends)));
    return out;
  }

  const Topology &t_;
  std::string level_;
  int nodes_;
  int per_node_;
  std::vector<int> node_of_;            ///< per vertex: its node, -1 for a fabric switch
  std::vector<std::string> fabric_box_; ///< per fabric switch: its DOT node, maybe its group's
  std::vector<std::pair<std::string, std::string>> fabric_boxes_; ///< (DOT node, label)
};

} // namespace

std::string topology_dot(const Topology &t) {
  const Hierarchy &h = t.hierarchy();
  if (h.levels.size() >= 2 && h.levels.front().size >= 2)
    return NodeDrawing(t).draw();
  return flat_topology_dot(t);
}

} // namespace syncoll::viz
