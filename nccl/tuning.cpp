#include "nccl/tuning.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "nccl/algorithms.h"
#include "nccl/version.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

namespace syncoll::nccl {
namespace {

constexpr std::array<Protocol, 3> kProtocols{Protocol::LL, Protocol::LL128, Protocol::Simple};

// The channels a ring or tree call runs on (enqueue.cc): the tuning model prices every channel,
// at most 16 across nodes beside NVLS, then a small call drops channels while its bytes stay under
// channels x threads x the protocol's per-thread threshold, so that each thread has enough to move.
int call_channels(NcclAlgorithm algorithm, Protocol p, double bytes, const NcclTuningInput &in) {
  const ProtocolTraits &proto = protocol_traits(p);
  const bool ring_ll = algorithm == NcclAlgorithm::Ring && p == Protocol::LL;
  const double per_channel =
      double(proto.nccl_max_threads) * proto.nccl_thread_threshold * (ring_ll ? in.ranks : 1);
  int channels = in.ring->runtime_channels();
  // Across nodes beside NVLS (enabled on NVSwitch nodes), NVLS's buffers and SMs leave rings and
  // trees fewer channels (kNcclRingChannelsBesideNvls, measured).
  if (in.nvls && in.nodes > 1)
    channels = std::min(channels, kNcclRingChannelsBesideNvls);
  while (channels > 1 && bytes < channels * per_channel)
    --channels;
  return channels;
}

// The row of NCCL's CPU-dependent constants a machine takes: 1 for x86 AMD hosts, else 0.
size_t amd_host(const NcclTuningInput &in) {
  switch (in.host_cpu) {
  case HostCpu::Amd:
    return 1;
  case HostCpu::Intel:
  case HostCpu::Arm:
    return 0;
  }
  SYNCOLL_UNREACHABLE("a host CPU without a row");
}

std::optional<NcclEstimate> ring(CollectiveKind kind, double bytes, Protocol p,
                                 const NcclTuningInput &in) {
  const int n = in.ranks;
  const bool ar = kind == CollectiveKind::Allreduce;
  const bool ag_rs = kind == CollectiveKind::Allgather || kind == CollectiveKind::ReduceScatter;
  const bool rooted = kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
  if (!ar && !ag_rs && !rooted)
    return std::nullopt;
  const GenerationTraits &g = *in.generation;
  const ProtocolTraits &proto = protocol_traits(p);
  const int steps = nccl_ring_steps(kind, n);
  const int inter_steps = in.nodes == 1 ? 0 : ar ? 2 * (in.nodes - 1) : in.nodes - 1;
  const double net_overhead =
      in.nodes == 1 ? 0 : (p == Protocol::Simple ? 3.0 : 1.0) * kNcclNetOverheadUs[amd_host(in)];
  double lat = proto.nccl_ring_base_latency_us;
  if (rooted)
    lat += proto.nccl_ring_nvlink_hop_us;
  else
    lat += (steps - inter_steps) * std::max(proto.nccl_ring_nvlink_hop_us, net_overhead) +
           inter_steps * proto.nccl_ring_net_hop_us;
  // Across nodes a ring channel crosses a NIC at every node: its speed is the NIC's share.
  const int channels = in.ring->channels();
  double bus = channels * (in.nodes == 1 ? in.ring->intra_gbps : in.ring->inter_gbps);
  if (p == Protocol::LL)
    bus = std::min(in.nodes == 1 ? g.nccl_ll_max_gbps
                                 : kNcclLlMaxMultiNodeGbps[amd_host(in)][in.nodes > 2],
                   bus * 0.5);
  if (p == Protocol::LL128)
    bus = std::min(bus * proto.nccl_tuning_bandwidth_factor,
                   channels * g.nccl_ring_ll128_channel_gbps);
  if (ar && p == Protocol::Simple && in.nodes > 1 && bytes / (channels * n) >= 64)
    lat *= g.generation >= GpuGeneration::Ampere ? 1.4 : 1.9;
  const double alg = rooted ? bus : bus * n / steps;
  return NcclEstimate{
      NcclAlgorithm::Ring,       p, call_channels(NcclAlgorithm::Ring, p, bytes, in), lat, bus,
      lat + bytes / (1000 * alg)};
}

std::optional<NcclEstimate> tree(CollectiveKind kind, double bytes, Protocol p,
                                 const NcclTuningInput &in) {
  if (kind != CollectiveKind::Allreduce)
    return std::nullopt;
  const GenerationTraits &g = *in.generation;
  const size_t pi = static_cast<size_t>(p);
  const ProtocolTraits &proto = protocol_traits(p);
  const int ppn = in.ranks / in.nodes;
  const double intra = proto.nccl_tree_nvlink_hop_us, inter = proto.nccl_tree_net_hop_us;
  const double lat = proto.nccl_tree_base_latency_us +
                     2 * ((ppn - 1) * intra + std::log2(double(in.nodes)) * inter);
  const int channels = in.ring->channels();
  const size_t scale = size_t(std::min(in.nodes, 3) - 1); // NCCL's N1, N2 and N4 columns
  double bus = channels * (in.nodes <= 2 ? in.ring->intra_gbps : in.ring->inter_gbps);
  bus = std::min(bus * 0.92, channels * g.nccl_tree_channel_gbps[scale]);
  if (p == Protocol::LL)
    bus = std::min(bus / 3.8, in.nodes == 1 ? g.nccl_ll_max_gbps
                                            : kNcclLlMaxMultiNodeGbps[amd_host(in)][in.nodes > 2]);
  if (p == Protocol::LL128)
    bus = std::min(bus * (in.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   channels * g.nccl_tree_ll128_channel_gbps[scale]);
  if (in.tree_pattern == NcclTreePattern::Tree)
    bus *= 0.85;
  const int bucket = std::clamp(int(std::floor(std::log2(std::max(1.0, bytes / 64)))), 0, 23);
  const double alg = bus * 0.5 * kNcclTreeCorrection[pi][size_t(bucket)];
  return NcclEstimate{
      NcclAlgorithm::Tree,       p, call_channels(NcclAlgorithm::Tree, p, bytes, in), lat, bus,
      lat + bytes / (1000 * alg)};
}

// The channels NVLS and NVLS tree run on: NCCL counts a communicator as multi-node where its
// ranks span NVLink domains (hosts, or cliques of a multi-node NVLink rack), the model's nodes.
int nvls_channels(const NcclTuningInput &in) {
  return in.generation->nccl_nvls_channels[in.nodes > 1 ? 1 : 0];
}

// NVLS: inside one node, AllReduce, AllGather and ReduceScatter in the switch, costed on NVLS's
// graph: a channel per head at its switch speed (one head's channel of the reduction idle).
// NCCL's formula also caps a head at the graph's inter-node speed; on one node no network is
// crossed and the model leaves that cap out (docs/nccl.md, "The NVLS graph", says what it
// matches). Across nodes (AllReduce only, with CollNet enabled) NVLS inside each node and the
// network's switches reducing between them, an NVLS head's channel per NIC at the network speed
// at most, costed on the ring graph's channels and speed (so is NVLS tree; below).
std::optional<NcclEstimate> nvls(CollectiveKind kind, double bytes, Protocol p,
                                 const NcclTuningInput &in) {
  const bool ar = kind == CollectiveKind::Allreduce;
  const bool across = in.nodes > 1;
  if (!in.nvls || p != Protocol::Simple || (across && !(in.collnet && ar)) ||
      !(ar || kind == CollectiveKind::Allgather || kind == CollectiveKind::ReduceScatter))
    return std::nullopt;
  if (!across && (!in.nvls_graph || in.nvls_graph->channels() < 2))
    return std::nullopt;
  const GenerationTraits &g = *in.generation;
  const int n = in.ranks;
  const int local = n / in.nodes;
  const int channels = across ? in.ring->channels() : in.nvls_graph->channels();
  const double speed = across ? in.ring->intra_gbps : in.nvls_graph->intra_gbps;
  const double per_channel = speed * g.nccl_nvls_efficiency * (channels - 1.0) / channels *
                             (ar ? 2.0 : (local - 1.0) / local);
  double bus = channels * per_channel;
  if (across)
    bus = std::min(bus, in.nics_per_node * std::min(per_channel, in.collnet_gbps));
  const double alg = ar ? bus * n / (2.0 * (n - 1)) : bus;
  const double lat = kNcclNvlsLatencyUs + (across ? kNcclNvlsNetHopUs : 0);
  return NcclEstimate{NcclAlgorithm::Nvls,       p, nvls_channels(in), lat, bus,
                      lat + bytes / (1000 * alg)};
}

// CollNet's graph: one channel per NIC rail (the SHARP plugin opens one aggregation flow per
// rail), each at the network speed a whole NIC sustains; both algorithms take at most 8 GPUs a
// node.
bool collnet_runs(const NcclTuningInput &in, Protocol p) {
  return in.collnet && in.nodes > 1 && p == Protocol::Simple &&
         in.ranks / in.nodes <= kNcclCollNetMaxLocalRanks && in.nics_per_node > 0;
}
int collnet_channels(const NcclTuningInput &in) {
  return std::min(in.nics_per_node, in.ranks / in.nodes);
}
// The network's latency beneath CollNet: with one GPU a node nothing hides it, and NCCL prices it
// as its tree's network hop.
double collnet_net_us(const NcclTuningInput &in, double collnet_us) {
  return in.ranks == in.nodes ? protocol_traits(Protocol::Simple).nccl_tree_net_hop_us : collnet_us;
}

// CollNet Direct (NVSwitch nodes): every GPU scatters its buffer to the node's heads, one per NIC,
// each head's share is reduced in the network and broadcast back; AllGather and ReduceScatter
// (from 2.20) send each GPU's part through its own NIC, so they need a NIC per GPU.
std::optional<NcclEstimate> collnet_direct(CollectiveKind kind, double bytes, Protocol p,
                                           const NcclTuningInput &in) {
  const bool ar = kind == CollectiveKind::Allreduce;
  const bool gather_scatter =
      kind == CollectiveKind::Allgather || kind == CollectiveKind::ReduceScatter;
  if (!collnet_runs(in, p) || !in.nvswitch || !(ar || gather_scatter))
    return std::nullopt;
  const double local = double(in.ranks) / in.nodes;
  if (gather_scatter &&
      (in.version.minor < kNcclCollNetGatherScatterSinceMinor || in.nics_per_node < int(local)))
    return std::nullopt;
  const int channels = collnet_channels(in);
  double bus;
  double alg;
  if (gather_scatter) {
    bus = local * 0.9 * in.collnet_gbps;
    alg = bus;
  } else {
    // Fewer NICs than GPUs: the heads carry the rest's traffic (NCCL's GPU:NIC ratio discount).
    const double ratio = local / channels;
    bus = channels * in.collnet_gbps / (ratio - (ratio - 1) / 2);
    if (in.generation->generation >= GpuGeneration::Hopper)
      bus *= kNcclCollNetDirectHopperFactor;
    alg = bus * 0.5;
  }
  const double lat = 2 * (std::min(1.0, local - 1) * kNcclCollNetDirectNvlinkUs +
                          (local - 1) * kNcclCollNetDirectArityUs) +
                     collnet_net_us(in, kNcclCollNetDirectNetUs);
  return NcclEstimate{NcclAlgorithm::CollNetDirect, p, channels, lat, bus,
                      lat + bytes / (1000 * alg)};
}

// CollNet Chain: AllReduce up a chain of the node's GPUs to a head that the network reduces
// through, and back down the chain. Every chain crosses every GPU's NVLinks, so the channels'
// speeds together fit in what the ring search found a GPU's NVLinks carry.
std::optional<NcclEstimate> collnet_chain(CollectiveKind kind, double bytes, Protocol p,
                                          const NcclTuningInput &in) {
  if (!collnet_runs(in, p) || kind != CollectiveKind::Allreduce)
    return std::nullopt;
  const int channels = collnet_channels(in);
  const double nvlink_share = in.ring->intra_gbps * in.ring->channels() / channels;
  const double bus =
      channels * nccl_net_speed(*in.generation, std::min(in.collnet_gbps, nvlink_share));
  const double lat = 2 * (in.ranks / in.nodes - 1) * kNcclCollNetChainNvlinkUs +
                     collnet_net_us(in, kNcclCollNetChainNetUs);
  return NcclEstimate{NcclAlgorithm::CollNetChain,     p, channels, lat, bus,
                      lat + bytes / (1000 * bus * 0.5)};
}

// NVLS tree (NCCL 2.18 and later): AllReduce across nodes with NVLS inside each node and a
// double binary tree between nodes. Its channel is capped by NVLS's rate inside the node, by the
// network's (doubled on two nodes, where each node is the root of one tree) and by
// perChMaxNVLSTreeBw. NCCL costs it on NVLS's graph; the model, on the ring graph's channels and
// speeds, against which its rings and trees across nodes are costed too (docs/nccl.md, "The NVLS
// graph", says why).
std::optional<NcclEstimate> nvls_tree(CollectiveKind kind, double bytes, Protocol p,
                                      const NcclTuningInput &in) {
  if (!in.nvls || in.nodes < 2 || p != Protocol::Simple || kind != CollectiveKind::Allreduce)
    return std::nullopt;
  const GenerationTraits &g = *in.generation;
  const int n = in.ranks;
  const int channels = in.ring->channels();
  const double intra =
      in.ring->intra_gbps * g.nccl_nvls_efficiency * (channels - 1.0) / channels * 2.0;
  const double inter = in.ring->inter_gbps * (in.nodes <= 2 ? 2.0 : 1.0);
  const double bus =
      channels * std::min({intra, inter, g.nccl_nvls_tree_channel_gbps[in.nodes > 2 ? 1 : 0]});
  const double alg = bus * n / (2.0 * (n - 1));
  const double lat = kNcclNvlsLatencyUs + 2 * std::log2(double(in.nodes)) * kNcclNvlsTreeNetHopUs;
  return NcclEstimate{NcclAlgorithm::NvlsTree,   p, nvls_channels(in), lat, bus,
                      lat + bytes / (1000 * alg)};
}

std::optional<NcclEstimate> pat(CollectiveKind kind, double bytes, Protocol p,
                                const NcclTuningInput &in) {
  // NCCL runs PAT for AllGather and ReduceScatter with one GPU per node.
  if ((kind != CollectiveKind::Allgather && kind != CollectiveKind::ReduceScatter) ||
      in.ranks != in.nodes || in.nodes < 2 || p != Protocol::Simple)
    return std::nullopt;
  const double lat = kNcclPatBaseUs + std::log2(double(in.nodes)) * kNcclPatNetHopUs / 3.5 +
                     in.ranks * kNcclPatPerRankUs;
  const double bus = in.ring->channels() * in.ring->inter_gbps * 0.75;
  return NcclEstimate{NcclAlgorithm::Pat,        p, in.ring->runtime_channels(), lat, bus,
                      lat + bytes / (1000 * bus)};
}

// NCCL's Alltoall is grouped point-to-point on its 32 point-to-point channels, which the tuning
// model does not cost. A connection uses LL up to NCCL_P2P_LL_THRESHOLD (16 KiB) per peer and
// Simple above; network connections have no LL buffers (NCCL_ALLOC_P2P_NET_LL_BUFFERS is off), so
// across nodes the call runs Simple at every size. Simple is always listed, after LL, so that
// NCCL_PROTO=Simple still finds it while the default takes LL where NCCL would.
std::optional<NcclEstimate> p2p(CollectiveKind kind, double bytes, Protocol p,
                                const NcclTuningInput &in) {
  if (kind != CollectiveKind::Alltoall)
    return std::nullopt;
  const bool ll = in.nodes == 1 && bytes / in.ranks <= 16384;
  if (p == Protocol::LL128 || (p == Protocol::LL && !ll))
    return std::nullopt;
  return NcclEstimate{NcclAlgorithm::P2p, p, 32, 0, 0, 0};
}

} // namespace

NcclTreePattern nccl_searched_tree_pattern(GpuGeneration generation, int gpus_per_node,
                                           int nics_per_node) {
  switch (generation) {
  case GpuGeneration::Hopper:
  case GpuGeneration::Blackwell:
    return nics_per_node >= gpus_per_node ? NcclTreePattern::Tree : NcclTreePattern::BalancedTree;
  case GpuGeneration::Volta:
  case GpuGeneration::Ampere:
  case GpuGeneration::Cdna2:
  case GpuGeneration::Cdna3:
  case GpuGeneration::Cdna4:
    return NcclTreePattern::BalancedTree;
  }
  SYNCOLL_UNREACHABLE("a GPU generation without a tree pattern");
}

std::string_view nccl_algorithm_name(NcclAlgorithm algorithm) {
  switch (algorithm) {
  case NcclAlgorithm::Ring:
    return "RING";
  case NcclAlgorithm::Tree:
    return "TREE";
  case NcclAlgorithm::Nvls:
    return "NVLS";
  case NcclAlgorithm::NvlsTree:
    return "NVLSTREE";
  case NcclAlgorithm::Pat:
    return "PAT";
  case NcclAlgorithm::CollNetDirect:
    return "COLLNET_DIRECT";
  case NcclAlgorithm::CollNetChain:
    return "COLLNET_CHAIN";
  case NcclAlgorithm::P2p:
    return "P2P";
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm without a name");
}

bool nccl_is_collnet(NcclAlgorithm algorithm) {
  switch (algorithm) {
  case NcclAlgorithm::CollNetDirect:
  case NcclAlgorithm::CollNetChain:
    return true;
  case NcclAlgorithm::Ring:
  case NcclAlgorithm::Tree:
  case NcclAlgorithm::Nvls:
  case NcclAlgorithm::NvlsTree:
  case NcclAlgorithm::Pat:
  case NcclAlgorithm::P2p:
    return false;
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm neither in nor out of the network's switches");
}

std::vector<NcclEstimate> nccl_estimates(CollectiveKind kind, double bytes,
                                         const NcclTuningInput &in) {
  SYNCOLL_INVARIANT(in.generation && in.ring && in.ranks >= 2 && in.nodes >= 1,
                    "NCCL tuning without a machine");
  std::vector<NcclEstimate> out;
  for (auto estimate : {tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat, p2p})
    for (Protocol p : kProtocols)
      if (auto e = estimate(kind, bytes, p, in); e && nccl_has_algorithm(in.version, e->algorithm))
        out.push_back(*e);
  return out;
}

std::optional<NcclEstimate> nccl_choose(CollectiveKind kind, double bytes,
                                        const NcclTuningInput &in,
                                        std::optional<NcclAlgorithm> only) {
  std::optional<NcclEstimate> best;
  for (const NcclEstimate &e : nccl_estimates(kind, bytes, in))
    if ((!only || e.algorithm == *only) && (!best || e.time_us < best->time_us))
      best = e;
  return best;
}

std::string nccl_info_line(CollectiveKind kind, double bytes, const NcclEstimate &c) {
  const CollectiveTraits &traits = collective_traits(kind);
  return fmt::format("{}: {:.0f} Bytes -> Algo {} proto {} channels {} time {:.2f}",
                     traits.nccl_name.empty() ? traits.name : traits.nccl_name, bytes,
                     nccl_algorithm_name(c.algorithm), protocol_traits(c.protocol).name, c.channels,
                     c.time_us);
}

} // namespace syncoll::nccl
