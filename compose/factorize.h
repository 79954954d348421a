// A composition factorized for a machine's hierarchy (HiCCL's optimizations; docs/compose.md):
// every primitive becomes point-to-point copies and reductions along a tree whose levels are the
// hierarchy's, striped over several GPUs of the root's top-level group (one NIC each), chained as
// a ring across top-level groups, and pipelined in pieces. The result is a chunk-DSL program that
// lowers, verifies and simulates like any other.
#pragma once

#include "compose/composition.h"
#include "lowering/dsl.h"
#include "model/topology.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::compose {

/// How one level's hops travel: HiCCL's communication library per level, in the topology's terms
/// (NCCL's transports: P2P between GPUs of a node, NET through the NICs).
enum class Transport {
  Auto, ///< the pair's own link when there is one, else a route through the switch fabric
  P2p,  ///< the link between the two GPUs inside their node (NVLink, PCIe peer-to-peer)
  Net,  ///< through the NICs: a link between nodes, or the switch fabric even inside a node
};

/// The transport's name as the CLI takes it ("auto", "p2p", "net"), and back.
std::string_view transport_name(Transport transport);
std::optional<Transport> parse_transport(std::string_view name);

struct Hierarchy {
  /// Group counts per level, outermost first (nodes, GPUs per node, ...); their product is the
  /// rank count. Ranks are numbered so that consecutive ranks share the innermost groups.
  std::vector<int> factors;
  /// Parts each primitive is split into at the root's top-level group, each sent across the top
  /// level by a different GPU of that group (so through a different NIC). Divides the top-level
  /// group size.
  int stripes = 1;
  /// Top-level groups chained one after another; 1 is a pure tree (the root's group sends to
  /// every other group), the top-level group count a pure ring.
  int ring_nodes = 1;
  /// Pieces each stripe is cut into, sent one after another so that the tree's stages overlap.
  int pipeline = 1;
  /// Per level, outermost first: the links its hops use. Empty: Auto at every level.
  std::vector<Transport> transports;
};

/// One copy or reduction of the factorized plan, for drawing and tests.
struct Hop {
  bool reduces = false;
  int from = 0;
  int to = 0;
  int level = 0;    ///< hierarchy level the hop crosses (0: the outermost; -1: a local copy)
  int stage = 0;    ///< depth in its part's tree
  int time = 0;     ///< wavefront step it is emitted at
  int channel = -1; ///< -1: a local copy
};

struct Factorized {
  lowering::DslProgram program;
  /// The machine as the plan uses it: the topology less the links its levels' transports leave
  /// unused (in-node links of a Net level). The program is lowered, verified and simulated on it.
  Topology topology;
  std::vector<Hop> hops;
  int steps = 0; ///< wavefront steps (HiCCL's S + m - 1 for one primitive)
};

/// Fails (bad input) for factors that do not multiply to the rank count, stripes that do not
/// divide the top-level group, ring nodes outside 1..top-level groups, a pipeline depth below 1,
/// a transport list whose length is not the level count, and for a hop its level's transport
/// cannot carry (a P2p hop between nodes or without a link, a Net hop inside a node without a
/// switch fabric to route it, any hop between ranks the topology does not connect).
[[nodiscard]] Expected<Factorized> factorize(const Composition &composition,
                                             const CollectiveSpec &collective,
                                             const Hierarchy &hierarchy, const Topology &topology,
                                             lowering::DslOptions options = {});

/// `factors` checked against `ranks`, with the defaults HiCCL would start from: one level of
/// `ranks` when empty.
[[nodiscard]] Expected<Hierarchy> checked(Hierarchy hierarchy, int ranks);

} // namespace syncoll::compose
