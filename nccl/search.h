// NCCL's topology search on a syncoll topology: the rings (one per channel) and the per-channel
// speed NCCL settles on, as src/graph/search.cc finds them.
//
// Every link and bandwidth relation is a resource with NCCL's graph bandwidth (NVLink: links x
// the generation's graph rate per NVLink; a NIC: its line rate). A channel at speed s takes s
// from every link its ring uses and from every relation over those links. Pass 1 walks the
// generation's speed list from the highest one the topology can carry, trying at each speed the
// same ring repeated and then different rings (not through AMD sockets: NcclSearchHost), and
// keeps the most total bandwidth (channels x speed); it stops where the next speed is under half
// the best one found. Where two GPUs share no link on a node with switch vertices (PCIe bridges
// and sockets read from NCCL's topology dump), a ring's hop between them is the route through
// the switches, and the channel takes its speed from every link of it, as NCCL's paths do; at
// each speed the hops allowed widen one path type at a time (NcclPathType: the GPUs' own links
// first, then routes through one PCIe switch, several, a socket, two sockets) while nothing is
// found or what is kept takes wider ones, as NCCL's typeIntra does. A
// graph at 25 GB/s or more per channel is then split into twice the channels at half the speed.
// Across nodes each node's ring is cut into a chain that enters and leaves through the NICs,
// channel c on NIC c mod NICs, and the per-channel speed is also capped by the NIC's share.
#pragma once

#include "model/hardware.h"
#include "model/ids.h"
#include "model/topology.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::simulator {
class Routes;
}

namespace syncoll::nccl {

/// The most channels NCCL runs a collective on (MAXCHANNELS / 2 of its graphs, doubled at run
/// time).
inline constexpr int kNcclMaxChannels = 32;

/// NCCL's path types (model/hardware.h holds them, for the presets' GPU-NIC path).
using syncoll::NcclPathType;
std::string_view nccl_path_name(NcclPathType type);
/// Every path type's name, nearest first, as a list for a message ("LOC, NVL, ... or SYS").
std::string nccl_path_names();
/// The type a graph file's `typeintra` or `typeinter` names, by NCCL's name of it; none for
/// another (NET and DIS are no path inside a node).
std::optional<NcclPathType> find_nccl_path_type(std::string_view name);
/// The type of the route `routes` takes from GPU `a` to GPU `b` of `topology`, by the switch
/// vertices it crosses (named as a topology dump names them: `nvswitch`, `cpu...`, bridges).
NcclPathType nccl_path_type(const Topology &topology, simulator::Routes &routes, RankId a,
                            RankId b);

struct NcclRingGraph {
  /// Rank order of each channel's ring, graph channels (before NCCL's runtime doubles them).
  std::vector<std::vector<RankId>> rings;
  /// Per-channel speed inside a node and across nodes, GB/s (bwIntra, bwInter).
  double intra_gbps = 0;
  double inter_gbps = 0;
  int nodes = 1;
  /// Across nodes of a fixed mesh each channel was walked as a chain NET -> GPU ... GPU -> NET
  /// (search_chains); NCCL's tree follows those chains there.
  bool chains = false;
  /// The widest path type its channels were allowed inside a node (NCCL's typeIntra): NCCL runs
  /// LL128 only on a graph of NVLink hops.
  NcclPathType type_intra = NcclPathType::Nvl;
  /// The widest path between a channel's GPU and its NIC (typeInter): across nodes the system's
  /// (SystemPreset::nic_path: PIX on the calibrated machines, a topology dump's own), a graph
  /// file's where it says; PIX on one node, as NCCL writes it there.
  NcclPathType type_inter = NcclPathType::Pix;

  int channels() const { return static_cast<int>(rings.size()); }
  /// The channels NCCL runs: twice the graph's (ncclTopoPostset), at most 32.
  int runtime_channels() const;
  /// The ring of each of `channels` channels, channel c on ring c mod the graph's; for a rooted
  /// collective each ring turned to start at `root`.
  std::vector<std::vector<RankId>> channel_rings(int channels,
                                                 std::optional<RankId> root = std::nullopt) const;
};

/// A tree graph's own path types where a graph file gives them: NCCL's tuning reads each
/// algorithm's graph's typeIntra and typeInter, and where the file leaves one out (or holds no tree
/// graph) the ring graph's stands in, as NCCL's search finds both at the same levels.
struct NcclTreeGraphTypes {
  std::optional<NcclPathType> intra;
  std::optional<NcclPathType> inter;
};

/// NCCL's graph bandwidth of each link of `topology`, GB/s: intra-node links in NVLinks x the
/// generation's graph rate, inter-node links at their line rate (the NIC's speed).
std::vector<double> nccl_link_gbps(const Topology &topology, const GenerationTraits &generation);

/// The first calibrated system whose node `topology` is: by the library name of its node, or link
/// for link and relation for relation (a node read from NCCL's dump); none for any other.
[[nodiscard]] const SystemPreset *preset_of_node(const Topology &topology);

/// The generation whose NCCL constants a plain topology is searched with: that of the system whose
/// node it is (dgx1: Volta, dgx_h100: Hopper, ...), else Ampere's (NVLink at 20 of its 25 GB/s in
/// NCCL's graph).
const GenerationTraits &nccl_generation_for(const Topology &topology);

/// The highest per-channel speed of the generation's inter-node list within `share_gbps` (a NIC's
/// rate shared by the channels on it), the list's lowest when none is.
double nccl_net_speed(const GenerationTraits &generation, double share_gbps);

/// What NCCL's search knows of a machine beyond its links and relations (read from its topology
/// dump): the switch vertices that are x86 AMD sockets. NCCL tries different rings per channel
/// only where its ring does not cross between such sockets (search.cc: not through AMD CPUs at
/// PATH_SYS); a ring that does is repeated on every channel, so its hops through the sockets
/// carry every channel one way. A search with no host (syncoll's own) tries both everywhere.
struct NcclSearchHost {
  std::vector<RankId> amd_sockets;
  /// The dump's GPU generation, whose NCCL constants (graph rate per link, speed lists) a search
  /// on the dump's topology takes; none: nccl_generation_for's.
  std::optional<GpuGeneration> generation;
};

/// The most NVLS heads NCCL's graph holds (NCCL_MAX_NVLS_ARITY).
inline constexpr int kNcclMaxNvlsHeads = 32;

/// NCCL's NVLS graph (graph id 3, NCCL_TOPO_PATTERN_NVLS). Its channels are not compute channels
/// but NVLS heads: channel c's one GPU of a node takes channel c's share of the buffer to and from
/// the other nodes (across nodes, through the NIC it names). NCCL's tuning costs NVLS and NVLS
/// tree from these channels and speeds; NVLS itself runs on NCCL_NVLS_NCHANNELS channels.
struct NcclNvlsGraph {
  std::vector<RankId> heads; ///< channel c's head: a GPU of node 0
  std::vector<int> nics;     ///< across nodes: channel c's NIC (of its head's node); else empty
  double intra_gbps = 0;     ///< bwIntra: per channel through the switch
  double inter_gbps = 0;     ///< bwInter: per channel through the network (one node: none used)

  int channels() const { return static_cast<int>(heads.size()); }
};

/// The NVLS graph NCCL's search builds on a machine whose GPUs share an NVSwitch (the caller
/// knows; the generation has NVLS when its nccl_nvls_efficiency is not 0): each head takes twice
/// the channel's speed through its switch port both ways and every other GPU once. On one node
/// every GPU heads one channel, channel c GPU c, at the highest intra-node speed all of them fit
/// at; across nodes each NIC's nearest GPU heads a channel, as many as fit at the inter-node
/// speed the NIC carries, more channels preferred to faster ones. The inter-node speed is then
/// raised while it fits and stays under twice the intra-node one (search.cc, pass 2). None where
/// no channel fits.
std::optional<NcclNvlsGraph> nccl_search_nvls(const Topology &topology,
                                              const GenerationTraits &generation);

/// The ring graph NCCL would build; none when the topology has no ring through every rank.
std::optional<NcclRingGraph> nccl_search_rings(const Topology &topology,
                                               const GenerationTraits &generation,
                                               const NcclSearchHost &host = {});

} // namespace syncoll::nccl
