// NCCL's graph file: what NCCL_GRAPH_DUMP_FILE writes and NCCL_GRAPH_FILE reads back in place of
// the search ("dump the graph, edit the rings, inject it back"):
//
//   <graphs version="1">
//     <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="20" speedinter="20"
//            latencyinter="0" typeintra="NVL" typeinter="PIX" samechannels="0">
//       <channel><net dev="0"/><gpu dev="0"/>...<gpu dev="7"/><net dev="0"/></channel>
//     </graph>
//     <graph id="1" pattern="3" ...>...</graph>
//   </graphs>
//
// NCCL finds a graph by its id: 0 the ring graph (pattern 4), 1 the tree graph (pattern 1, 2 or
// 3), 2 and 4 CollNet's, 3 NVLS's (pattern 5). A graph lists one node: every node runs the same
// channels. A channel lists the node's GPUs (CUDA devices) in order: a ring's order, or a tree's
// chain from the GPU that meets the other nodes down; an NVLS channel lists its head alone (NCCL
// reads a channel's first GPU as its head and nothing after it). Across nodes a
// channel begins and ends with the network devices (NICs) it enters and leaves the node by; on
// one node NCCL has no network and writes none.
#pragma once

#include "model/diagnostics.h"
#include "model/topology.h"
#include "nccl/algorithms.h"
#include "nccl/search.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::nccl {

struct GraphFileChannel {
  std::vector<int> devs; ///< GPUs in order
  std::vector<int> nets; ///< the network devices before the GPUs, then after them
  SourceLocation where;
};
struct GraphFileGraph {
  int id = 0;
  int pattern = 0;
  std::vector<GraphFileChannel> channels;
  double speed_intra = 0; ///< GB/s per channel
  double speed_inter = 0;
  /// The `typeintra` NCCL's tuning reads (LL128 only on NVLink paths); none where the file
  /// leaves it out, and the rings' farthest hop stands for it.
  std::optional<NcclPathType> type_intra;
  /// The `typeinter` it reads across nodes (LL128 only where GPUs reach their NICs near
  /// enough); none where the file leaves it out, and syncoll's PIX stands for it.
  std::optional<NcclPathType> type_inter;
  SourceLocation where;
};
struct GraphFile {
  std::optional<GraphFileGraph> ring; ///< pattern 4
  std::optional<GraphFileGraph> tree; ///< id 1, pattern 1, 2 or 3
  std::optional<GraphFileGraph> nvls; ///< id 3, pattern 5
  /// Graphs the file holds that steer what syncoll does not read from it (CollNet's), as
  /// "id 2 (pattern 6)".
  std::vector<std::string> unread;
  SourceLocation where; ///< the <graphs> element
};

/// The graphs of `text` (malformed XML, no ring, tree or NVLS graph, a channel without GPUs, an
/// attribute that is not a number: one located error).
[[nodiscard]] Expected<GraphFile> read_nccl_graph_xml(std::string_view text,
                                                      const std::string &file);

/// The ring graph of one node as NCCL writes it; `dev_of_rank[r]` is rank r's CUDA device (the
/// identity for a library topology). typeintra is the path type NCCL's search found the rings
/// at (NcclRingGraph::type_intra: NVL where every hop is a link, else PIX one switch, PXB
/// several, PHB through a CPU, SYS across sockets).
[[nodiscard]] std::string ring_graph_xml(const NcclRingGraph &graph,
                                         const std::vector<int> &dev_of_rank);

/// What NCCL runs across `nodes` nodes of `gpus_per_node` GPUs and `nics_per_node` NICs (GPU g's
/// NIC is g x NICs / GPUs), as graphs of one node.
struct SystemGraphShape {
  int nodes = 1;
  int gpus_per_node = 0;
  int nics_per_node = 1;
  std::vector<int> dev_of_gpu; ///< per GPU of a node: its CUDA device
  int nic_of(int gpu) const { return gpu * nics_per_node / gpus_per_node; }
};

/// The ring graph (id 0), tree graph (id 1) and, where the machine has NVLS, the NVLS graph (id
/// 3) of a machine's NCCL model as NCCL writes them: each ring's stretch through the first node,
/// entering at its first GPU's NIC and leaving at its last's; each tree channel's chain, its
/// head's NIC both ways (pattern 3, NCCL_TOPO_PATTERN_TREE: every network hop at the head, as
/// syncoll's tree runs); each NVLS head, across nodes with its NIC both ways.
/// A tree graph read from a file keeps its pattern: under balanced and split trees (patterns 1
/// and 2) a channel leaves through its second GPU's NIC, as NCCL spreads them.
/// The ring graph carries the rings' typeintra and typeinter, the tree graph `tree_types` where
/// given (else the rings'), the NVLS graph NVL and the rings' typeinter.
[[nodiscard]] std::string system_graphs_xml(const NcclRingGraph &rings,
                                            const std::vector<NcclTreeChain> &trees,
                                            const NcclNvlsGraph *nvls,
                                            const SystemGraphShape &shape,
                                            const NcclTreeGraphTypes &tree_types = {});

/// The graph's rings on `topology` (one node), or why NCCL could not run them there (a verdict,
/// located at the channel): a GPU the topology lacks, a channel that misses or repeats one, or a
/// hop between GPUs the topology does not join.
struct GraphRings {
  NcclRingGraph graph;
  std::optional<Diagnostic> broken;
};
[[nodiscard]] GraphRings rings_of_graph(const GraphFileGraph &ring, const Topology &topology,
                                        const std::vector<int> &dev_of_rank);

/// The file's rings, trees and NVLS heads run on every node of a machine (`system`, node-major),
/// or why NCCL could not run them there (a verdict at the channel): a channel that misses or
/// repeats a GPU, a hop the node does not join, an NVLS head the node lacks or that heads two
/// channels, across nodes a channel without its network devices or one naming a NIC the node
/// lacks. Rings cross from node n's last GPU to node n + 1's first; trees
/// join the nodes' chains as the tree's pattern says. A channel meeting the network at a NIC
/// other than the GPU's own (NCCL reaches it through PCIe or an NVLink peer) runs through the
/// GPU's own NIC, and `notes` says so: syncoll's machines send a GPU's traffic through its NIC.
struct SystemGraphs {
  std::optional<NcclRingGraph> rings;
  std::optional<std::vector<NcclTreeChain>> trees;
  std::optional<NcclNvlsGraph> nvls;
  NcclTreeGraphTypes tree_types; ///< the tree graph's typeintra and typeinter, where it gives them
  std::optional<Diagnostic> broken;
  std::vector<std::string> notes;
};
[[nodiscard]] SystemGraphs graphs_on_system(const GraphFile &file, const Topology &system,
                                            const SystemGraphShape &shape);

} // namespace syncoll::nccl
