// Topology: ranks, directed links and the bandwidth relations that cap sets of links together.
//
// This is SCCL's bandwidth relation B (SCCL, section 3.2.1) with per-link costs added for the
// simulator: a link carries `capacity` chunks per round (its multiplicity; DGX-1's doubled NVLinks
// have capacity 2), a relation caps the sum over its links (a switch port, a shared PCIe root, a
// NIC). Link multiplicity is a capacity, never parallel edges.
#pragma once

#include "model/diagnostics.h"
#include "model/ids.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll {

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
  std::vector<Link> links;
  std::vector<Relation> relations;
  Hierarchy hierarchy;
};

class Topology {
public:
  /// Validates a draft: ranks in range, no self or duplicate links, positive capacities and
  /// bandwidths, non-negative latencies, relations over existing links, a hierarchy whose sizes
  /// multiply to the rank count. Diagnostics carry JSON pointers into the draft's JSON form
  /// ("/links/3/capacity"). Links are stored sorted by (src, dst), so equal topologies compare
  /// and serialize equal whatever order the draft listed them in.
  [[nodiscard]] static Expected<Topology> create(TopologyDraft draft);

  const std::string &name() const { return name_; }
  int num_ranks() const { return num_ranks_; }
  const std::vector<Link> &links() const { return links_; }
  const Link &link(LinkId id) const;
  std::optional<LinkId> find_link(RankId src, RankId dst) const;
  const std::vector<BandwidthRelation> &relations() const { return relations_; }
  const Hierarchy &hierarchy() const { return hierarchy_; }
  std::vector<LinkId> out_links(RankId rank) const;
  std::vector<LinkId> in_links(RankId rank) const;
  /// Capacity of the link src->dst, 0 where there is none.
  int capacity(RankId src, RankId dst) const;
  /// The draft this topology round-trips through (relations by endpoints).
  TopologyDraft to_draft() const;

  friend bool operator==(const Topology &, const Topology &) = default;

private:
  Topology() = default;
  std::string name_;
  int num_ranks_ = 0;
  std::vector<Link> links_;
  std::vector<BandwidthRelation> relations_;
  Hierarchy hierarchy_;
  std::vector<int32_t> out_begin_; ///< CSR offsets into links_ by source rank.
};

} // namespace syncoll
