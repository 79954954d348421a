// The topology library: the machines of the papers of docs/references.md and the usual regular
// shapes, each with latency and bandwidth defaults whose source is given beside the function.
#pragma once

#include "model/topology.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace syncoll {

/// Size parameters of library topologies; each topology reads the ones it needs and rejects the
/// others.
struct TopologyParams {
  std::optional<int> n;    ///< ranks (line, ring, fully_connected, star, hub_and_spoke)
  std::optional<int> dims; ///< hypercube dimension
  std::optional<std::vector<int>> shape;    ///< mesh2d, torus2d (WxH), torus3d, mesh3d (XxYxZ)
  std::optional<int> nodes;                 ///< multinode
  std::optional<int> gpus;                  ///< multinode: GPUs per node
  std::optional<std::string> intra;         ///< multinode: intra-node topology name
  std::optional<int> nics;                  ///< multinode: NICs per node
  std::optional<double> nic_bandwidth_gbps; ///< multinode: bandwidth of one NIC
  std::optional<int> tiers;                 ///< fat_tree: switch tiers (2 or 3)
  std::optional<int> nodes_per_leaf;        ///< fat_tree: nodes per leaf switch
  std::optional<int> leaves_per_pod;        ///< fat_tree: leaves per pod (3 tiers)
  std::optional<double> oversubscription;   ///< fat_tree: leaf down/up bandwidth ratio
  bool unidirectional = false;              ///< ring: one direction only
  bool rails = false;                       ///< fat_tree: rail-optimized leaves
};

struct TopologyLibraryEntry {
  std::string name;
  std::string parameters;
  std::string description;
};

/// Every library topology, in the order `syncoll topo list` prints them.
std::vector<TopologyLibraryEntry> topology_library();

/// A node's switch vertex or relation in a machine of several nodes ("node2.nvswitch"), and the
/// name within its node again (a name without a node prefix is its own).
[[nodiscard]] std::string node_vertex_name(int node, std::string_view name);
[[nodiscard]] std::string_view node_local_name(std::string_view name);

/// Builds a library topology by name. Names match case-insensitively and ignore '-' and '_', so
/// SCCL's spellings (DGX1, FullyConnected, HubAndSpoke) work too. Unknown names, missing or
/// impossible parameters, and parameters the topology does not take are errors.
[[nodiscard]] Expected<Topology> make_library_topology(std::string_view name,
                                                       const TopologyParams &params);

/// A library topology and its parameters on one line, spelled as on the command line
/// ("torus2d --shape 4x4", "multinode --nodes 2 --gpus 8 --intra dgx_h100 --nics 8
/// --nic-bandwidth 50"): how an algorithm file names the machine it was made for, so that every
/// command rebuilds that machine from the file alone.
std::string library_topology_spec(std::string_view name, const TopologyParams &params);

/// The options `params` sets, spelled as on the command line ("--shape", "--rails"), in one order.
std::vector<std::string_view> given_topology_options(const TopologyParams &params);

/// A library topology's name and parameters from such a line (a bare name has none); a token that
/// is not an option of the library, or an option without its value, is an error naming it.
[[nodiscard]] Expected<std::pair<std::string, TopologyParams>>
parse_library_topology_spec(std::string_view spec);

[[nodiscard]] Expected<Topology> line(int n);
[[nodiscard]] Expected<Topology> ring(int n, bool bidirectional = true);
[[nodiscard]] Expected<Topology> fully_connected(int n);
[[nodiscard]] Expected<Topology> star(int n);
[[nodiscard]] Expected<Topology> hub_and_spoke(int n);
[[nodiscard]] Expected<Topology> hypercube(int dims);
[[nodiscard]] Expected<Topology> mesh2d(int width, int height);
[[nodiscard]] Expected<Topology> torus2d(int width, int height);
[[nodiscard]] Expected<Topology> torus3d(int x, int y, int z);
[[nodiscard]] Expected<Topology> mesh3d(int x, int y, int z);
Topology dgx1();
Topology dgx2();
Topology amd4();
Topology amd8();
Topology dgx_a100();
Topology dgx_h100();
Topology dgx_b200();
Topology gb200_nvl72();
Topology hgx_a100_4();
Topology mi250x();
Topology mi300x();
Topology mi355x();
Topology ndv2();
/// `gpus` GPUs behind an NVSwitch, each with `links_per_gpu` NVLinks of `link_gbps` per
/// direction: a link between every pair at the port's bandwidth, and per GPU one relation
/// capping what it sends and one what it receives (SCCL's HubAndSpoke, in NVLinks).
[[nodiscard]] Expected<Topology> nvswitch_node(std::string name, int gpus, int links_per_gpu,
                                               double link_gbps);
/// `nodes` copies of `intra` (whose rank count is the GPUs per node) joined through NICs: every
/// GPU can reach every GPU of another node over a link of the NIC's bandwidth, and each NIC's
/// outgoing and incoming traffic is a bandwidth relation of capacity 1. GPU g of a node uses NIC
/// g * nics / gpus. Ranks are numbered node * gpus + gpu.
///
/// With `leaf_groups`, nodes come in groups of `nodes_per_leaf` under one leaf each, and the
/// leaves' uplinks to the spine carry 1 / `oversubscription` of the group's NIC bandwidth: every
/// link from a group to another is under the group's "up" relation and the other's "down"
/// relation, of nodes_per_leaf x nics / oversubscription NICs' bandwidth (a whole number). This
/// is a fat tree of that oversubscription unwound to links.
struct LeafGroups {
  int nodes_per_leaf = 1;
  double oversubscription = 1.0;
};
[[nodiscard]] Expected<Topology> multinode(int nodes, const Topology &intra, int nics_per_node,
                                           BytesPerNs nic_bandwidth,
                                           std::optional<LeafGroups> leaf_groups = std::nullopt);

/// `topology` with every bandwidth relation shared as `sharing` (a what-if run). Fair sharing
/// also gives every link outside all relations a fair relation of its own ("link A->B"), so that
/// every link shares itself max-min among the transfers on it, as a flow model's links do.
[[nodiscard]] Expected<Topology> with_sharing(const Topology &topology, RelationSharing sharing);

/// The switch fabric of a cluster.
struct FatTree {
  int nics_per_node = 1;
  BytesPerNs nic_bandwidth{25};
  int tiers = 2;                 ///< leaves and spines, or leaves, pod aggregation and core
  int nodes_per_leaf = 4;        ///< nodes whose NICs one leaf switch serves
  int leaves_per_pod = 16;       ///< 3 tiers: leaves under one pod's aggregation switches
  double oversubscription = 1.0; ///< a leaf's NIC bandwidth over its uplink bandwidth
  /// Rail-optimized (2 tiers): each group of nodes_per_leaf nodes has a leaf per NIC index, and
  /// NIC k of every node in the group cables to leaf k, so traffic between rails crosses the
  /// nodes' own links or the spines.
  bool rails = false;
};

/// `nodes` copies of `intra` whose NICs hang off a fat tree of switches (switch vertices, so
/// links grow with nodes, not with their square). GPU g of a node uses NIC g * nics / gpus, a
/// cable to its node's leaf switch (GPUs sharing a NIC share it as relations). Each leaf has
/// ceil(NIC ports / oversubscription) uplinks carrying the ports' bandwidth divided by the
/// oversubscription, one to each spine (2 tiers) or to each aggregation switch of its pod (3
/// tiers, each joined to its own group of core switches, non-blocking above the leaves). A fabric
/// of one leaf has no switches above it, and one of one pod no core.
[[nodiscard]] Expected<Topology> fat_tree(int nodes, const Topology &intra, const FatTree &fabric);

} // namespace syncoll
