#include "nccl/run.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "nccl/algorithms.h"
#include "nccl/platform_tuner.h"
#include "simulator/program_sim.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <initializer_list>

namespace syncoll::nccl {

Expected<TopologyRings> nccl_topology_rings(const Topology &topology, CollectiveKind kind,
                                            int channels, std::optional<RankId> root,
                                            const std::optional<NcclRingGraph> &given,
                                            const NcclSearchHost &host) {
  const GenerationTraits &g =
      host.generation ? generation_traits(*host.generation) : nccl_generation_for(topology);
  auto graph = given ? given : nccl_search_rings(topology, g, host);
  if (!graph)
    return fail({}, fmt::format("NCCL's search finds no ring on topology '{}'", topology.name()));
  TopologyRings r{*graph, channels > 0 ? channels : graph->runtime_channels(), {}};
  r.rings = graph->channel_rings(r.channels, collective_traits(kind).rooted
                                                 ? std::optional(root.value_or(RankId(0)))
                                                 : std::nullopt);
  return r;
}

simulator::CostModel nccl_chunked(simulator::CostModel model, CollectiveKind kind) {
  const int steps = collective_traits(kind).nccl_chunk_steps;
  if (steps > 0)
    model.iteration_bytes[simulator::CostModel::index(Protocol::Simple)] =
        protocol_traits(Protocol::Simple).buffer_bytes / kNcclFifoSlots * steps;
  return model;
}

namespace {

// NCCL's integer log2 of a node count (log2i): the levels of its tree of nodes.
int tree_levels(int nodes) {
  return std::bit_width(unsigned(nodes)) - 1;
}

// A tree chunk as enqueue.cc shrinks it: from `chunk`, each round halves it while a channel's
// share of `bytes` holds fewer than the round's chunks and the chunk is above its floor.
struct HalvingRound {
  double chunks_wanted;
  int64_t floor_bytes;
};
int64_t halved_chunk(int64_t bytes, int channels, int64_t chunk,
                     std::initializer_list<HalvingRound> rounds) {
  for (const HalvingRound &round : rounds)
    while (double(bytes / (channels * chunk)) < round.chunks_wanted && chunk > round.floor_bytes)
      chunk /= 2;
  return chunk;
}

} // namespace

int64_t nccl_tree_chunk_bytes(Protocol protocol, int64_t bytes, int channels, int nodes,
                              int ranks_per_node) {
  SYNCOLL_INVARIANT(channels > 0 && nodes > 0 && ranks_per_node > 0, "a tree of no ranks");
  const ProtocolTraits &traits = protocol_traits(protocol);
  const int64_t slot = traits.buffer_bytes / kNcclFifoSlots;
  switch (protocol) {
  case Protocol::Simple: {
    // The tree's depth: the chain through a node, then the levels of the tree of nodes.
    const double depth = ranks_per_node - 1 + tree_levels(nodes);
    return halved_chunk(bytes, channels, slot,
                        {{depth * 8, 128 * 1024}, {depth * 4, 64 * 1024}, {depth, 32 * 1024}});
  }
  case Protocol::LL128: {
    const double ppn = ranks_per_node;
    const double steps = 1 + tree_levels(nodes) + 0.1 * ppn;
    const int64_t chunk = halved_chunk(
        bytes, channels, slot, {{steps * 64 / ppn, 128 * 1024}, {steps * 16 / ppn, 32 * 1024}});
    return std::llround(double(chunk) * traits.payload_fraction);
  }
  case Protocol::LL:
    return traits.executor_tile_bytes;
  }
  SYNCOLL_UNREACHABLE("a protocol without a tree chunk");
}

bool nccl_runs_on_topology(NcclAlgorithm algorithm) {
  switch (algorithm) {
  case NcclAlgorithm::Ring:
  case NcclAlgorithm::Tree:
    return true;
  case NcclAlgorithm::Nvls:
  case NcclAlgorithm::NvlsTree:
  case NcclAlgorithm::Pat:
  case NcclAlgorithm::CollNetDirect:
  case NcclAlgorithm::CollNetChain:
  case NcclAlgorithm::P2p:
    return false;
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm neither on nor off a plain topology");
}

Expected<Program> nccl_topology_program(NcclAlgorithm algorithm, CollectiveKind kind,
                                        const Topology &topology, const TopologyRings &rings,
                                        Protocol protocol) {
  if (!nccl_runs_on_topology(algorithm))
    return fail({}, fmt::format("NCCL's {} needs a system (its constants are a GPU generation's)",
                                nccl_algorithm_name(algorithm)));
  if (algorithm == NcclAlgorithm::Ring)
    return nccl_ring_program(kind, rings.rings, protocol);
  if (kind != CollectiveKind::Allreduce)
    return fail({}, "NCCL's tree is an Allreduce");
  SYNCOLL_TRY(trees, nccl_topology_trees(topology, rings.channels, rings.rings));
  return nccl_tree_allreduce_program(trees, kNcclTreePipelineChunks, protocol);
}

namespace {

// NVLS: per GPU, the bytes through its busier switch-port direction. AllReduce loads every slice
// reduced (S out) and stores its own slice multicast (S/N out, S in); ReduceScatter loads S and
// keeps S/N; AllGather stores its S/N once and receives the others' (N-1)S/N.
double nvls_port_bytes(CollectiveKind kind, double bytes, int n) {
  if (kind == CollectiveKind::Allreduce)
    return bytes * (1.0 + 1.0 / n);
  if (kind == CollectiveKind::ReduceScatter)
    return bytes;
  return bytes * (n - 1.0) / n;
}

// NVLS inside one node: the rate of a GPU's busier switch-port direction under multimem loads and
// stores.
double nvls_port_rate(const simulator::SystemModel &s) {
  const GenerationTraits &g = *s.generation;
  const Link &port = s.topology.links().front();
  const double simple_share = g.nvlink_payload_share[simulator::CostModel::index(Protocol::Simple)];
  return port.bandwidth.value / simple_share * g.nvls_payload_share;
}

// A closed form's result: `ns` for `bytes` of `kind` on the system's ranks.
simulator::SimulationResult closed_form_result(CollectiveKind kind, int64_t bytes, double ns,
                                               int ranks) {
  simulator::SimulationResult r;
  r.size_bytes = bytes;
  r.completion = std::llround(ns * 1000);
  r.algbw_gbps = double(bytes) / ns;
  r.busbw_gbps = r.algbw_gbps * bus_bandwidth_factor(kind, ranks);
  r.rank_idle.assign(size_t(ranks), 0);
  return r;
}

// Each of the channels moves its share in steps of at most nvls_step_kib; a step passes
// `stages` stages one after another (on one node: the reduction in the switch, then the
// multicast), so the pipeline fills for stages - 1 steps: the factor on the busiest stage's time.
double nvls_pipeline_fill(double port_bytes, int channels, const GenerationTraits &g, int stages) {
  const double share = port_bytes / std::min(kNcclMaxChannels, channels);
  const double steps = std::max(1.0, std::ceil(share / (g.nvls_step_kib * 1024)));
  return (steps + stages - 1) / steps;
}

simulator::SimulationResult nvls_closed_form(CollectiveKind kind, int64_t bytes,
                                             const simulator::SystemModel &s,
                                             int machine_channels) {
  const GenerationTraits &g = *s.generation;
  const int n = s.topology.num_ranks();
  const double port_bytes = nvls_port_bytes(kind, double(bytes), n);
  const double ns =
      s.model.launch / 1000.0 + g.nvls_latency_us * 1000 +
      port_bytes / nvls_port_rate(s) * nvls_pipeline_fill(port_bytes, machine_channels, g, 2);
  return closed_form_result(kind, bytes, ns, n);
}

// NVLS tree's pipeline chunk, as NCCL's enqueue sizes it: NCCL_NVLS_CHUNKSIZE (128 KiB), at most
// 64 KiB on 4 nodes or more, then 64 KiB while the call holds fewer than 4 chunks for each of its
// concurrent operations (a channel's NVLS heads, those of NVLS's graph) and 32 KiB under 1.
// (NCCL's rules for chunks above 128 KiB never apply to the default.)
double nvls_tree_chunk_bytes(double bytes, int nodes, double operations) {
  double chunk = double(nodes >= 4 ? kNcclNvlsTreeChunkBytes / 2 : kNcclNvlsTreeChunkBytes);
  if (bytes < 4 * operations * chunk)
    chunk = std::min(chunk, 64.0 * 1024);
  if (bytes < operations * chunk)
    chunk = 32.0 * 1024;
  return chunk;
}

// NVLS across nodes runs through the heads of NVLS's graph and their NICs: a machine without a
// graph (none found) runs a head per GPU on all of the node's NICs.
struct NvlsHeads {
  int heads = 1;
  int nics = 1;
};
NvlsHeads nvls_heads(const simulator::SystemModel &s, const NcclMachine &m) {
  const int nics = s.topology.hierarchy().nics_per_node;
  if (!m.nvls_graph)
    return {s.gpus_per_node, nics};
  std::vector<int> used = m.nvls_graph->nics;
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return {m.nvls_graph->channels(), used.empty() ? nics : int(used.size())};
}

// The steps of NVLS's pipeline across nodes: a step is one chunk from each channel's NVLS heads.
double nvls_chunk_steps(double bytes, const simulator::SystemModel &s, int channels,
                        const NvlsHeads &h) {
  const double operations = double(std::min(kNcclMaxChannels, channels)) * h.heads;
  return std::max(
      1.0, std::ceil(bytes / (operations * nvls_tree_chunk_bytes(bytes, s.nodes, operations))));
}

// What `nics` of a node's NICs move, bytes/ns, on `channels` channels: at the fabric's payload
// share, each channel's connection at most the fabric's connection rate.
double network_rate(const simulator::SystemModel &s, int channels, int nics) {
  return std::min(nics * s.topology.hierarchy().nic_bandwidth.value,
                  std::min(kNcclMaxChannels, channels) * s.fabric->connection_gbps);
}
double network_rate(const simulator::SystemModel &s, int channels) {
  return network_rate(s, channels, s.topology.hierarchy().nics_per_node);
}
// One message across the network, ns: the fabric's latency and the host's cost.
double network_message_ns(const simulator::SystemModel &s) {
  return (s.fabric->message_latency_us + s.fabric->host_cost_us) * 1000;
}

// NVLS tree: inside each node NVLS reduces and multicasts as on one node, between nodes a double
// binary tree carries the node's reduced data; the two stages pipeline, so the slower sets the
// rate. Per node and direction the trees move the buffer once on two nodes (each node the root
// of one tree and a leaf of the other) and twice on more (an inner node of one tree, a leaf of
// the other), over the NICs of the node's NVLS heads at the fabric's payload share, each
// channel's connection at most the fabric's connection rate. The latency is NVLS's and a message
// per tree level up and down. A step (every channel's heads one chunk each) passes the reduction in
// the node, each level up and down, and the multicast: the pipeline fills with one step of each
// stage but the slowest.
simulator::SimulationResult nvls_tree_closed_form(int64_t bytes, const simulator::SystemModel &s,
                                                  int channels, const NvlsHeads &h) {
  const GenerationTraits &g = *s.generation;
  const double port_bytes =
      nvls_port_bytes(CollectiveKind::Allreduce, double(bytes), s.gpus_per_node);
  const double net_bytes = double(bytes) * (s.nodes <= 2 ? 1 : 2);
  const double net_rate = network_rate(s, channels, h.nics);
  const double port_rate = nvls_port_rate(s);
  const double busiest = std::max(port_bytes / port_rate, net_bytes / net_rate);
  const double levels = std::ceil(std::log2(double(s.nodes)));
  const double steps = nvls_chunk_steps(double(bytes), s, channels, h);
  const double node_step = port_bytes / steps / port_rate;
  const double net_step = double(bytes) / steps / net_rate;
  const double fill = 2 * node_step + 2 * levels * net_step - std::max(node_step, net_step);
  const double ns = s.model.launch / 1000.0 + g.nvls_latency_us * 1000 +
                    2 * levels * network_message_ns(s) + busiest + fill;
  return closed_form_result(CollectiveKind::Allreduce, bytes, ns, s.topology.num_ranks());
}

// In-network reduction (IB SHARP): each node sends its part of the buffer up the switch tree
// once and receives the reduced part once, whatever the node count, at the network's rate (an
// aggregation flow per channel); the round trip is a message up and one down, the switches'
// aggregation inside them.
double sharp_round_trip_ns(const simulator::SystemModel &s) {
  return 2 * network_message_ns(s);
}

// A GPU's NVLink switch port at Simple's payload rate (the system's links carry it), the flag
// round trip of one Simple hop, and one Simple FIFO slot: CollNet's copies are Simple's.
double simple_port_rate(const simulator::SystemModel &s) {
  SYNCOLL_INVARIANT(!s.topology.links().empty(), "a machine of several nodes without links");
  return s.topology.links().front().bandwidth.value;
}
double simple_hop_ns(const simulator::SystemModel &s) {
  return s.generation->nvlink_hop_us[simulator::CostModel::index(Protocol::Simple)] * 1000;
}
double simple_slot_bytes() {
  return double(protocol_traits(Protocol::Simple).buffer_bytes) / kNcclFifoSlots;
}

// A pipeline whose step passes `stage_ns` one after another: it fills with one step of each
// stage but the slowest.
double pipeline_fill_ns(std::initializer_list<double> stage_ns) {
  double sum = 0;
  double slowest = 0;
  for (double t : stage_ns) {
    sum += t;
    slowest = std::max(slowest, t);
  }
  return sum - slowest;
}

// NVLS across nodes (CollNet enabled): NVLS reduces inside the node as on one node, the node's
// NVLS heads send the node's sum through their NICs and the network's switches and multicast
// what returns, in NVLS tree's chunks; the busier of the switch port and the NICs sets the rate.
simulator::SimulationResult nvls_sharp_closed_form(int64_t bytes, const simulator::SystemModel &s,
                                                   int channels, const NvlsHeads &h) {
  const GenerationTraits &g = *s.generation;
  const double port_bytes =
      nvls_port_bytes(CollectiveKind::Allreduce, double(bytes), s.gpus_per_node);
  const double port_rate = nvls_port_rate(s);
  const double net_rate = network_rate(s, channels, h.nics);
  const double steps = nvls_chunk_steps(double(bytes), s, channels, h);
  const double node_step = port_bytes / steps / port_rate;
  const double net_step = double(bytes) / steps / net_rate;
  const double ns = s.model.launch / 1000.0 + g.nvls_latency_us * 1000 + sharp_round_trip_ns(s) +
                    std::max(port_bytes / port_rate, double(bytes) / net_rate) +
                    pipeline_fill_ns({node_step, net_step, net_step, node_step});
  return closed_form_result(CollectiveKind::Allreduce, bytes, ns, s.topology.num_ranks());
}

// CollNet Direct. AllReduce: every GPU sends each head (one GPU per NIC, h of them) its share of
// the buffer over NVLink, a head sends the node's sum of its share through its NIC and sends the
// network's result to every GPU. A head's switch port carries, each way, its own shares to the
// other heads and the g - 1 GPUs' shares of its part, S (h - 1) / h + (g - 1) S / h; a GPU that is
// no head carries S. AllGather and ReduceScatter (a NIC per GPU) only cross the network: a node's
// NICs receive (AllGather) or send (ReduceScatter) the other nodes' (N - 1) / N of the buffer.
// Steps are Simple's FIFO slots of each head's share.
simulator::SimulationResult collnet_direct_closed_form(CollectiveKind kind, int64_t bytes,
                                                       const simulator::SystemModel &s,
                                                       int channels) {
  const double S = double(bytes);
  const double net_rate = network_rate(s, channels);
  const double fixed_ns = s.model.launch / 1000.0 + sharp_round_trip_ns(s);
  if (kind != CollectiveKind::Allreduce) {
    const double ns = fixed_ns + S * (s.nodes - 1.0) / s.nodes / net_rate;
    return closed_form_result(kind, bytes, ns, s.topology.num_ranks());
  }
  const int g = s.gpus_per_node;
  const int heads = std::max(1, std::min(channels, g));
  const double port_bytes = g == 1 ? 0 : std::max(S, S * (heads - 1) / heads + S * (g - 1) / heads);
  const double port_rate = simple_port_rate(s);
  const double slot = simple_slot_bytes();
  const double steps = std::max(1.0, std::ceil(S / heads / slot));
  const double node_step = port_bytes / steps / port_rate / 2; // the scatter, then the broadcast
  const double net_step = S / steps / net_rate;
  const double hop_ns = g == 1 ? 0 : 2 * simple_hop_ns(s);
  const double ns = fixed_ns + hop_ns + std::max(port_bytes / port_rate, S / net_rate) +
                    pipeline_fill_ns({node_step, net_step, net_step, node_step});
  return closed_form_result(kind, bytes, ns, s.topology.num_ranks());
}

// CollNet Chain: each channel chains the node's g GPUs to a head on the channel's NIC; the sum
// climbs the chain, crosses the network's switches and comes back down. Every GPU's port carries
// the buffer up and down the chains, 2 S each way; a step, one Simple slot of each channel's
// share, passes g - 1 NVLink hops each way and the network up and down.
simulator::SimulationResult
collnet_chain_closed_form(int64_t bytes, const simulator::SystemModel &s, int channels) {
  const double S = double(bytes);
  const int g = s.gpus_per_node;
  const int c = std::max(1, std::min(kNcclMaxChannels, channels));
  const double net_rate = network_rate(s, channels);
  const double port_rate = simple_port_rate(s);
  const double port_bytes = g == 1 ? 0 : 2 * S;
  const double slot = simple_slot_bytes();
  const double steps = std::max(1.0, std::ceil(S / c / slot));
  const double hop_step = S / steps / (port_rate / 2);
  const double net_step = S / steps / net_rate;
  // 2 (g - 1) hops and the network up and down, each its own stage.
  const double fill =
      2 * (g - 1) * hop_step + 2 * net_step - std::max(g > 1 ? hop_step : 0.0, net_step);
  const double ns = s.model.launch / 1000.0 + sharp_round_trip_ns(s) +
                    2 * (g - 1) * simple_hop_ns(s) +
                    std::max(port_bytes / port_rate, S / net_rate) + fill;
  return closed_form_result(CollectiveKind::Allreduce, bytes, ns, s.topology.num_ranks());
}

} // namespace

Expected<Program> nccl_program(CollectiveKind kind, const NcclEstimate &choice,
                               const simulator::SystemModel &s, const NcclMachine &m) {
  const int ranks = s.topology.num_ranks();
  const int channels = std::min(kNcclMaxChannels, choice.channels);
  switch (choice.algorithm) {
  case NcclAlgorithm::Ring: {
    const bool rooted = collective_traits(kind).rooted;
    return nccl_ring_program(
        kind, m.ring.channel_rings(channels, rooted ? std::optional(RankId(0)) : std::nullopt),
        choice.protocol);
  }
  case NcclAlgorithm::Tree: {
    std::vector<std::vector<int>> trees;
    const std::vector<NcclTreeChain> chains = nccl_tree_chains(s, m, channels);
    for (size_t c = 0; c < chains.size(); ++c)
      trees.push_back(nccl_tree_parents(s.nodes, chains[c],
                                        nccl_channel_tree_index(int(c), int(chains.size()))));
    return nccl_tree_allreduce_program(trees, 1, choice.protocol);
  }
  case NcclAlgorithm::Pat:
    return kind == CollectiveKind::Allgather
               ? nccl_pat_allgather_program(ranks, choice.protocol)
               : nccl_pat_reducescatter_program(ranks, choice.protocol);
  case NcclAlgorithm::P2p: {
    // NCCL spreads its point-to-point channels over the NVLink peers (at least one each); a
    // peer across the network gets two, halved while that would put more than four operations
    // per channel on the communicator (NCCL's ncclTopoGetNchannels, up to 2.28), at least one.
    int net = 2;
    while (net * ranks > channels * 4 && net > 1)
      net /= 2;
    return nccl_alltoall_program(ranks, choice.protocol, std::max(1, channels / ranks),
                                 s.gpus_per_node, net);
  }
  case NcclAlgorithm::Nvls:
  case NcclAlgorithm::NvlsTree:
  case NcclAlgorithm::CollNetDirect:
  case NcclAlgorithm::CollNetChain:
    return fail({}, fmt::format("NCCL's {} reduces in a switch and has no thread-block program; "
                                "it runs as its closed form",
                                nccl_algorithm_name(choice.algorithm)));
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm without a program");
}

namespace {

// The closed form of an algorithm that has no thread-block program; none for the others.
std::optional<simulator::SimulationResult> closed_form(CollectiveKind kind, int64_t bytes,
                                                       const simulator::SystemModel &s,
                                                       const NcclMachine &m,
                                                       const NcclEstimate &choice) {
  switch (choice.algorithm) {
  case NcclAlgorithm::Nvls:
    return s.nodes > 1 ? nvls_sharp_closed_form(bytes, s, choice.channels, nvls_heads(s, m))
                       : nvls_closed_form(kind, bytes, s, choice.channels);
  case NcclAlgorithm::NvlsTree:
    return nvls_tree_closed_form(bytes, s, choice.channels, nvls_heads(s, m));
  case NcclAlgorithm::CollNetDirect:
    return collnet_direct_closed_form(kind, bytes, s, choice.channels);
  case NcclAlgorithm::CollNetChain:
    return collnet_chain_closed_form(bytes, s, choice.channels);
  case NcclAlgorithm::Ring:
  case NcclAlgorithm::Tree:
  case NcclAlgorithm::Pat:
  case NcclAlgorithm::P2p:
    return std::nullopt;
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm neither a program nor a closed form");
}

} // namespace

Expected<NcclMachine> nccl_machine(const simulator::SystemModel &s) {
  auto ring = nccl_search_rings(s.line_topology, *s.generation);
  if (!ring)
    return fail({}, fmt::format("NCCL's search finds no ring on '{}'", s.topology.name()));
  NcclMachine m{std::move(*ring), {}, std::nullopt, std::nullopt, std::nullopt, {}};
  if (s.nodes > 1)
    m.ring.type_inter = s.preset->nic_path;
  if (s.nvls)
    m.nvls_graph = nccl_search_nvls(s.line_topology, *s.generation);
  m.tuning = {s.generation, nullptr, nullptr,           s.topology.num_ranks(),
              s.nodes,      s.nvls,  kNewestNcclVersion};
  m.tuning.nvswitch = s.nvswitch;
  m.tuning.host_cpu = s.preset->host_cpu;
  m.tuning.nics_per_node = s.topology.hierarchy().nics_per_node;
  m.tuning.collnet_gbps =
      nccl_net_speed(*s.generation, s.line_topology.hierarchy().nic_bandwidth.value);
  return m;
}

Expected<NcclSystem> nccl_system(const SystemPreset &preset, int nodes, int gpus_per_node) {
  auto system = simulator::make_system_model(preset, nodes, gpus_per_node);
  if (!system)
    return tl::unexpected(system.error());
  auto machine = nccl_machine(*system);
  if (!machine)
    return tl::unexpected(machine.error());
  return NcclSystem{std::move(*system), std::move(*machine)};
}

std::pair<NcclPathType, NcclPathType> NcclMachine::path_types(NcclAlgorithm algorithm) const {
  if (algorithm != NcclAlgorithm::Tree)
    return {ring.type_intra, ring.type_inter};
  return {tree_types.intra.value_or(ring.type_intra), tree_types.inter.value_or(ring.type_inter)};
}

NcclTuningInput NcclMachine::tuning_input() const {
  NcclTuningInput in = tuning;
  in.ring = &ring;
  in.tree_pattern = tree_pattern.value_or(nccl_searched_tree_pattern(
      in.generation->generation, in.ranks / std::max(1, in.nodes), in.nics_per_node));
  in.nvls_graph = nvls_graph ? &*nvls_graph : nullptr;
  return in;
}

NcclMachine with_graphs(const simulator::SystemModel &s, NcclMachine machine,
                        std::optional<NcclRingGraph> rings,
                        std::optional<std::vector<NcclTreeChain>> trees,
                        std::optional<NcclNvlsGraph> nvls, NcclTreeGraphTypes tree_types) {
  if (trees)
    machine.tree_types = tree_types;
  if (trees && !trees->empty())
    machine.tree_pattern = std::max_element(trees->begin(), trees->end(),
                                            [](const NcclTreeChain &a, const NcclTreeChain &b) {
                                              return a.pattern < b.pattern;
                                            })
                               ->pattern;
  if (rings && !trees)
    trees = nccl_tree_chains(s, machine, kNcclMaxChannels);
  if (rings)
    machine.ring = std::move(*rings);
  if (trees)
    machine.tree_graph = std::move(trees);
  if (nvls && s.nvls)
    machine.nvls_graph = std::move(nvls);
  return machine;
}

std::vector<NcclTreeChain> nccl_tree_chains(const simulator::SystemModel &s, const NcclMachine &m,
                                            int channels) {
  if (m.tree_graph) {
    std::vector<NcclTreeChain> out;
    for (int c = 0; c < channels; ++c)
      out.push_back((*m.tree_graph)[size_t(c) % m.tree_graph->size()]);
    return out;
  }
  return m.ring.chains
             ? nccl_ring_ordered_chains(s.nodes, m.ring.channel_rings(channels))
             : nccl_channel_tree_chains(s.gpus_per_node, s.preset->nics_per_node, channels);
}

namespace {

// Whether the network plugin sets NCCL_PROTO=simple on the machine's fabric
// (FabricTraits::simple_protocol_only) and the user left NCCL_PROTO unset.
bool net_plugin_sets_simple(const simulator::SystemModel &s, const NcclRunOptions &o) {
  return !o.protocol && s.fabric && s.fabric->simple_protocol_only;
}

// The widest path between a GPU and its NIC over which NCCL runs LL128 by default (tuning.cc,
// NCCL_LL128_C2C=1): from Hopper on, P2C and PXN too; before, and on RCCL's GPUs, PXB (a PXN
// path may hide a PXB or C2C one).
NcclPathType ll128_widest_net_path(GpuGeneration generation) {
  switch (generation) {
  case GpuGeneration::Hopper:
  case GpuGeneration::Blackwell:
    return NcclPathType::Pxn;
  case GpuGeneration::Volta:
  case GpuGeneration::Ampere:
  case GpuGeneration::Cdna2:
  case GpuGeneration::Cdna3:
  case GpuGeneration::Cdna4:
    return NcclPathType::Pxb;
  }
  SYNCOLL_UNREACHABLE("a GPU generation without an LL128 rule");
}

// Whether NCCL leaves LL128 off by default (tuning.cc: only on GPUs it was validated on, only
// where the graph's hops inside a node are NVLink, at most NVB, and across nodes only where its
// GPUs reach their NICs near enough); NCCL_PROTO naming it turns it on.
bool ll128_off_by_default(const simulator::SystemModel &s, const NcclMachine &m,
                          const NcclRunOptions &o, NcclAlgorithm algorithm) {
  if (o.protocol)
    return false;
  const auto [intra, inter] = m.path_types(algorithm);
  const bool across = s.nodes > 1 && inter > ll128_widest_net_path(s.generation->generation);
  return !s.preset->ll128_by_default || intra > NcclPathType::Nvb || across;
}

} // namespace

Expected<std::vector<NcclEstimate>> nccl_candidates(CollectiveKind kind, int64_t bytes,
                                                    const simulator::SystemModel &s,
                                                    const NcclMachine &m, const NcclRunOptions &o) {
  NcclTuningInput in = m.tuning_input();
  in.nvls = in.nvls && o.nvls;
  in.version = o.version;
  if (o.collnet && s.fabric->in_network_reduction.empty())
    return fail({}, fmt::format("NCCL's CollNet needs a network whose switches reduce (IB SHARP, "
                                "HDR or newer); fabric '{}' has none",
                                s.fabric->name));
  if (o.algorithm && nccl_is_collnet(*o.algorithm) && !o.collnet)
    return fail({}, fmt::format("NCCL_ALGO={} runs only with CollNet enabled "
                                "(NCCL_COLLNET_ENABLE=1)",
                                nccl_algorithm_name(*o.algorithm)));
  in.collnet = o.collnet && s.nodes > 1;
  if (o.algorithm && !nccl_has_algorithm(o.version, *o.algorithm))
    return fail({},
                fmt::format("NCCL {} has no {}: it came in {}", nccl_version_name(o.version),
                            nccl_algorithm_name(*o.algorithm), nccl_algorithm_since(*o.algorithm)));
  std::vector<NcclEstimate> estimates = nccl_estimates(kind, double(bytes), in);
  if (net_plugin_sets_simple(s, o))
    std::erase_if(estimates, [](const NcclEstimate &e) { return e.protocol != Protocol::Simple; });
  std::erase_if(estimates, [&](const NcclEstimate &e) {
    return e.protocol == Protocol::LL128 && ll128_off_by_default(s, m, o, e.algorithm);
  });
  return estimates;
}

Expected<NcclRun> simulate_nccl(CollectiveKind kind, int64_t bytes, const simulator::SystemModel &s,
                                const NcclMachine &m, const NcclRunOptions &o) {
  SYNCOLL_TRY(candidates, nccl_candidates(kind, bytes, s, m, o));
  std::optional<NcclEstimate> choice;
  for (const NcclEstimate &e : candidates)
    if ((!o.algorithm || e.algorithm == *o.algorithm) &&
        (!o.protocol || e.protocol == *o.protocol) && (!choice || e.time_us < choice->time_us))
      choice = e;
  // The plugin's pick, where it has one and NCCL can run it (NCCL keeps its own otherwise).
  const auto picked =
      o.tuner_plugin && !o.algorithm && !o.protocol
          ? platform_tuner_choice(s.preset->platform_tuner, kind, s.nodes, s.gpus_per_node, bytes)
          : std::nullopt;
  const auto plugin_pick = picked ? std::find_if(candidates.begin(), candidates.end(),
                                                 [&](const NcclEstimate &e) {
                                                   return e.algorithm == picked->algorithm &&
                                                          e.protocol == picked->protocol;
                                                 })
                                  : candidates.end();
  const bool plugin_chose = plugin_pick != candidates.end();
  if (plugin_chose)
    choice = *plugin_pick;
  if (!choice)
    return fail({}, fmt::format("NCCL has no {}{}{} for {} on '{}'",
                                o.algorithm ? nccl_algorithm_name(*o.algorithm) : "algorithm",
                                o.protocol ? " with protocol " : "",
                                o.protocol ? protocol_traits(*o.protocol).name : "",
                                collective_kind_name(kind), s.topology.name()));
  if (o.channels) {
    if (*o.channels < 1)
      return fail({}, fmt::format("NCCL runs on at least one channel, not {}", *o.channels));
    choice->channels = std::min(kNcclMaxChannels, *o.channels);
  }
  if (o.min_channels)
    choice->channels = std::min(kNcclMaxChannels, std::max(choice->channels, *o.min_channels));
  NcclRun run{*choice, nccl_info_line(kind, double(bytes), *choice), {}, false};
  if (plugin_chose)
    run.info += fmt::format(" ({})", platform_tuner_name(s.preset->platform_tuner));
  if (net_plugin_sets_simple(s, o))
    run.info += fmt::format(" (NCCL_PROTO=simple: aws-ofi-nccl on {})", s.fabric->name);
  if (auto closed = closed_form(kind, bytes, s, m, *choice)) {
    run.result = std::move(*closed);
    run.closed_form = true;
    return run;
  }
  SYNCOLL_TRY(program, nccl_program(kind, *choice, s, m));
  simulator::ProgramSimOptions po;
  // The executor's nBytes is nccl-tests' size for every collective NCCL runs as a ring or tree.
  po.size_bytes = bytes;
  po.model = choice->algorithm == NcclAlgorithm::Tree ? s.nccl_tree() : s.model;
  po.trace = o.trace;
  if (choice->algorithm == NcclAlgorithm::P2p) {
    // The program sim tiles every connection alike, so a machine with peers across the network
    // tiles by the network's chunk everywhere; its NVLink transfers are not what limits it.
    po.model.iteration_bytes[simulator::CostModel::index(Protocol::Simple)] =
        s.nodes > 1 ? kNcclP2pNetChunkBytes : kNcclP2pNvlinkChunkBytes;
  }
  po.model = nccl_chunked(po.model, kind);
  if (choice->algorithm == NcclAlgorithm::Tree)
    po.model.iteration_bytes[simulator::CostModel::index(choice->protocol)] =
        nccl_tree_chunk_bytes(choice->protocol, bytes, choice->channels, s.nodes, s.gpus_per_node);
  // The protocol's payload rates are in the links: its NVLink share differs from its wire
  // format's share across the network.
  Topology topology = s.protocol_topology(choice->protocol);
  po.model.efficiency.fill(1.0);
  // Point-to-point traffic to every peer at once: ports shared as the hardware shares them.
  if (choice->algorithm == NcclAlgorithm::P2p)
    topology = simulator::with_fair_ports(topology);
  SYNCOLL_TRY(sim, simulator::simulate_program(program, topology, po));
  SYNCOLL_INVARIANT(!sim.deadlocked, "an NCCL program deadlocked in the simulator");
  run.result = std::move(sim.result);
  run.result.size_bytes = bytes;
  if (run.result.completion > 0) {
    run.result.algbw_gbps = double(bytes) / (double(run.result.completion) / 1000.0);
    run.result.busbw_gbps =
        run.result.algbw_gbps * bus_bandwidth_factor(kind, s.topology.num_ranks());
  }
  return run;
}

} // namespace syncoll::nccl
