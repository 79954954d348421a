#include "model/topology_library.h"

#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "model/text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace syncoll {
namespace {

// Generic shapes use ASTRA-sim's analytical-network example values (input/Ring.yml: 50 GB/s and
// 500 ns per link), the defaults the simulator papers compare against
// (docs/references.md, ASTRA-sim).
constexpr Nanoseconds kGenericAlpha{500};
constexpr BytesPerNs kGenericBandwidth{50};
// Link latencies are NCCL's per-hop ring latencies for the LL protocol (the lowest, so closest to
// the wire): NVLink 0.6 us, PCIe 1.0 us (model/runtime_constants.h; the network's 2.7 us is
// model/cluster_topology.cpp's). V100, A100
// and H100 NVLink moves 25 GB/s per link and direction (SCCL's DGX-1 model: "6 25 GB/s NVLink
// ports").
constexpr const ProtocolTraits &kLL = protocol_traits(Protocol::LL);
constexpr Nanoseconds kNvlinkAlpha{kLL.nccl_ring_nvlink_hop_us * 1000};
constexpr double kNvlinkGbps = 25;
constexpr Nanoseconds kPcieAlpha{kLL.nccl_ring_pci_hop_us * 1000};

Topology build(TopologyDraft draft) {
  auto t = Topology::create(std::move(draft));
  SYNCOLL_INVARIANT(t.has_value(), "library topology failed validation");
  return *std::move(t);
}

// Adds src->dst and dst->src once, whatever order pairs are offered in (a 2-ring's two
// neighbours are the same rank).
class LinkSet {
public:
  void both(int a, int b, int capacity, Nanoseconds alpha, BytesPerNs bw) {
    one(a, b, capacity, alpha, bw);
    one(b, a, capacity, alpha, bw);
  }
  void one(int a, int b, int capacity, Nanoseconds alpha, BytesPerNs bw) {
    if (a != b && seen_.insert({a, b}).second)
      links_.push_back({RankId(a), RankId(b), capacity, alpha, bw});
  }
  std::vector<Link> take() { return std::move(links_); }

private:
  std::set<std::pair<int, int>> seen_;
  std::vector<Link> links_;
};

Expected<void> require_at_least(const char *what, int value, int min) {
  if (value < min)
    return fail({}, fmt::format("{} must be at least {}, got {}", what, min, value));
  if (value > kMaxRanks)
    return fail({}, fmt::format("{} must be at most {}, got {}", what, kMaxRanks, value));
  return {};
}

// Links named as a symmetric multiplicity matrix links[a][b] (SCCL's convention; the matrices
// used here are symmetric, so the row/column order does not matter).
template <size_t N>
Topology from_matrix(std::string name, const std::array<std::array<int, N>, N> &m,
                     Nanoseconds alpha, double gbps_per_unit, Hierarchy hierarchy = {}) {
  TopologyDraft d;
  d.name = std::move(name);
  d.num_ranks = static_cast<int>(N);
  for (size_t a = 0; a < N; ++a)
    for (size_t b = 0; b < N; ++b)
      if (m[a][b] > 0)
        d.links.push_back({RankId(static_cast<int>(a)), RankId(static_cast<int>(b)), m[a][b], alpha,
                           BytesPerNs{gbps_per_unit * m[a][b]}});
  d.hierarchy = std::move(hierarchy);
  return build(std::move(d));
}

// A switch modelled as SCCL's HubAndSpoke: a link between every pair and, per rank, one relation
// capping what it sends and one capping what it receives (msccl-tools' DGX-2 model).
Topology switched(std::string name, int n, int port_capacity, Nanoseconds alpha,
                  BytesPerNs port_bandwidth) {
  TopologyDraft d;
  d.name = std::move(name);
  d.num_ranks = n;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b)
        d.links.push_back({RankId(a), RankId(b), port_capacity, alpha, port_bandwidth});
  for (int r = 0; r < n; ++r) {
    TopologyDraft::Relation out{fmt::format("rank{}.out", r), {}, port_capacity};
    TopologyDraft::Relation in{fmt::format("rank{}.in", r), {}, port_capacity};
    for (int o = 0; o < n; ++o) {
      if (o == r)
        continue;
      out.links.emplace_back(RankId(r), RankId(o));
      in.links.emplace_back(RankId(o), RankId(r));
    }
    d.relations.push_back(std::move(out));
    d.relations.push_back(std::move(in));
  }
  return build(std::move(d));
}

} // namespace

Expected<Topology> line(int n) {
  if (auto ok = require_at_least("line rank count", n, 2); !ok)
    return tl::unexpected(ok.error());
  LinkSet links;
  for (int i = 0; i + 1 < n; ++i)
    links.both(i, i + 1, 1, kGenericAlpha, kGenericBandwidth);
  return build({fmt::format("line{}", n), n, {}, links.take(), {}, {}});
}

Expected<Topology> ring(int n, bool bidirectional) {
  if (auto ok = require_at_least("ring rank count", n, 2); !ok)
    return tl::unexpected(ok.error());
  LinkSet links;
  for (int i = 0; i < n; ++i) {
    if (bidirectional)
      links.both(i, (i + 1) % n, 1, kGenericAlpha, kGenericBandwidth);
    else
      links.one(i, (i + 1) % n, 1, kGenericAlpha, kGenericBandwidth);
  }
  return build(
      {(bidirectional ? "ring" : "uniring") + std::to_string(n), n, {}, links.take(), {}, {}});
}

Expected<Topology> fully_connected(int n) {
  if (auto ok = require_at_least("fully_connected rank count", n, 2); !ok)
    return tl::unexpected(ok.error());
  LinkSet links;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      links.both(a, b, 1, kGenericAlpha, kGenericBandwidth);
  return build({fmt::format("fully_connected{}", n), n, {}, links.take(), {}, {}});
}

Expected<Topology> star(int n) {
  if (auto ok = require_at_least("star rank count", n, 2); !ok)
    return tl::unexpected(ok.error());
  LinkSet links;
  for (int i = 1; i < n; ++i)
    links.both(0, i, 1, kGenericAlpha, kGenericBandwidth);
  return build({fmt::format("star{}", n), n, {}, links.take(), {}, {}});
}

Expected<Topology> hub_and_spoke(int n) {
  if (auto ok = require_at_least("hub_and_spoke rank count", n, 2); !ok)
    return tl::unexpected(ok.error());
  return switched(fmt::format("hub_and_spoke{}", n), n, 1, kGenericAlpha, kGenericBandwidth);
}

Expected<Topology> hypercube(int dims) {
  if (dims < 1 || dims > 16)
    return fail({}, fmt::format("hypercube dimension must be in [1, 16], got {}", dims));
  int n = 1 << dims;
  LinkSet links;
  for (int r = 0; r < n; ++r)
    for (int d = 0; d < dims; ++d)
      links.both(r, r ^ (1 << d), 1, kGenericAlpha, kGenericBandwidth);
  return build({fmt::format("hypercube{}", dims), n, {}, links.take(), {}, {}});
}

namespace {
// Rank of grid coordinates, x fastest: rank = x + X * (y + Y * z).
Expected<Topology> grid(const std::string &kind, std::vector<int> shape, bool wrap) {
  int64_t n = 1;
  for (int s : shape) {
    if (s < 1)
      return fail({}, fmt::format("{} sides must be at least 1, got {}", kind, s));
    n *= s;
  }
  if (n < 2 || n > kMaxRanks)
    return fail({}, fmt::format("{} has {} ranks; it needs between 2 and {}", kind, n, kMaxRanks));
  LinkSet links;
  std::vector<int> stride(shape.size(), 1);
  for (size_t i = 1; i < shape.size(); ++i)
    stride[i] = stride[i - 1] * shape[i - 1];
  for (int r = 0; r < n; ++r) {
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      int coord = (r / stride[axis]) % shape[axis];
      int next = coord + 1;
      if (next == shape[axis]) {
        if (!wrap)
          continue;
        next = 0;
      }
      links.both(r, r + (next - coord) * stride[axis], 1, kGenericAlpha, kGenericBandwidth);
    }
  }
  std::string name = kind;
  for (size_t i = 0; i < shape.size(); ++i)
    name += (i ? "x" : "") + std::to_string(shape[i]);
  return build({name, static_cast<int>(n), {}, links.take(), {}, {}});
}
} // namespace

Expected<Topology> mesh2d(int width, int height) {
  return grid("mesh2d_", {width, height}, false);
}
Expected<Topology> torus2d(int width, int height) {
  return grid("torus2d_", {width, height}, true);
}
Expected<Topology> torus3d(int x, int y, int z) {
  return grid("torus3d_", {x, y, z}, true);
}
Expected<Topology> mesh3d(int x, int y, int z) {
  return grid("mesh3d_", {x, y, z}, false);
}

// SCCL's DGX-1 model (msccl-tools' known topologies): NVLink
// multiplicities, doubled on the chains 0-1-3-2 and 4-5-7-6 and on 0-4 and 2-6. Each NVLink of a
// V100 moves 25 GB/s (SCCL, section 5.1.1).
Topology dgx1() {
  static constexpr std::array<std::array<int, 8>, 8> kLinks{{{0, 2, 1, 1, 2, 0, 0, 0},
                                                             {2, 0, 1, 2, 0, 1, 0, 0},
                                                             {1, 1, 0, 2, 0, 0, 2, 0},
                                                             {1, 2, 2, 0, 0, 0, 0, 1},
                                                             {2, 0, 0, 0, 0, 2, 1, 1},
                                                             {0, 1, 0, 0, 2, 0, 1, 2},
                                                             {0, 0, 2, 0, 1, 1, 0, 2},
                                                             {0, 0, 0, 1, 1, 2, 2, 0}}};
  return from_matrix("dgx1", kLinks, kNvlinkAlpha, kNvlinkGbps);
}

// DGX-2: 16 V100 behind NVSwitch, modelled as SCCL's HubAndSpoke(16) (one chunk per round in and
// out of each GPU); each GPU has 6 NVLinks of 25 GB/s into the switch.
Topology dgx2() {
  return switched("dgx2", 16, 1, kNvlinkAlpha, BytesPerNs{6 * kNvlinkGbps});
}

// SCCL's AMD4 (msccl-tools): the ring 0-1-3-2-0 of four MI50s. SCCL (section 5.1.2) measures
// PCIe 4.0 x16 at ~27 GB/s and models xGMI and PCIe with the same beta.
Topology amd4() {
  static constexpr std::array<std::array<int, 4>, 4> kLinks{
      {{0, 1, 1, 0}, {1, 0, 0, 1}, {1, 0, 0, 1}, {0, 1, 1, 0}}};
  return from_matrix("amd4", kLinks, kPcieAlpha, 27);
}

// SCCL's AMD8 (msccl-tools): the Gigabyte Z52 with 8 MI50s as a fully connected graph of
// weights 5 and 6. One unit is 5.5 GB/s, so weight 6 is xGMI's measured ~33 GB/s and weight 5
// PCIe's ~27 GB/s (SCCL, section 5.1.2).
Topology amd8() {
  static constexpr std::array<std::array<int, 8>, 8> kLinks{{{0, 5, 6, 6, 5, 6, 5, 5},
                                                             {5, 0, 5, 5, 6, 5, 6, 6},
                                                             {6, 5, 0, 6, 5, 6, 5, 5},
                                                             {6, 5, 6, 0, 5, 6, 5, 5},
                                                             {5, 6, 5, 5, 0, 5, 6, 6},
                                                             {6, 5, 6, 6, 5, 0, 5, 5},
                                                             {5, 6, 5, 5, 6, 5, 0, 6},
                                                             {5, 6, 5, 5, 6, 5, 6, 0}}};
  return from_matrix("amd8", kLinks, kPcieAlpha, 5.5);
}

// DGX A100: 8 A100 behind NVSwitch, 12 NVLinks of 25 GB/s per GPU (msccl-tools' dgx_a100 uses
// 12 links between every pair); a link's capacity is counted in NVLinks.
Topology dgx_a100() {
  return switched("dgx_a100", 8, 12, kNvlinkAlpha, BytesPerNs{12 * kNvlinkGbps});
}

// DGX H100: 8 H100 behind NVSwitch, 18 NVLink4 links of 25 GB/s per direction (450 GB/s).
Topology dgx_h100() {
  return switched("dgx_h100", 8, 18, kNvlinkAlpha, BytesPerNs{18 * kNvlinkGbps});
}

// DGX B200: 8 B200 behind NVSwitch, 18 NVLink5 links of 50 GB/s per direction (900 GB/s).
Topology dgx_b200() {
  return switched("dgx_b200", 8, 18, kNvlinkAlpha, BytesPerNs{18 * 2 * kNvlinkGbps});
}

// GB200 NVL72: 72 B200 GPUs of 18 trays of 4 (two Grace CPUs each) in one NVLink domain: 9
// NVLink Switch trays give each GPU 18 NVLink5 links of 50 GB/s per direction, as a DGX B200's
// NVSwitch does, across the whole rack.
Topology gb200_nvl72() {
  return switched("gb200_nvl72", 72, 18, kNvlinkAlpha, BytesPerNs{18 * 2 * kNvlinkGbps});
}

// AMD Instinct platforms (MI300X, MI355X on an OAM baseboard): 8 GPUs, each joined to each of the
// others by one xGMI (Infinity Fabric) link, no switch. A link moves 64 GB/s per direction on
// MI300X (896 GB/s of peer bandwidth over 7 links, both directions counted) and 76.8 GB/s on
// MI355X (1075 GB/s). The xGMI hop's latency is taken as NVLink's: the platforms' documents give
// none, and a system's rows price hops per protocol anyway.
namespace {
Topology xgmi_mesh(std::string name, double link_gbps) {
  std::array<std::array<int, 8>, 8> links{};
  for (size_t a = 0; a < 8; ++a)
    for (size_t b = 0; b < 8; ++b)
      links[a][b] = a == b ? 0 : 1;
  return from_matrix(std::move(name), links, kNvlinkAlpha, link_gbps);
}
} // namespace

// HGX A100 4-GPU (Perlmutter's and Delta's GPU nodes): 4 A100 SXM4, each pair joined by 4 of
// their 12 NVLink3 links (100 GB/s per direction), no NVSwitch.
Topology hgx_a100_4() {
  std::array<std::array<int, 4>, 4> links{};
  for (size_t a = 0; a < 4; ++a)
    for (size_t b = 0; b < 4; ++b)
      links[a][b] = a == b ? 0 : 4;
  return from_matrix("hgx_a100_4", links, kNvlinkAlpha, kNvlinkGbps);
}

// OLCF Frontier's node: 4 MI250X, each package two GCDs (devices of their own) joined by 4 xGMI
// links, each GCD joined by one link to a GCD of each of two other packages, so the 8 GCDs form
// a cube (RCCL's topology model of the node, rome_models.cc, lists those three peers per GCD;
// AMD's data sheet gives 50 GB/s per link and direction and the 4 links inside a package). Pairs
// without a link reach each other through the host.
Topology mi250x() {
  static constexpr std::array<std::array<int, 8>, 8> kLinks{{{0, 4, 1, 0, 0, 0, 1, 0},
                                                             {4, 0, 0, 1, 0, 1, 0, 0},
                                                             {1, 0, 0, 4, 1, 0, 0, 0},
                                                             {0, 1, 4, 0, 0, 0, 0, 1},
                                                             {0, 0, 1, 0, 0, 4, 1, 0},
                                                             {0, 1, 0, 0, 4, 0, 0, 1},
                                                             {1, 0, 0, 0, 1, 0, 0, 4},
                                                             {0, 0, 0, 1, 0, 1, 4, 0}}};
  return from_matrix("mi250x", kLinks, kNvlinkAlpha, 50);
}

Topology mi300x() {
  return xgmi_mesh("mi300x", 64);
}

Topology mi355x() {
  return xgmi_mesh("mi355x", 76.8);
}

Expected<Topology> nvswitch_node(std::string name, int gpus, int links_per_gpu, double link_gbps) {
  if (auto ok = require_at_least("NVSwitch GPU count", gpus, 2); !ok)
    return tl::unexpected(ok.error());
  if (links_per_gpu < 1 || !(link_gbps > 0))
    return fail({}, "an NVSwitch node needs at least one NVLink of positive bandwidth per GPU");
  return switched(std::move(name), gpus, links_per_gpu, kNvlinkAlpha,
                  BytesPerNs{links_per_gpu * link_gbps});
}

// Azure NDv2: 8 V100 in the DGX-1 hybrid cube-mesh (TACCL's NDv2: NVLink at 50 and 25 GB/s for
// doubled and single links) plus one 100 Gb/s InfiniBand NIC (12.5 GB/s, TE-CCL's NDv2).
Topology ndv2() {
  TopologyDraft d = dgx1().to_draft();
  d.name = "ndv2";
  d.hierarchy = {{{"node", 1}, {"gpu", 8}}, 1, BytesPerNs{12.5}};
  return build(std::move(d));
}

Expected<Topology> with_sharing(const Topology &topology, RelationSharing sharing) {
  TopologyDraft d = topology.to_draft();
  for (auto &relation : d.relations)
    relation.sharing = sharing;
  if (sharing == RelationSharing::Fair) {
    std::vector<bool> related(topology.links().size(), false);
    for (const BandwidthRelation &relation : topology.relations())
      for (LinkId l : relation.links)
        related[l.index()] = true;
    for (size_t l = 0; l < related.size(); ++l) {
      if (related[l])
        continue;
      const Link &link = topology.links()[l];
      d.relations.push_back({fmt::format("link {}->{}", topology.vertex_name(link.src),
                                         topology.vertex_name(link.dst)),
                             {{link.src, link.dst}},
                             link.capacity,
                             RelationSharing::Fair});
    }
  }
  return Topology::create(std::move(d));
}

std::vector<TopologyLibraryEntry> topology_library() {
  return {
      {"line", "-n N", "N ranks in a line, bidirectional links"},
      {"ring", "-n N [--unidirectional]", "N ranks in a ring (bidirectional unless asked)"},
      {"fully_connected", "-n N", "a direct link between every pair of N ranks"},
      {"star", "-n N", "rank 0 linked to each of the N-1 others"},
      {"hub_and_spoke", "-n N", "N ranks behind a switch: one chunk per round in and out"},
      {"hypercube", "--dims D", "2^D ranks, linked where their ids differ in one bit"},
      {"mesh2d", "--shape WxH", "W x H grid without wrap-around"},
      {"torus2d", "--shape WxH", "W x H grid with wrap-around"},
      {"torus3d", "--shape XxYxZ", "X x Y x Z grid with wrap-around"},
      {"mesh3d", "--shape XxYxZ", "X x Y x Z grid without wrap-around"},
      {"dgx1", "", "8 V100, NVLink hybrid cube-mesh (SCCL's link multiplicities)"},
      {"dgx2", "", "16 V100 behind NVSwitch (SCCL's HubAndSpoke(16))"},
      {"amd4", "", "4 MI50 in the ring 0-1-3-2 (SCCL's AMD4)"},
      {"amd8", "", "Gigabyte Z52 with 8 MI50 (SCCL's AMD8 weights)"},
      {"dgx_a100", "", "8 A100 behind NVSwitch, 12 NVLinks per GPU"},
      {"hgx_a100_4", "", "4 A100 SXM4, 4 NVLinks between every pair (HGX A100 4-GPU)"},
      {"dgx_h100", "", "8 H100 behind NVSwitch, 18 NVLinks per GPU"},
      {"dgx_b200", "", "8 B200 behind NVSwitch, 18 NVLinks of 50 GB/s per GPU"},
      {"gb200_nvl72", "", "GB200 NVL72: 72 B200 (18 trays of 4) in one NVLink domain"},
      {"mi250x", "",
       "4 AMD MI250X (Frontier's node): 8 GCDs in a cube of xGMI links, 4 of 50 GB/s inside "
       "a package, one between packages"},
      {"mi300x", "", "8 AMD MI300X, one xGMI link of 64 GB/s between every pair"},
      {"mi355x", "", "8 AMD MI355X, one xGMI link of 76.8 GB/s between every pair"},
      {"ndv2", "", "Azure NDv2: DGX-1 NVLink mesh and one 100 Gb/s NIC"},
      {"multinode",
       "--nodes N --gpus G [--intra T] [--nics K] [--nic-bandwidth GBPS] [--nodes-per-leaf L "
       "--oversubscription R]",
       "N nodes of G GPUs (intra-node topology T, default fully_connected) joined by K NICs "
       "per node (default 1) of GBPS GB/s each (default 25), every GPU linked to every GPU of "
       "the other nodes; with L and R, groups of L nodes whose links to other groups share "
       "1/R of their NIC bandwidth (an oversubscribed fat tree unwound to links)"},
      {"fat_tree",
       "--nodes N --gpus G [--intra T] [--nics K] [--nic-bandwidth GBPS] [--tiers 2|3] "
       "[--nodes-per-leaf L] [--leaves-per-pod P] [--oversubscription R] [--rails]",
       "N nodes of G GPUs whose K NICs each (default 1, GBPS default 25) hang off a fat tree of "
       "switches: leaves of L nodes (default 4), spines (2 tiers, the default) or pods of P "
       "leaves (default 16) under a core (3 tiers); uplinks carry a leaf's NIC bandwidth / R "
       "(default 1); --rails: rail-optimized, a leaf per NIC index in each group of L nodes"},
  };
}

Expected<Topology> make_library_topology(std::string_view name, const TopologyParams &p) {
  const std::string key = name_key(name);
  // Which parameters each topology takes; any other that was given is a usage error.
  struct Uses {
    bool n = false, dims = false, shape = false, multinode = false, direction = false,
         fabric = false, leaf_groups = false;
  };
  static const std::map<std::string, Uses> kUses = {
      {"line", {.n = true}},
      {"ring", {.n = true, .direction = true}},
      {"fullyconnected", {.n = true}},
      {"star", {.n = true}},
      {"hubandspoke", {.n = true}},
      {"hypercube", {.dims = true}},
      {"mesh2d", {.shape = true}},
      {"torus2d", {.shape = true}},
      {"torus3d", {.shape = true}},
      {"mesh3d", {.shape = true}},
      {"dgx1", {}},
      {"dgx2", {}},
      {"amd4", {}},
      {"amd8", {}},
      {"dgxa100", {}},
      {"hgxa1004", {}},
      {"dgxh100", {}},
      {"dgxb200", {}},
      {"gb200nvl72", {}},
      {"mi250x", {}},
      {"mi300x", {}},
      {"mi355x", {}},
      {"ndv2", {}},
      {"multinode", {.multinode = true, .leaf_groups = true}},
      {"fattree", {.multinode = true, .fabric = true, .leaf_groups = true}},
  };
  auto it = kUses.find(key);
  if (it == kUses.end()) {
    std::string known;
    for (const auto &e : topology_library())
      known += (known.empty() ? "" : ", ") + e.name;
    return fail({}, fmt::format("unknown topology '{}' (known: {})", name, known));
  }
  const Uses &uses = it->second;
  auto reject = [&](bool given, bool used, const char *option) -> Expected<void> {
    if (given && !used)
      return fail({}, fmt::format("topology '{}' does not take {}", name, option));
    return {};
  };
  for (auto check :
       {reject(p.n.has_value(), uses.n, "-n"), reject(p.dims.has_value(), uses.dims, "--dims"),
        reject(p.shape.has_value(), uses.shape, "--shape"),
        reject(p.nodes.has_value(), uses.multinode, "--nodes"),
        reject(p.gpus.has_value(), uses.multinode, "--gpus"),
        reject(p.intra.has_value(), uses.multinode, "--intra"),
        reject(p.nics.has_value(), uses.multinode, "--nics"),
        reject(p.nic_bandwidth_gbps.has_value(), uses.multinode, "--nic-bandwidth"),
        reject(p.unidirectional, uses.direction, "--unidirectional"),
        reject(p.tiers.has_value(), uses.fabric, "--tiers"),
        reject(p.nodes_per_leaf.has_value(), uses.leaf_groups, "--nodes-per-leaf"),
        reject(p.leaves_per_pod.has_value(), uses.fabric, "--leaves-per-pod"),
        reject(p.oversubscription.has_value(), uses.leaf_groups, "--oversubscription"),
        reject(p.rails, uses.fabric, "--rails")})
    if (!check)
      return tl::unexpected(check.error());

  auto need = [&](const std::optional<int> &v, const char *option) -> Expected<int> {
    if (!v)
      return fail({}, fmt::format("topology '{}' needs {}", name, option));
    return *v;
  };
  auto need_shape = [&](size_t dims) -> Expected<std::vector<int>> {
    if (!p.shape)
      return fail({}, fmt::format("topology '{}' needs --shape with {} sides", name, dims));
    if (p.shape->size() != dims)
      return fail({}, fmt::format("topology '{}' needs --shape with {} sides, got {}", name, dims,
                                  p.shape->size()));
    return *p.shape;
  };
  if (uses.n) {
    auto n = need(p.n, "-n");
    if (!n)
      return tl::unexpected(n.error());
    if (key == "line")
      return line(*n);
    if (key == "ring")
      return ring(*n, !p.unidirectional);
    if (key == "fullyconnected")
      return fully_connected(*n);
    if (key == "star")
      return star(*n);
    return hub_and_spoke(*n);
  }
  if (uses.dims) {
    auto d = need(p.dims, "--dims");
    if (!d)
      return tl::unexpected(d.error());
    return hypercube(*d);
  }
  if (uses.shape) {
    auto s = need_shape(key == "torus3d" || key == "mesh3d" ? 3 : 2);
    if (!s)
      return tl::unexpected(s.error());
    if (key == "mesh2d")
      return mesh2d((*s)[0], (*s)[1]);
    if (key == "torus2d")
      return torus2d((*s)[0], (*s)[1]);
    if (key == "mesh3d")
      return mesh3d((*s)[0], (*s)[1], (*s)[2]);
    return torus3d((*s)[0], (*s)[1], (*s)[2]);
  }
  if (uses.multinode) {
    auto nodes = need(p.nodes, "--nodes");
    if (!nodes)
      return tl::unexpected(nodes.error());
    auto gpus = need(p.gpus, "--gpus");
    if (!gpus)
      return tl::unexpected(gpus.error());
    std::string intra_name = p.intra.value_or("fully_connected");
    if (name_key(intra_name) == "multinode" || name_key(intra_name) == "fattree")
      return fail({}, fmt::format("{} cannot nest a multi-node topology", name));
    TopologyParams intra_params;
    const auto &intra_uses = kUses.find(name_key(intra_name));
    if (intra_uses != kUses.end() && intra_uses->second.n)
      intra_params.n = *gpus;
    auto intra = make_library_topology(intra_name, intra_params);
    if (!intra)
      return tl::unexpected(intra.error());
    if (intra->num_ranks() != *gpus)
      return fail({}, fmt::format("intra-node topology '{}' has {} ranks, but --gpus is {}",
                                  intra_name, intra->num_ranks(), *gpus));
    if (uses.fabric) {
      FatTree fabric;
      fabric.nics_per_node = p.nics.value_or(1);
      fabric.nic_bandwidth = BytesPerNs{p.nic_bandwidth_gbps.value_or(25.0)};
      fabric.tiers = p.tiers.value_or(fabric.tiers);
      fabric.nodes_per_leaf = p.nodes_per_leaf.value_or(fabric.nodes_per_leaf);
      fabric.leaves_per_pod = p.leaves_per_pod.value_or(fabric.leaves_per_pod);
      fabric.oversubscription = p.oversubscription.value_or(fabric.oversubscription);
      fabric.rails = p.rails;
      return fat_tree(*nodes, *intra, fabric);
    }
    std::optional<LeafGroups> groups;
    if (p.nodes_per_leaf || p.oversubscription)
      groups = LeafGroups{p.nodes_per_leaf.value_or(*nodes), p.oversubscription.value_or(1.0)};
    return multinode(*nodes, *intra, p.nics.value_or(1),
                     BytesPerNs{p.nic_bandwidth_gbps.value_or(25.0)}, groups);
  }
  if (key == "dgx1")
    return dgx1();
  if (key == "dgx2")
    return dgx2();
  if (key == "amd4")
    return amd4();
  if (key == "amd8")
    return amd8();
  if (key == "dgxa100")
    return dgx_a100();
  if (key == "hgxa1004")
    return hgx_a100_4();
  if (key == "dgxh100")
    return dgx_h100();
  if (key == "dgxb200")
    return dgx_b200();
  if (key == "gb200nvl72")
    return gb200_nvl72();
  if (key == "mi250x")
    return mi250x();
  if (key == "mi300x")
    return mi300x();
  if (key == "mi355x")
    return mi355x();
  return ndv2();
}

} // namespace syncoll
