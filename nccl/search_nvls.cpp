// NCCL's NVLS graph search (search.cc: ncclTopoCompute with NCCL_TOPO_PATTERN_NVLS,
// ncclTopoSearchTryNvls, ncclTopoCompareGraphs), on syncoll's machine: a GPU's NVSwitch port is
// the bandwidth relation over its NVLinks (or its link to a dumped node's "nvswitch" vertex),
// at NCCL's graph rate per NVLink.
#include "model/topology_library.h"
#include "nccl/search.h"

#include <algorithm>

namespace syncoll::nccl {
namespace {

// Every GPU of node 0's NVSwitch port, each way, GB/s of NCCL's graph.
struct SwitchPorts {
  std::vector<double> out;
  std::vector<double> in;
};

bool is_nvswitch(const Topology &t, RankId v) {
  return t.is_switch(v) && node_local_name(t.vertex_name(v)) == "nvswitch";
}

// A GPU's port: its NVLinks to the node's other GPUs (or to the node's NVSwitch vertex), capped
// by any relation that holds only links leaving it (entering it).
SwitchPorts switch_ports(const Topology &t, int gpus, const GenerationTraits &g) {
  const std::vector<double> link_gbps = nccl_link_gbps(t, g);
  auto gbps = [&](const Link &l, LinkId id) {
    return t.is_switch(l.src) || t.is_switch(l.dst)
               ? l.bandwidth.value / g.nvlink_line_gbps * g.nccl_nvlink_gbps
               : link_gbps[id.index()];
  };
  auto in_node0 = [&](RankId v) { return !t.is_switch(v) && v.value() < gpus; };
  // A hop through node 0's switch: GPU to GPU of the node, or to or from its NVSwitch vertex.
  auto switch_hop = [&](const Link &l) {
    return (in_node0(l.src) || is_nvswitch(t, l.src)) && (in_node0(l.dst) || is_nvswitch(t, l.dst));
  };
  SwitchPorts p{std::vector<double>(size_t(gpus), 0), std::vector<double>(size_t(gpus), 0)};
  for (size_t i = 0; i < t.links().size(); ++i) {
    const Link &l = t.links()[i];
    if (!switch_hop(l))
      continue;
    if (in_node0(l.src))
      p.out[l.src.index()] += gbps(l, LinkId(int(i)));
    if (in_node0(l.dst))
      p.in[l.dst.index()] += gbps(l, LinkId(int(i)));
  }
  for (const BandwidthRelation &rel : t.relations()) {
    if (rel.links.empty())
      continue;
    double per_unit = 1e300;
    for (LinkId id : rel.links)
      per_unit = std::min(per_unit, gbps(t.link(id), id) / t.link(id).capacity);
    const double cap = per_unit * rel.capacity;
    const RankId src = t.link(rel.links.front()).src, dst = t.link(rel.links.front()).dst;
    auto all = [&](auto pred) { return std::all_of(rel.links.begin(), rel.links.end(), pred); };
    // A NIC's relation holds network links: not a switch port.
    if (!all([&](LinkId id) { return switch_hop(t.link(id)); }))
      continue;
    if (in_node0(src) && all([&](LinkId id) { return t.link(id).src == src; }))
      p.out[src.index()] = std::min(p.out[src.index()], cap);
    if (in_node0(dst) && all([&](LinkId id) { return t.link(id).dst == dst; }))
      p.in[dst.index()] = std::min(p.in[dst.index()], cap);
  }
  return p;
}

// The nearest GPU of NIC n (ncclTopoGetLocalGpu), GPU g's NIC being g x NICs / GPUs: the first
// GPU of the NIC's share, or where NICs outnumber GPUs the GPU the NIC sits by.
int local_gpu(int nic, int nics, int gpus) {
  return nics <= gpus ? (nic * gpus + nics - 1) / nics : nic * gpus / nics;
}

// Channels placed one by one at `intra` through the switch ports: a channel's head takes twice
// `intra` through its port both ways, every other GPU once. On one node channel c's head is GPU
// c; across nodes channel c tries NIC c, c + 1, ... and takes the first whose GPU is no head yet
// and whose port carries it (each NIC carries one channel at `inter`, which it must hold).
NcclNvlsGraph place(const SwitchPorts &ports, int gpus, int nics, bool across, int max_channels,
                    double intra, double inter, double nic_gbps) {
  NcclNvlsGraph out{{}, {}, intra, inter};
  if (across && inter > nic_gbps + 1e-9)
    return out;
  SwitchPorts left = ports;
  auto need = [&](int d, int head) { return intra * (d == head ? 2 : 1); };
  auto fits = [&](int head) {
    for (int d = 0; d < gpus; ++d)
      if (left.out[size_t(d)] + 1e-9 < need(d, head) || left.in[size_t(d)] + 1e-9 < need(d, head))
        return false;
    return true;
  };
  auto take = [&](int head) {
    for (int d = 0; d < gpus; ++d) {
      left.out[size_t(d)] -= need(d, head);
      left.in[size_t(d)] -= need(d, head);
    }
  };
  const int limit = across ? std::min(max_channels, nics) : max_channels;
  for (int c = 0; c < limit; ++c) {
    std::optional<std::pair<int, int>> chosen; // head, NIC
    if (!across) {
      if (fits(c))
        chosen = {c, -1};
    } else {
      for (int k = 0; k < nics && !chosen; ++k) {
        const int nic = (c + k) % nics;
        const int head = local_gpu(nic, nics, gpus);
        const bool taken =
            std::find(out.heads.begin(), out.heads.end(), RankId(head)) != out.heads.end();
        if (!taken && fits(head))
          chosen = {head, nic};
      }
    }
    if (!chosen)
      break;
    take(chosen->first);
    out.heads.emplace_back(chosen->first);
    if (across)
      out.nics.push_back(chosen->second);
  }
  return out;
}

} // namespace

std::optional<NcclNvlsGraph> nccl_search_nvls(const Topology &t, const GenerationTraits &g) {
  const Hierarchy &h = t.hierarchy();
  const int gpus = h.empty() ? t.num_ranks() : h.levels.back().size;
  const bool across = t.num_ranks() > gpus;
  if (g.nccl_nvls_efficiency <= 0 || gpus < 2)
    return std::nullopt;
  const int nics = std::max(1, h.nics_per_node);
  const double nic_gbps = h.nic_bandwidth.value;
  const SwitchPorts ports = switch_ports(t, gpus, g);
  const std::span<const double> speeds = across ? g.nccl_inter_speeds : g.nccl_intra_speeds;
  const int max_channels = std::min(kNcclMaxNvlsHeads, gpus);
  // On one node NVLS pulls evenly from every GPU: every GPU heads a channel or none runs.
  const int min_channels = across ? 1 : max_channels;
  double port_gbps = 0;
  double widest_path = 0;
  for (int d = 0; d < gpus; ++d) {
    port_gbps = std::max({port_gbps, ports.out[size_t(d)], ports.in[size_t(d)]});
    widest_path = std::max(widest_path, std::min(ports.out[size_t(d)], ports.in[size_t(d)]));
  }
  // Pass 1 starts at the fastest speed a path holds and the channels' least count fits in the
  // port (a pattern other than a ring counts it gpus / (gpus - 1) times).
  const double max_path = across ? nic_gbps : widest_path;
  size_t i = 0;
  while (i + 1 < speeds.size() &&
         (speeds[i] > max_path || speeds[i] * min_channels > port_gbps * gpus / (gpus - 1.0)))
    ++i;
  NcclNvlsGraph best;
  // More heads are better (each pulls its share from the switch), then more total speed.
  auto keep = [&](NcclNvlsGraph found) {
    const int n = found.channels();
    if (n >= min_channels &&
        (n > best.channels() || n * found.inter_gbps > best.channels() * best.inter_gbps))
      best = std::move(found);
  };
  for (;;) {
    keep(place(ports, gpus, nics, across, max_channels, speeds[i], speeds[i], nic_gbps));
    if (best.channels() == max_channels || best.channels() * best.inter_gbps >= port_gbps)
      break;
    // Slower speeds while they are not under half the best one found.
    if (i + 1 < speeds.size() && (best.channels() == 0 || speeds[i + 1] / best.inter_gbps > 0.49))
      ++i;
    else
      break;
  }
  if (best.channels() == 0)
    return std::nullopt;
  // Pass 2: the same heads, the inter-node speed raised a step at a time while the last raise
  // held and it is under twice the intra-node speed. (NCCL then tries the intra-node speed up,
  // which its comparison never keeps: the channels and inter-node speed are the same.)
  i = 0;
  while (i + 1 < speeds.size() && speeds[i] > best.inter_gbps)
    ++i;
  double tried = speeds[i];
  while (i > 0 && tried == best.inter_gbps && tried < 2 * best.intra_gbps) {
    tried = speeds[--i];
    NcclNvlsGraph found =
        place(ports, gpus, nics, across, best.channels(), best.intra_gbps, tried, nic_gbps);
    if (found.channels() == best.channels())
      keep(std::move(found));
  }
  return best;
}

} // namespace syncoll::nccl
