#include "simulator/system_model.h"

#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "model/topology_library.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace syncoll::simulator {
namespace {

Picoseconds us_to_ps(double us) {
  return std::llround(us * 1e6);
}

// The node's NVLinks at the line rate of `g`: a row whose rate differs from the table's (a what-if
// study's faster NVLink) scales the library topology's links by the ratio.
Expected<Topology> node_topology(const SystemPreset &preset, int gpus, const GenerationTraits &g) {
  SYNCOLL_TRY(library, make_library_topology(preset.node_topology, {}));
  const double scale = g.nvlink_line_gbps / generation_traits(preset.generation).nvlink_line_gbps;
  TopologyDraft scaled = library.to_draft();
  for (Link &l : scaled.links)
    l.bandwidth = BytesPerNs{l.bandwidth.value * scale};
  SYNCOLL_TRY(full, Topology::create(std::move(scaled)));
  if (gpus == full.num_ranks())
    return full;
  if (full.relations().empty()) {
    // A fixed mesh (DGX-1's hybrid cube-mesh): the first `gpus` GPUs and the NVLinks among them,
    // what CUDA_VISIBLE_DEVICES=0,..,K-1 shows NCCL; pairs left without an NVLink reach each
    // other through the host (add_host_paths), as NCCL's search finds them.
    SYNCOLL_INVARIANT(full.num_switches() == 0, "a fixed NVLink mesh has no switches");
    TopologyDraft first = full.to_draft();
    first.name = fmt::format("{}_first{}", full.name(), gpus);
    first.num_ranks = gpus;
    std::erase_if(first.links,
                  [&](const Link &l) { return l.src.value() >= gpus || l.dst.value() >= gpus; });
    return Topology::create(std::move(first));
  }
  // Behind an NVSwitch any subset is the same switch with fewer ports in use.
  const int links_per_gpu = full.relations().front().capacity;
  return nvswitch_node(std::string(preset.node_topology), gpus, links_per_gpu, g.nvlink_line_gbps);
}

// The host's CPU sockets: one where the preset names no links between sockets, else two.
int host_sockets(const SystemPreset &preset) {
  return preset.socket_links == 0 ? 1 : 2;
}

// The socket GPU `gpu` of a node hangs off: the first and second half of the whole node's GPUs on
// two sockets (so a subset, the first K GPUs, keeps each GPU's own), all on one.
int socket_of(int gpu, const SystemPreset &preset) {
  return gpu * host_sockets(preset) / preset.gpus_per_node;
}

// GPUs of a node without an NVLink between them: a link through host memory for each such pair.
// Two sockets (DGX-1): per direction between them (the first and second half of the node's GPUs)
// one relation that all such paths share, as wide as the links joining the sockets. One socket
// (Frontier): each GPU's own link to it, per direction, one relation over its paths.
void add_host_paths(TopologyDraft &draft, int nodes, int gpus, const SystemPreset &preset) {
  const double gbps = preset.host_path_gbps;
  if (gbps <= 0)
    return;
  std::set<std::pair<int, int>> linked;
  for (const Link &l : draft.links)
    linked.emplace(l.src.value(), l.dst.value());
  const bool one_socket = host_sockets(preset) == 1;
  for (int node = 0; node < nodes; ++node) {
    std::vector<TopologyDraft::Relation> shared;
    if (one_socket) {
      for (int a = 0; a < gpus; ++a) {
        shared.push_back({fmt::format("node{}.gpu{}.to_host", node, a), {}, 1});
        shared.push_back({fmt::format("node{}.gpu{}.from_host", node, a), {}, 1});
      }
    } else {
      shared.push_back({fmt::format("node{}.socket0to1", node), {}, preset.socket_links});
      shared.push_back({fmt::format("node{}.socket1to0", node), {}, preset.socket_links});
    }
    for (int a = 0; a < gpus; ++a)
      for (int b = 0; b < gpus; ++b) {
        const int src = node * gpus + a, dst = node * gpus + b;
        if (a == b || linked.count({src, dst}))
          continue;
        // PCIe latency on each side of the host (NCCL's PCIe hop, 1 us).
        draft.links.push_back({RankId(src), RankId(dst), 1, Nanoseconds{1000}, BytesPerNs{gbps}});
        const std::pair<RankId, RankId> path{RankId(src), RankId(dst)};
        if (one_socket) {
          shared[size_t(2 * a)].links.push_back(path);
          shared[size_t(2 * b + 1)].links.push_back(path);
        } else if (socket_of(a, preset) != socket_of(b, preset)) {
          shared[a < b ? 0 : 1].links.push_back(path);
        }
      }
    for (auto &relation : shared)
      if (!relation.links.empty())
        draft.relations.push_back(std::move(relation));
  }
}

// The host as NCCL's search sees it: per node a vertex per socket (`cpu0`, and `cpu1` on two),
// each GPU's link to its socket and back at the host path's rate, and on two sockets the link
// between them as wide as the host paths they carry together (the first and second half of the
// node's GPUs on either). A GPU pair without a link of its own meets through them: NCCL's PATH_PHB
// on one socket, PATH_SYS across two, which its search takes only where the GPUs' own links find
// no graph (nccl/search.h). Programs take add_host_paths's links instead.
void add_host_sockets(TopologyDraft &draft, int nodes, int gpus, const SystemPreset &preset) {
  const double gbps = preset.host_path_gbps;
  if (gbps <= 0)
    return;
  const int sockets = host_sockets(preset);
  auto vertex = [&](int node, int socket) {
    return RankId(draft.num_ranks + node * sockets + socket);
  };
  for (int node = 0; node < nodes; ++node)
    for (int socket = 0; socket < sockets; ++socket)
      draft.switches.push_back(nodes > 1 ? fmt::format("node{}.cpu{}", node, socket)
                                         : fmt::format("cpu{}", socket));
  const Nanoseconds pcie{1000}; // NCCL's PCIe hop, 1 us, on each side of the host
  for (int node = 0; node < nodes; ++node) {
    for (int a = 0; a < gpus; ++a) {
      const RankId gpu(node * gpus + a), cpu = vertex(node, socket_of(a, preset));
      draft.links.push_back({gpu, cpu, 1, pcie, BytesPerNs{gbps}});
      draft.links.push_back({cpu, gpu, 1, pcie, BytesPerNs{gbps}});
    }
    if (sockets == 2) {
      const BytesPerNs between{gbps * preset.socket_links};
      draft.links.push_back({vertex(node, 0), vertex(node, 1), 1, Nanoseconds{0}, between});
      draft.links.push_back({vertex(node, 1), vertex(node, 0), 1, Nanoseconds{0}, between});
    }
  }
}

} // namespace

CostModel SystemModel::interpreted() const {
  CostModel m = model;
  m.step_overhead = us_to_ps(generation->executor_step_us);
  return m;
}

CostModel SystemModel::nccl_tree() const {
  CostModel m = model;
  for (size_t i = 0; i < m.message_latency.size(); ++i)
    m.message_latency[i] = us_to_ps(generation->nccl_tree_hop_us[i]);
  return m;
}

Topology SystemModel::scaled_topology(double inside, double across) const {
  TopologyDraft draft = topology.to_draft();
  for (Link &l : draft.links) {
    const bool same_node = l.src.value() / gpus_per_node == l.dst.value() / gpus_per_node;
    l.bandwidth = BytesPerNs{l.bandwidth.value * (same_node ? inside : across)};
  }
  auto scaled = Topology::create(std::move(draft));
  SYNCOLL_INVARIANT(scaled.has_value(), "scaling a valid topology's links made it invalid");
  return std::move(*scaled);
}

Topology SystemModel::protocol_topology(Protocol protocol) const {
  return scaled_topology(model.efficiency[CostModel::index(protocol)],
                         protocol_traits(protocol).payload_fraction);
}

AlgorithmExecutor SystemModel::sccl_kernel() const {
  AlgorithmExecutor e{topology, {}};
  e.options.switching = model.switching;
  e.options.costs.launch = model.launch;
  e.options.costs.step_overhead =
      us_to_ps(generation->nvlink_hop_us[CostModel::index(Protocol::Simple)]);
  e.options.costs.combine = us_to_ps(generation->executor_step_us);
  return e;
}

Expected<AlgorithmExecutor> SystemModel::copy_engine(const Algorithm &algorithm) const {
  if (nodes > 1)
    return fail({}, fmt::format("copy engines move data between the GPUs of one node; this "
                                "machine has {} nodes",
                                nodes));
  for (const AlgorithmStep &step : algorithm.steps)
    for (const Send &send : step.sends)
      if (send.op == SendOp::Reduce)
        return fail({}, fmt::format("'{}' reduces chunk {} into rank {}: a copy engine only "
                                    "copies",
                                    algorithm.name, send.chunk.value(), send.dst.value()));
  const double gain = generation->copy_engine_gain;
  SYNCOLL_INVARIANT(gain * generation->nvlink_payload_share[CostModel::index(Protocol::Simple)] <=
                        1,
                    "a copy engine cannot move more than the NVLink line rate");
  AlgorithmExecutor e{scaled_topology(gain, 1.0), {}};
  e.options.switching = model.switching;
  e.options.costs.step_overhead = model.launch;
  return e;
}

Topology SystemModel::program_topology() const {
  return with_fair_ports(topology);
}

Picoseconds default_sharing_window(const SystemPreset &preset, int nodes) {
  constexpr int kExactUpToNodes = 4;
  constexpr double kReferenceNodeGbps = 400;
  constexpr double kReferenceWindowPs = 5'000'000;
  if (nodes <= kExactUpToNodes)
    return 0;
  return Picoseconds(kReferenceWindowPs * kReferenceNodeGbps /
                     (preset.nics_per_node * preset.nic_gbps));
}

Topology with_fair_ports(const Topology &topology) {
  auto fair = with_sharing(topology, RelationSharing::Fair);
  SYNCOLL_INVARIANT(fair.has_value(), "sharing a valid topology's relations made it invalid");
  return std::move(*fair);
}

Expected<SystemModel> make_system_model(const SystemPreset &preset, int nodes, int gpus) {
  return make_system_model(preset, nodes, gpus, generation_traits(preset.generation),
                           fabric_traits(preset.fabric));
}

namespace {

// Whether a node's GPUs meet in an NVSwitch. Its ports are bandwidth relations over a node of
// GPUs alone (the library's switched nodes, and a dump whose GPUs all hang off the switch); a
// dump with PCIe or sockets keeps it as a vertex named so. A fixed mesh's links have no relation.
bool behind_nvswitch(const Topology &node) {
  return std::any_of(node.switches().begin(), node.switches().end(),
                     [](const std::string &v) { return v == "nvswitch"; }) ||
         (node.num_switches() == 0 && !node.relations().empty());
}

// `nodes` nodes of `node` on the preset's NICs and fabric, with the generation's protocol shares
// and latencies: the one assembly of every system model.
Expected<SystemModel> assemble(const SystemPreset &preset, int nodes, const Topology &node,
                               bool nvswitch, const GenerationTraits &g, const FabricTraits &f) {
  const int gpus = node.num_ranks();
  const double nic_gbps = preset.nic_gbps * f.nic_payload_share;
  TopologyDraft draft;
  if (nodes > 1) {
    SYNCOLL_TRY(t,
                multinode(nodes, node, std::min(preset.nics_per_node, gpus), BytesPerNs{nic_gbps}));
    draft = t.to_draft();
  } else {
    draft = node.to_draft();
  }
  // The network's links join GPUs of two nodes; a node's switch vertices (PCIe, sockets) are in
  // it.
  const int ranks = draft.num_ranks;
  auto across = [&](const Link &l) {
    return l.src.value() < ranks && l.dst.value() < ranks &&
           l.src.value() / gpus != l.dst.value() / gpus;
  };
  TopologyDraft line_draft = draft;
  for (Link &l : line_draft.links)
    if (across(l))
      l.bandwidth = BytesPerNs{preset.nic_gbps};
  // Payload rates and latencies of the system: NVLink at the Simple share, the NIC at its own.
  const double simple_share = g.nvlink_payload_share[CostModel::index(Protocol::Simple)];
  for (Link &l : draft.links) {
    if (!across(l)) {
      l.bandwidth = BytesPerNs{l.bandwidth.value * simple_share};
      l.alpha = Nanoseconds{0};
    } else {
      l.alpha = Nanoseconds{(f.message_latency_us + f.host_cost_us) * 1000};
    }
  }
  // Programs reach every GPU through the host's paths; NCCL's search sees the host's sockets (a
  // dumped node brings its own).
  add_host_paths(draft, nodes, gpus, preset);
  if (node.num_switches() == 0)
    add_host_sockets(line_draft, nodes, gpus, preset);
  draft.name = nodes > 1 ? fmt::format("{}x{}_{}", nodes, gpus, preset.name)
                         : fmt::format("{}_{}gpu", preset.name, gpus);
  if (draft.hierarchy.empty())
    draft.hierarchy = {{{"node", 1}, {"gpu", gpus}},
                       preset.nics_per_node,
                       BytesPerNs{preset.nic_gbps * f.nic_payload_share}};
  line_draft.name = draft.name;
  line_draft.hierarchy = draft.hierarchy;
  line_draft.hierarchy.nic_bandwidth = BytesPerNs{preset.nic_gbps};
  SYNCOLL_TRY(topology, Topology::create(std::move(draft)));
  SYNCOLL_TRY(line_topology, Topology::create(std::move(line_draft)));

  CostModel m;
  for (const ProtocolTraits &t : all_protocol_traits()) {
    const size_t i = CostModel::index(t.protocol);
    m.efficiency[i] = g.nvlink_payload_share[i] / simple_share;
    m.message_latency[i] = us_to_ps(g.nvlink_hop_us[i]);
  }
  m.thread_block_gbps = g.thread_block_gbps;
  m.connection_gbps = f.connection_gbps;
  m.connection_share[CostModel::index(Protocol::LL128)] = f.ll128_connection_share;
  m.proxy_message_cost = us_to_ps(f.proxy_message_us);
  m.launch = us_to_ps(preset.launch_us);
  m.sharing_window = default_sharing_window(preset, nodes);
  m.sharing_window_hop_ratio = kSharingWindowHopRatio;
  m.sharing_window_from_hops = kSharingWindowFromHops;
  SystemModel s{&preset, &g,   &f, nodes, gpus, std::move(topology), std::move(line_topology),
                m,       false};
  s.nvls = g.nccl_nvls_efficiency > 0 && nvswitch && gpus > 1;
  s.nvswitch = nvswitch;
  return s;
}

} // namespace

Expected<SystemModel> make_system_model(const SystemPreset &preset, int nodes, int gpus,
                                        const GenerationTraits &g, const FabricTraits &f) {
  if (gpus == 0)
    gpus = preset.gpus_per_node;
  if (gpus < 1 || gpus > preset.gpus_per_node)
    return fail({}, fmt::format("system '{}' has {} GPUs per node, asked for {}", preset.name,
                                preset.gpus_per_node, gpus));
  if (nodes < 1)
    return fail({}, fmt::format("a system needs at least one node, got {}", nodes));
  if (preset.measured_nodes > 0 && nodes != preset.measured_nodes)
    return fail({}, fmt::format("system '{}' is the {} nodes one run measured (its launch cost is "
                                "that run's harness floor), not {}",
                                preset.name, preset.measured_nodes, nodes));
  if (nodes == 1 && gpus == 1)
    return fail({}, "a collective needs at least two GPUs");
  SYNCOLL_TRY(whole_node, make_library_topology(preset.node_topology, {}));
  const bool nvswitch = behind_nvswitch(whole_node);
  if (gpus == 1) {
    // One GPU per node: a node of one rank and no links.
    SYNCOLL_TRY(one, Topology::create({"single_gpu", 1, {}, {}, {}, {}}));
    return assemble(preset, nodes, one, nvswitch, g, f);
  }
  SYNCOLL_TRY(node, node_topology(preset, gpus, g));
  return assemble(preset, nodes, node, nvswitch, g, f);
}

Expected<SystemModel> make_system_model(const SystemPreset &preset, const Topology &node,
                                        int nodes) {
  if (nodes < 1)
    return fail({}, fmt::format("a system needs at least one node, got {}", nodes));
  if (nodes == 1 && node.num_ranks() == 1)
    return fail({}, "a collective needs at least two GPUs");
  return assemble(preset, nodes, node, behind_nvswitch(node), generation_traits(preset.generation),
                  fabric_traits(preset.fabric));
}

} // namespace syncoll::simulator
