// NCCL's algorithms as thread-block programs, so that syncoll compares like with like: ring
// Allreduce, Allgather, ReduceScatter, Broadcast and Reduce with a ring per channel (the step
// shapes are those msccl-tools emits for rings), tree Allreduce with a tree per channel, PAT
// Allgather and ReduceScatter, and the grouped point-to-point of Alltoall; and NCCL's analytic ring
// formula (docs/cost-model.md, "NCCL baselines") as a separate function. Every program is verified
// in the tests.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "model/topology.h"

#include <optional>
#include <vector>

namespace syncoll::nccl {

/// The steps of NCCL's ring for `kind` on `ranks` ranks: 2(n-1) for Allreduce (ReduceScatter,
/// then Allgather), n-1 for Allgather and ReduceScatter, n for Broadcast and Reduce (the pipeline
/// fills over n-1 hops and the root's own copy).
int nccl_ring_steps(CollectiveKind kind, int ranks);

/// The chunks each channel's buffer is cut into in NCCL's tree program (its pipeline across the
/// tree's levels).
constexpr int kNcclTreePipelineChunks = 4;

/// A directed Hamiltonian cycle of the topology (every rank once, each hop a link), preferring
/// 0, 1, ..., n-1 when it is one. Searches with a step limit; none when it finds no ring.
std::optional<std::vector<RankId>> find_ring(const Topology &topology);

/// NCCL's ring algorithm for `kind` (allreduce, allgather, reducescatter, or broadcast and reduce
/// rooted at the first rank of every ring) with one channel per entry of `channel_rings`, channel c
/// along its own ring and handling every c-th chunk; one thread block per rank and channel.
/// Allreduce is in place, the others out of place, as nccl-tests calls them.
[[nodiscard]] Expected<Program>
nccl_ring_program(CollectiveKind kind, const std::vector<std::vector<RankId>> &channel_rings,
                  Protocol protocol);

/// A spanning tree of the topology over links present in both directions, found breadth first
/// from `root`, as each rank's parent (-1 for the root); none when the topology has no such tree.
std::optional<std::vector<int>> find_tree(const Topology &topology, RankId root);

/// NCCL's tree Allreduce shape along `parent` (see find_tree): every rank reduces its children's
/// partials into its buffer and passes the result up, the root's result comes back down; the
/// buffer is cut into `pipeline_chunks` chunks that flow up and down one after another. Separate
/// thread blocks receive from and send to each neighbour, with dependencies ordering every
/// access, so the program is race free in strict mode. In place. With several channels, each
/// runs the same tree over its own share of the buffer.
[[nodiscard]] Expected<Program> nccl_tree_allreduce_program(const std::vector<int> &parent,
                                                            int pipeline_chunks, Protocol protocol,
                                                            int channels = 1);
/// The same with its own tree per channel (each as `parent` above).
[[nodiscard]] Expected<Program>
nccl_tree_allreduce_program(const std::vector<std::vector<int>> &channel_trees, int pipeline_chunks,
                            Protocol protocol);

/// NCCL's tree shape on a machine of `nodes` x `gpus_per_node` ranks (node-major): a chain
/// through each node's GPUs from `first_gpu` on, and the chains' heads in a binary tree across
/// nodes (the first of NCCL's double binary trees), as each rank's parent (-1 for the root).
/// NCCL starts channel c's chains at a GPU of NIC c, so that the channels use every NIC.
std::vector<int> nccl_tree_parents(int nodes, int gpus_per_node, int first_gpu = 0);
/// The same tree with each node's chain in `chain`'s order (GPU indices within a node; its first
/// is the chain's head).
std::vector<int> nccl_tree_parents(int nodes, const std::vector<int> &chain);

/// Where a node's chain meets the nodes above and below it in the tree across nodes (NCCL's
/// tree graph patterns, graph.h): every network hop at the chain's head (Tree, 3); the parent
/// and the second child at the head, the first child at the chain's second GPU (BalancedTree,
/// 1); the parent at the head, both children at the second GPU (SplitTree, 2).
enum class NcclTreePattern { BalancedTree = 1, SplitTree = 2, Tree = 3 };
/// One channel of NCCL's tree graph: the chain every node runs (GPU indices within a node, the
/// head first) and where it meets the other nodes.
struct NcclTreeChain {
  std::vector<int> chain;
  NcclTreePattern pattern = NcclTreePattern::Tree;
  friend bool operator==(const NcclTreeChain &, const NcclTreeChain &) = default;
};
/// The parent of `node` in NCCL's tree `tree` (0 or 1) of its double binary tree over `nodes`
/// nodes, -1 for the root. Tree 0 is NCCL's binary tree (node 0 the root, with one child; the odd
/// nodes leaves); tree 1 its mirror image (an even count) or the same shifted by one node (odd),
/// so that a node is a leaf in at least one of them and the network's load is even.
int nccl_tree_parent_node(int nodes, int node, int tree);
/// The tree of `tree`'s chain on every node, the nodes' chains in NCCL's tree `which` (above),
/// as each rank's parent (-1 for the root).
std::vector<int> nccl_tree_parents(int nodes, const NcclTreeChain &tree, int which = 0);
/// Which of NCCL's two trees channel `channel` of `channels` runs: NCCL doubles its tree graph's
/// channels, the first half on tree 0 and the second on tree 1 (one channel: tree 0).
constexpr int nccl_channel_tree_index(int channel, int channels) {
  return channels > 1 && channel >= channels / 2 ? 1 : 0;
}
/// The chains of nccl_channel_trees and nccl_ring_ordered_trees (pattern Tree).
std::vector<NcclTreeChain> nccl_channel_tree_chains(int gpus_per_node, int nics_per_node,
                                                    int channels);
std::vector<NcclTreeChain> nccl_ring_ordered_chains(int nodes,
                                                    const std::vector<std::vector<RankId>> &rings);
/// NCCL's tree for each of `channels` channels: channel c's chains start at the first GPU of NIC
/// c mod NICs, so that the channels use every NIC.
std::vector<std::vector<int>> nccl_channel_trees(int nodes, int gpus_per_node, int nics_per_node,
                                                 int channels);
/// NCCL's tree for each channel across nodes, each node's chain in the order of that channel's
/// ring (`rings`: NCCL's rings across `nodes` nodes, node-major): NCCL searches its tree graph
/// as it searches rings, so on a fixed mesh the channels' chains use different links as their
/// rings do. (Behind a switch every order crosses the same ports; nccl_channel_trees' chains
/// from each NIC's GPU in index order stand there.)
std::vector<std::vector<int>>
nccl_ring_ordered_trees(int nodes, const std::vector<std::vector<RankId>> &rings);

/// NCCL's tree per channel on a plain topology: across nodes (a two-level hierarchy of several
/// nodes) its chains and binary tree (nccl_channel_trees); on one node, one tree over the
/// topology's bidirectional links on every channel, or, where GPUs meet only through switches
/// (PCIe bridges, CPU sockets), NCCL's chain inside a node in the order of each channel's
/// searched ring (`rings`, one per channel; every caller passes its search's rings, so that no
/// caller builds a different tree). Fails when there is neither.
[[nodiscard]] Expected<std::vector<std::vector<int>>>
nccl_topology_trees(const Topology &topology, int channels,
                    const std::vector<std::vector<RankId>> &rings);

/// NCCL's Alltoall: every rank sends part j of its input to rank j directly and receives rank
/// j's part into output part j (grouped point-to-point), each part over `channels_per_peer`
/// channels with a sending and a receiving thread block each.
[[nodiscard]] Expected<Program> nccl_alltoall_program(int ranks, Protocol protocol,
                                                      int channels_per_peer = 1);
/// The same with the peers of another node (ranks are numbered node by node, `gpus_per_node`
/// each) on `net_channels_per_peer` channels: NCCL gives a network peer fewer channels than an
/// NVLink peer. A peer's part is cut into the counts' least common multiple of chunks, each
/// channel moving its share of them in one step.
[[nodiscard]] Expected<Program> nccl_alltoall_program(int ranks, Protocol protocol,
                                                      int channels_per_peer, int gpus_per_node,
                                                      int net_channels_per_peer);

/// NCCL's PAT Allgather for one GPU per node, as logarithmic steps: at step k each rank sends the
/// 2^k parts it holds to the rank 2^k behind it and receives the next 2^k from the rank 2^k
/// ahead (Bruck's schedule, which PAT's aggregated trees follow for Allgather).
[[nodiscard]] Expected<Program> nccl_pat_allgather_program(int ranks, Protocol protocol);

/// NCCL's PAT ReduceScatter for one GPU per node: the PAT Allgather's steps transposed, from
/// the farthest distance down, partial sums in scratch and reduced on receipt.
[[nodiscard]] Expected<Program> nccl_pat_reducescatter_program(int ranks, Protocol protocol);

/// NCCL 2.30's predicted time in microseconds for a ring collective on one node (docs/cost-model.md
/// cost-models 3.1): base latency + steps x per-hop latency + bytes / algorithm bandwidth, with
/// bus bandwidth nChannels x per-channel bandwidth scaled by the protocol's factor.
struct NcclRingParameters {
  int ranks = 8;
  int channels = 1;
  double channel_gbps = 20; ///< bwIntra chosen by NCCL's search
  Protocol protocol = Protocol::Simple;
  bool nvlink = true; ///< per-hop latency of NVLink, else PCIe
};
double nccl_ring_time_us(CollectiveKind kind, double bytes, const NcclRingParameters &p);

} // namespace syncoll::nccl
