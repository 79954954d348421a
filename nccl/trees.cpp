// NCCL's tree shapes: chains through each node's GPUs joined across nodes as NCCL's tree graph
// patterns say (nccl/algorithms.h).
#include "model/invariant.h"
#include "nccl/algorithms.h"

#include <algorithm>
#include <fmt/format.h>

namespace syncoll::nccl {

std::vector<int> nccl_tree_parents(int nodes, const std::vector<int> &chain) {
  return nccl_tree_parents(nodes, NcclTreeChain{chain, NcclTreePattern::Tree});
}

namespace {

// NCCL's binary tree over nodes (ncclGetBtree): a node's parent clears its lowest set bit and
// sets the next one up, or only clears it where that is past the last node; node 0 is the root,
// with one child, so half the nodes (the odd ones) are leaves.
int btree_parent(int nodes, int node) {
  if (node == 0)
    return -1;
  int bit = 1;
  while ((bit & node) == 0)
    bit <<= 1;
  const int up = (node ^ bit) | (bit << 1);
  return up < nodes ? up : node ^ bit;
}

} // namespace

int nccl_tree_parent_node(int nodes, int node, int tree) {
  SYNCOLL_INVARIANT(node >= 0 && node < nodes && (tree == 0 || tree == 1),
                    "a node of the tree and one of NCCL's two trees");
  if (tree == 0)
    return btree_parent(nodes, node);
  // NCCL's second tree (ncclGetDtree): the first seen in a mirror on an even count, shifted by
  // one node on an odd count; either way the first tree's leaves are its inner nodes.
  if (nodes % 2 == 0) {
    const int up = btree_parent(nodes, nodes - 1 - node);
    return up < 0 ? -1 : nodes - 1 - up;
  }
  const int up = btree_parent(nodes, (node - 1 + nodes) % nodes);
  return up < 0 ? -1 : (up + 1) % nodes;
}

std::vector<int> nccl_tree_parents(int nodes, const NcclTreeChain &tree, int which) {
  const std::vector<int> &chain = tree.chain;
  const int gpus = static_cast<int>(chain.size());
  std::vector<int> parent(size_t(nodes) * size_t(gpus));
  auto rank = [&](int node, int k) { return node * gpus + chain[size_t(std::min(k, gpus - 1))]; };
  // The place in its parent node's chain where node n's head attaches (a first child is the
  // one below its parent, as NCCL's parentChildType says).
  auto attach = [&](int n, int up) {
    const bool first_child = n < up;
    switch (tree.pattern) {
    case NcclTreePattern::Tree:
      return 0;
    case NcclTreePattern::BalancedTree:
      return first_child ? 1 : 0;
    case NcclTreePattern::SplitTree:
      return 1;
    }
    SYNCOLL_UNREACHABLE("a tree pattern without its attachment");
  };
  for (int node = 0; node < nodes; ++node) {
    const int up = nccl_tree_parent_node(nodes, node, which);
    for (int k = 0; k < gpus; ++k)
      parent[size_t(rank(node, k))] = k > 0     ? rank(node, k - 1)
                                      : up >= 0 ? rank(up, attach(node, up))
                                                : -1;
  }
  return parent;
}

std::vector<int> nccl_tree_parents(int nodes, int gpus, int first_gpu) {
  // Within a node the chain runs first_gpu, first_gpu + 1, ... (wrapping).
  std::vector<int> chain;
  for (int k = 0; k < gpus; ++k)
    chain.push_back((first_gpu + k) % gpus);
  return nccl_tree_parents(nodes, chain);
}

std::vector<NcclTreeChain> nccl_ring_ordered_chains(int nodes,
                                                    const std::vector<std::vector<RankId>> &rings) {
  std::vector<NcclTreeChain> chains;
  for (const std::vector<RankId> &ring : rings) {
    SYNCOLL_INVARIANT(nodes >= 1 && ring.size() % size_t(nodes) == 0,
                      "a ring across nodes holds every node's GPUs");
    const int gpus = static_cast<int>(ring.size()) / nodes;
    NcclTreeChain tree;
    for (int k = 0; k < gpus; ++k)
      tree.chain.push_back(ring[size_t(k)].value() % gpus);
    chains.push_back(std::move(tree));
  }
  return chains;
}

std::vector<NcclTreeChain> nccl_channel_tree_chains(int gpus, int nics_per_node, int channels) {
  const int nics = std::max(1, std::min(nics_per_node, gpus));
  std::vector<NcclTreeChain> chains;
  for (int c = 0; c < channels; ++c) {
    NcclTreeChain tree;
    const int first = (c % nics) * gpus / nics;
    for (int k = 0; k < gpus; ++k)
      tree.chain.push_back((first + k) % gpus);
    chains.push_back(std::move(tree));
  }
  return chains;
}

namespace {
std::vector<std::vector<int>> parents_of(int nodes, const std::vector<NcclTreeChain> &chains) {
  std::vector<std::vector<int>> trees;
  for (size_t c = 0; c < chains.size(); ++c)
    trees.push_back(
        nccl_tree_parents(nodes, chains[c], nccl_channel_tree_index(int(c), int(chains.size()))));
  return trees;
}
} // namespace

std::vector<std::vector<int>>
nccl_ring_ordered_trees(int nodes, const std::vector<std::vector<RankId>> &rings) {
  return parents_of(nodes, nccl_ring_ordered_chains(nodes, rings));
}

std::vector<std::vector<int>> nccl_channel_trees(int nodes, int gpus, int nics_per_node,
                                                 int channels) {
  return parents_of(nodes, nccl_channel_tree_chains(gpus, nics_per_node, channels));
}

Expected<std::vector<std::vector<int>>>
nccl_topology_trees(const Topology &topology, int channels,
                    const std::vector<std::vector<RankId>> &rings) {
  const Hierarchy &h = topology.hierarchy();
  if (h.levels.size() == 2 && h.levels.front().size > 1)
    return nccl_channel_trees(h.levels.front().size, h.levels.back().size, h.nics_per_node,
                              channels);
  if (auto parent = find_tree(topology, RankId(0)))
    return std::vector<std::vector<int>>(size_t(channels), *parent);
  // No GPU links a neighbour directly: NCCL searches its tree graph as it searches rings, and a
  // node's tree is a chain through that order.
  if (!rings.empty())
    return nccl_ring_ordered_trees(1, rings);
  return fail({}, fmt::format("topology '{}' has no tree over bidirectional links and no ring "
                              "to chain its GPUs along",
                              topology.name()));
}

} // namespace syncoll::nccl
