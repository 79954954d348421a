// The topology library's machines of several nodes: `multinode` (every pair of nodes one NIC hop
// apart, each NIC's traffic capped by a relation) and `fat_tree` (the NICs cabled to leaf, spine
// and core switches). Each node is a copy of an intra-node topology; model/topology_library.h
// declares them beside the library's other shapes.
#include "model/runtime_constants.h"
#include "model/topology_library.h"

#include <cmath>
#include <fmt/format.h>

namespace syncoll {
namespace {

// NCCL's per-hop ring latency across the network for the LL protocol, the lowest and so closest
// to the wire (2.7 us, model/runtime_constants.h).
constexpr Nanoseconds kNetAlpha{protocol_traits(Protocol::LL).nccl_ring_net_hop_us * 1000};
// A fat tree splits the network hop between the two NICs and adds 100 ns per switch-to-switch
// cable, the order of an InfiniBand switch's port-to-port latency.
constexpr Nanoseconds kSwitchAlpha{100};

Expected<void> check_nodes(std::string_view what, int nodes, int gpus, int nics_per_node,
                           BytesPerNs nic_bandwidth) {
  if (nodes < 1)
    return fail({}, fmt::format("{} needs at least 1 node, got {}", what, nodes));
  if (int64_t(nodes) * gpus > kMaxRanks)
    return fail({}, fmt::format("{} has {} ranks; at most {} are supported", what,
                                int64_t(nodes) * gpus, kMaxRanks));
  if (nics_per_node < 1 || nics_per_node > gpus)
    return fail({}, fmt::format("NICs per node must be in [1, {}] (the GPUs per node), got {}",
                                gpus, nics_per_node));
  if (!(nic_bandwidth.value > 0))
    return fail({}, "NIC bandwidth must be positive");
  return {};
}

// `nodes` copies of `intra`, rank node * gpus + gpu, each relation and switch vertex renamed
// after its node ("node1.pci 0000:1a:00.0"); node n's switches are vertices ranks + n x switches
// + i, all after every node's ranks.
void add_nodes(TopologyDraft &d, int nodes, const Topology &intra) {
  const int gpus = intra.num_ranks();
  const int switches = intra.num_switches();
  const TopologyDraft local = intra.to_draft();
  for (int node = 0; node < nodes; ++node) {
    auto vertex = [&](RankId v) {
      return RankId(v.value() < gpus ? node * gpus + v.value()
                                     : nodes * gpus + node * switches + (v.value() - gpus));
    };
    for (const std::string &name : local.switches)
      d.switches.push_back(node_vertex_name(node, name));
    for (Link l : local.links) {
      l.src = vertex(l.src);
      l.dst = vertex(l.dst);
      d.links.push_back(l);
    }
    for (const auto &rel : local.relations) {
      TopologyDraft::Relation r{node_vertex_name(node, rel.name), {}, rel.capacity, rel.sharing};
      for (auto [s, t] : rel.links)
        r.links.emplace_back(vertex(s), vertex(t));
      d.relations.push_back(std::move(r));
    }
  }
}

} // namespace

std::string node_vertex_name(int node, std::string_view name) {
  return fmt::format("node{}.{}", node, name);
}

std::string_view node_local_name(std::string_view name) {
  if (!name.starts_with("node"))
    return name;
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 4 ||
      name.substr(4, dot - 4).find_first_not_of("0123456789") != std::string_view::npos)
    return name;
  return name.substr(dot + 1);
}

Expected<Topology> multinode(int nodes, const Topology &intra, int nics_per_node,
                             BytesPerNs nic_bandwidth, std::optional<LeafGroups> leaf_groups) {
  const int gpus = intra.num_ranks();
  SYNCOLL_CHECK(check_nodes("multinode", nodes, gpus, nics_per_node, nic_bandwidth));
  int group_size = nodes, uplink_nics = 0;
  if (leaf_groups) {
    group_size = leaf_groups->nodes_per_leaf;
    if (group_size < 1 || nodes % group_size != 0)
      return fail(
          {}, fmt::format("nodes per leaf must divide the {} nodes, got {}", nodes, group_size));
    const double r = leaf_groups->oversubscription;
    if (!(r >= 1) || r > 1024)
      return fail({}, fmt::format("oversubscription must be in [1, 1024], got {}", r));
    const double nics = double(group_size) * nics_per_node / r;
    uplink_nics = int(std::llround(nics));
    if (uplink_nics < 1 || std::abs(nics - uplink_nics) > 1e-9)
      return fail({}, fmt::format("a leaf's uplinks carry {} x {} NICs / {} = {} NICs' bandwidth; "
                                  "unwound to links that must be a whole number",
                                  group_size, nics_per_node, r, nics));
  }
  TopologyDraft d;
  d.name = fmt::format("multinode{}x{}_{}", nodes, gpus, intra.name());
  d.num_ranks = nodes * gpus;
  d.hierarchy = {{{"node", nodes}, {"gpu", gpus}}, nics_per_node, nic_bandwidth};
  add_nodes(d, nodes, intra);
  if (nodes > 1) {
    auto nic_of = [&](int gpu) { return gpu * nics_per_node / gpus; };
    std::vector<TopologyDraft::Relation> out(size_t(nodes) * nics_per_node),
        in(size_t(nodes) * nics_per_node);
    for (int node = 0; node < nodes; ++node)
      for (int nic = 0; nic < nics_per_node; ++nic) {
        size_t k = size_t(node) * nics_per_node + nic;
        out[k] = {fmt::format("node{}.nic{}.out", node, nic), {}, 1};
        in[k] = {fmt::format("node{}.nic{}.in", node, nic), {}, 1};
      }
    for (int a = 0; a < nodes * gpus; ++a)
      for (int b = 0; b < nodes * gpus; ++b) {
        int na = a / gpus, nb = b / gpus;
        if (na == nb)
          continue;
        d.links.push_back({RankId(a), RankId(b), 1, kNetAlpha, nic_bandwidth});
        out[size_t(na) * nics_per_node + nic_of(a % gpus)].links.emplace_back(RankId(a), RankId(b));
        in[size_t(nb) * nics_per_node + nic_of(b % gpus)].links.emplace_back(RankId(a), RankId(b));
      }
    for (size_t k = 0; k < out.size(); ++k) {
      d.relations.push_back(std::move(out[k]));
      d.relations.push_back(std::move(in[k]));
    }
  }
  if (leaf_groups && leaf_groups->oversubscription > 1 && group_size < nodes) {
    const int groups = nodes / group_size;
    const int per_group = group_size * gpus;
    for (int g = 0; g < groups; ++g) {
      TopologyDraft::Relation up{fmt::format("group{}.up", g), {}, uplink_nics};
      TopologyDraft::Relation down{fmt::format("group{}.down", g), {}, uplink_nics};
      for (int a = g * per_group; a < (g + 1) * per_group; ++a)
        for (int b = 0; b < nodes * gpus; ++b) {
          if (b / per_group == g)
            continue;
          up.links.emplace_back(RankId(a), RankId(b));
          down.links.emplace_back(RankId(b), RankId(a));
        }
      d.relations.push_back(std::move(up));
      d.relations.push_back(std::move(down));
    }
    d.name += fmt::format("_leaf{}_over{}", group_size, leaf_groups->oversubscription);
  }
  return Topology::create(std::move(d));
}

Expected<Topology> fat_tree(int nodes, const Topology &intra, const FatTree &fabric) {
  const int gpus = intra.num_ranks();
  const int nics = fabric.nics_per_node;
  SYNCOLL_CHECK(check_nodes("fat_tree", nodes, gpus, nics, fabric.nic_bandwidth));
  if (intra.num_switches() > 0)
    return fail({}, fmt::format("fat_tree: node '{}' has switch vertices (PCIe, sockets); a fat "
                                "tree's switches take their place in the vertex numbering",
                                intra.name()));
  if (fabric.tiers != 2 && fabric.tiers != 3)
    return fail({}, fmt::format("a fat tree has 2 or 3 tiers of switches, got {}", fabric.tiers));
  if (fabric.nodes_per_leaf < 1)
    return fail(
        {}, fmt::format("nodes per leaf switch must be at least 1, got {}", fabric.nodes_per_leaf));
  if (fabric.leaves_per_pod < 1)
    return fail({},
                fmt::format("leaves per pod must be at least 1, got {}", fabric.leaves_per_pod));
  if (!(fabric.oversubscription >= 1) || fabric.oversubscription > 1024)
    return fail(
        {}, fmt::format("oversubscription must be in [1, 1024], got {}", fabric.oversubscription));
  if (fabric.rails && fabric.tiers == 3)
    return fail({}, "a rail-optimized fat tree has 2 tiers (rail leaves and spines)");
  TopologyDraft d;
  d.name =
      fmt::format("fat_tree{}x{}_{}{}", nodes, gpus, intra.name(), fabric.rails ? "_rails" : "");
  d.num_ranks = nodes * gpus;
  d.hierarchy = {{{"node", nodes}, {"gpu", gpus}}, nics, fabric.nic_bandwidth};
  add_nodes(d, nodes, intra);

  // Leaf group l serves nodes [l * nodes_per_leaf, ...): one leaf switch, or one per NIC index
  // (rail) when rail-optimized. A leaf's NIC ports' bandwidth leaves it over `uplinks` links,
  // one to each switch of the next tier, divided by the oversubscription.
  const int groups = (nodes + fabric.nodes_per_leaf - 1) / fabric.nodes_per_leaf;
  const int rails = fabric.rails ? nics : 1;
  const int leaves = groups * rails;
  const int down_ports = fabric.nodes_per_leaf * (fabric.rails ? 1 : nics);
  const int uplinks =
      std::max(1, static_cast<int>(std::ceil(double(down_ports) / fabric.oversubscription - 1e-9)));
  const BytesPerNs uplink_bandwidth{double(down_ports) * fabric.nic_bandwidth.value /
                                    fabric.oversubscription / uplinks};
  // A single leaf group needs nothing above it (rails of one group meet over the nodes' own
  // links), and a single pod no core.
  const int pods = groups == 1 || fabric.tiers == 2
                       ? 1
                       : (leaves + fabric.leaves_per_pod - 1) / fabric.leaves_per_pod;
  const int tiers = groups == 1 ? 1 : pods == 1 ? 2 : 3;
  auto vertex = [&](int switch_index) { return RankId(d.num_ranks + switch_index); };
  auto cable = [&](RankId a, RankId b, Nanoseconds alpha, BytesPerNs bandwidth) {
    d.links.push_back({a, b, 1, alpha, bandwidth});
    d.links.push_back({b, a, 1, alpha, bandwidth});
  };
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < rails; ++r)
      d.switches.push_back(fabric.rails ? fmt::format("leaf{}.rail{}", g, r)
                                        : fmt::format("leaf{}", g));
  // Tier 2: spines (2 tiers), or per pod one aggregation switch per leaf uplink (3 tiers).
  const int first_tier2 = leaves;
  for (int pod = 0; pod < pods && tiers >= 2; ++pod)
    for (int u = 0; u < uplinks; ++u)
      d.switches.push_back(fabric.tiers == 2 ? fmt::format("spine{}", u)
                                             : fmt::format("pod{}.agg{}", pod, u));
  // Tier 3: core group u joins aggregation switch u of every pod, one core per pod leaf slot,
  // so an aggregation switch has as many links up as down.
  const int first_core = static_cast<int>(d.switches.size());
  const int cores_per_group = tiers == 3 ? fabric.leaves_per_pod : 0;
  for (int u = 0; u < uplinks && tiers == 3; ++u)
    for (int c = 0; c < cores_per_group; ++c)
      d.switches.push_back(fmt::format("core{}.{}", u, c));

  // NICs: GPU g of a node uses NIC g * nics / gpus (and that NIC's rail); GPUs that share a NIC
  // share its two directions as relations.
  const Nanoseconds nic_alpha{kNetAlpha.count / 2};
  for (int node = 0; node < nodes; ++node) {
    const int group = node / fabric.nodes_per_leaf;
    auto leaf_of = [&](int nic) { return vertex(group * rails + (fabric.rails ? nic : 0)); };
    for (int g = 0; g < gpus; ++g)
      cable(RankId(node * gpus + g), leaf_of(g * nics / gpus), nic_alpha, fabric.nic_bandwidth);
    if (gpus == nics)
      continue;
    for (int nic = 0; nic < nics; ++nic) {
      TopologyDraft::Relation out{fmt::format("node{}.nic{}.out", node, nic), {}, 1};
      TopologyDraft::Relation in{fmt::format("node{}.nic{}.in", node, nic), {}, 1};
      for (int g = 0; g < gpus; ++g)
        if (g * nics / gpus == nic) {
          out.links.emplace_back(RankId(node * gpus + g), leaf_of(nic));
          in.links.emplace_back(leaf_of(nic), RankId(node * gpus + g));
        }
      d.relations.push_back(std::move(out));
      d.relations.push_back(std::move(in));
    }
  }
  for (int l = 0; l < leaves && tiers >= 2; ++l) {
    const int pod = fabric.tiers == 2 ? 0 : l / fabric.leaves_per_pod;
    for (int u = 0; u < uplinks; ++u)
      cable(vertex(l), vertex(first_tier2 + pod * uplinks + u), kSwitchAlpha, uplink_bandwidth);
  }
  for (int pod = 0; pod < pods && tiers == 3; ++pod)
    for (int u = 0; u < uplinks; ++u)
      for (int c = 0; c < cores_per_group; ++c)
        cable(vertex(first_tier2 + pod * uplinks + u), vertex(first_core + u * cores_per_group + c),
              kSwitchAlpha, uplink_bandwidth);
  return Topology::create(std::move(d));
}

} // namespace syncoll
