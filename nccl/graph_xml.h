// NCCL's graph file, its ring graph: what NCCL_GRAPH_DUMP_FILE writes and NCCL_GRAPH_FILE reads
// back in place of the search ("dump the graph, edit the rings, inject it back"):
//
//   <graphs version="1">
//     <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="20" speedinter="20"
//            latencyinter="0" typeintra="NVL" typeinter="PIX" samechannels="0">
//       <channel><gpu dev="0"/><gpu dev="1"/>...</channel>
//     </graph>
//   </graphs>
//
// pattern 4 is NCCL's ring; a channel lists the GPUs (by CUDA device) in ring order. One node
// only: a channel across nodes also lists its `<net>` ends, which this reader refuses.
#pragma once

#include "model/diagnostics.h"
#include "model/topology.h"
#include "nccl/search.h"

#include <string>
#include <string_view>
#include <vector>

namespace syncoll::nccl {

/// The ring graph as NCCL writes it; `dev_of_rank[r]` is rank r's CUDA device (the identity for
/// a library topology). typeintra is NVL where every hop is a link, else the farthest PCIe path a
/// hop takes (PIX one switch, PXB several, PHB through a CPU, SYS across sockets).
[[nodiscard]] std::string ring_graph_xml(const NcclRingGraph &graph, const Topology &topology,
                                         const std::vector<int> &dev_of_rank);

struct GraphFileChannel {
  std::vector<int> devs; ///< in ring order
  SourceLocation where;
};
struct GraphFile {
  std::vector<GraphFileChannel> channels; ///< of the ring graph (pattern 4)
  double speed_intra = 0;
  SourceLocation where; ///< the ring <graph>
};

/// The ring graph of `text` (malformed XML, no ring graph, a channel without GPUs or with a
/// `<net>`, an attribute that is not a number: one located error).
[[nodiscard]] Expected<GraphFile> read_nccl_graph_xml(std::string_view text,
                                                      const std::string &file);

/// The graph's rings on `topology`, or why NCCL could not run them there (a verdict, located at
/// the channel): a GPU the topology lacks, a channel that misses or repeats one, or a hop between
/// GPUs the topology does not join.
struct GraphRings {
  NcclRingGraph graph;
  std::optional<Diagnostic> broken;
};
[[nodiscard]] GraphRings rings_of_graph(const GraphFile &file, const Topology &topology,
                                        const std::vector<int> &dev_of_rank);

} // namespace syncoll::nccl
