// Topology: ranks, directed links and the bandwidth relations that cap sets of links together.
//
// This is SCCL's bandwidth relation B (SCCL, section 3.2.1) with per-link costs added for the
// simulator: a link carries `capacity` chunks per round (its multiplicity; DGX-1's doubled NVLinks
// have capacity 2), a relation caps the sum over its links (a switch port, a shared PCIe root, a
// NIC). Link multiplicity is a capacity, never parallel edges.
//
// A cluster's fabric has vertices that are not ranks: switches. They are numbered after the ranks
// (vertex num_ranks + i is switch i), links may start or end at them, and a transfer between two
// ranks crosses them on its route. Synthesis counts chunks on rank-to-rank links only and needs a
// topology without switches; the simulators route through them.
#pragma once

#include "model/diagnostics.h"
#include "model/ids.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll {

/// A directed link between two vertices: ranks, or switches (vertex num_ranks + switch index).
struct Link {
  RankId src;
  RankId dst;
  /// Chunks per round (SCCL, section 3.2.1).
  int capacity = 1;
  /// Start-up latency of one transfer on this link.
  Nanoseconds alpha;
  /// Throughput of the whole link (all of its capacity together).
  BytesPerNs bandwidth;

  friend bool operator==(const Link &, const Link &) = default;
};

/// How the simulator shares a relation among transfers that overlap in time (synthesis only
/// counts chunks per round and ignores it).
enum class RelationSharing {
  Fifo, ///< transfers hold the relation one after another, first come first served
  Fair, ///< transfers share it at once, max-min fair (SimGrid's LMM; cost-models.md 7.2)
};

/// A set of links whose sends in one round are capped together.
struct BandwidthRelation {
  std::string name;
  std::vector<LinkId> links; ///< Sorted, no duplicates.
  int capacity = 1;          ///< Chunks per round over all `links` together.
  RelationSharing sharing = RelationSharing::Fifo;

  friend bool operator==(const BandwidthRelation &, const BandwidthRelation &) = default;
};

/// One level of a hierarchy, outermost first: {"node", 2}, {"gpu", 8}.
struct HierarchyLevel {
  std::string name;
  int size = 1;

  friend bool operator==(const HierarchyLevel &, const HierarchyLevel &) = default;
};

/// Ranks numbered in mixed radix over the levels (rank = node * gpus + gpu for two levels), and
/// the network interfaces of each outermost unit.
struct Hierarchy {
  std::vector<HierarchyLevel> levels;
  int nics_per_node = 0;
  BytesPerNs nic_bandwidth;

  bool empty() const { return levels.empty(); }
  friend bool operator==(const Hierarchy &, const Hierarchy &) = default;
};

/// Unvalidated input to Topology::create. Relations name their links by endpoints so that a draft
/// can be written before link ids exist.
struct TopologyDraft {
  struct Relation {
    std::string name;
    std::vector<std::pair<RankId, RankId>> links;
    int capacity = 1;
    RelationSharing sharing = RelationSharing::Fifo;
  };
  std::string name;
  int num_ranks = 0;
  std::vector<std::string> switches; ///< vertex num_ranks + i is switches[i]
  std::vector<Link> links;
  std::vector<Relation> relations;
  Hierarchy hierarchy;
};

class Topology {
public:
  /// Validates a draft: link ends in range (ranks, then switches), unique switch names, no self or
  /// duplicate links, positive capacities and
  /// bandwidths, non-negative latencies, relations over existing links, a hierarchy whose sizes
  /// multiply to the rank count. Diagnostics carry JSON pointers into the draft's JSON form
  /// ("/links/3/capacity"). Links are stored sorted by (src, dst), so equal topologies compare
  /// and serialize equal whatever order the draft listed them in.
  [[nodiscard]] static Expected<Topology> create(TopologyDraft draft);

  const std::string &name() const { return name_; }
  int num_ranks() const { return num_ranks_; }
  /// Switch vertices: switch i is vertex num_ranks() + i.
  const std::vector<std::string> &switches() const { return switches_; }
  int num_switches() const { return static_cast<int>(switches_.size()); }
  int num_vertices() const { return num_ranks_ + num_switches(); }
  bool is_switch(RankId vertex) const { return vertex.value() >= num_ranks_; }
  /// A rank's number, or a switch's name.
  std::string vertex_name(RankId vertex) const;
  /// Whether a transfer from rank `src` can reach rank `dst`: a direct link, or a link into a
  /// switch fabric (switches connected by links) that has a link out to `dst`.
  bool reaches(RankId src, RankId dst) const;
  const std::vector<Link> &links() const { return links_; }
  const Link &link(LinkId id) const;
  std::optional<LinkId> find_link(RankId src, RankId dst) const;
  const std::vector<BandwidthRelation> &relations() const { return relations_; }
  const Hierarchy &hierarchy() const { return hierarchy_; }
  /// The ranks of one unit of the outermost hierarchy level (a node: rank / ranks_per_node() is
  /// its node), every rank without a hierarchy.
  int ranks_per_node() const;
  /// Links out of and into a vertex (a rank or a switch).
  std::vector<LinkId> out_links(RankId vertex) const;
  std::vector<LinkId> in_links(RankId vertex) const;
  /// Capacity of the link src->dst, 0 where there is none.
  int capacity(RankId src, RankId dst) const;
  /// The draft this topology round-trips through (relations by endpoints).
  TopologyDraft to_draft() const;

  friend bool operator==(const Topology &, const Topology &) = default;

private:
  Topology() = default;
  void number_fabrics();
  std::string name_;
  int num_ranks_ = 0;
  std::vector<std::string> switches_;
  std::vector<Link> links_;
  std::vector<BandwidthRelation> relations_;
  Hierarchy hierarchy_;
  std::vector<int32_t> out_begin_; ///< CSR offsets into links_ by source vertex.
  /// Per switch: its fabric (the switches it is connected to through switches), numbered from 0.
  std::vector<int32_t> fabric_of_switch_;
  /// Per rank: the fabrics it has a link into, and those with a link out to it.
  std::vector<std::vector<int32_t>> enters_;
  std::vector<std::vector<int32_t>> leaves_;
};

} // namespace syncoll
