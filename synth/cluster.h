// Allgather on a cluster of boxes (docs/scale.md, "Clusters of boxes"): B boxes of g GPUs, the
// GPUs of a box behind a switch (NVSwitch, each GPU a port of s GB/s), every GPU with a NIC of
// n GB/s of its own into a network, unwound to links as `multinode` draws it: non-blocking, or
// leaf groups of K boxes whose links to other groups share an oversubscribed uplink.
//
// Each share is cut into C pieces. A piece reaches another box of its group one of two ways:
// - by rail: GPU i of the owner's box sends it to GPU i of the other box, which forwards it to
//   the box's other g - 1 GPUs over the switch one step later (1 NIC send, g - 1 switch sends);
// - directly: the owner sends it to every GPU of the other box (g NIC sends, none in the box).
// A piece reaches another group once, by rail over the spine, at the box in the owner's position;
// that box forwards it by rail to the group's other K - 1 boxes a step later (over the leaf), each
// box forwarding it in the box as above.
// A GPU's own share goes to its box's GPUs in step 1. Rail pieces fill the NICs while the box
// switches forward the pieces of the step before, so a step costs the larger of the two, and the
// pieces per step fall geometrically towards the end so that the last step, in which only the
// switches work, is short. How many pieces each step carries is a small linear program (solved
// exactly by z3), its answer rounded to whole pieces.
//
// The same pieces pipelined (every step's sends in flight at once) are one or two trees per
// share: on NIC-bound clusters the rail tree alone meets the cut bound; where a GPU's own links
// bind (few boxes), the direct tree takes the exact share that balances NIC and switch.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/fraction.h"
#include "model/topology.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::synth {

/// The machine read from a topology: its hierarchy and the bandwidths the plan balances.
struct BoxCluster {
  int boxes = 0;
  int gpus = 0;            ///< per box
  int gpus_per_nic = 1;    ///< GPUs that share one NIC (consecutive GPUs)
  int boxes_per_group = 0; ///< K: boxes under one leaf; all of them when nothing is shared
  /// Exact bandwidths in units (model/cut_certificate.h) of one NIC (shared by gpus_per_nic
  /// GPUs), of one GPU's way into its
  /// box's switch (its links to the box's other GPUs together, or the relation over them), and
  /// of a group's uplink (0 with one group).
  int64_t nic_units = 0;
  int64_t port_units = 0;
  int64_t uplink_units = 0;
  int ranks() const { return boxes * gpus; }
  int groups() const { return boxes / boxes_per_group; }
};

/// Reads a topology without switches whose hierarchy is boxes x GPUs with a NIC per GPU or per
/// few GPUs, every GPU linked to the other GPUs of its box and to GPU i of every other box, and
/// any relations over links of several sources and destinations from more than one box the "up"
/// and "down" relations of equal groups of consecutive boxes. Fails with what is missing.
[[nodiscard]] Expected<BoxCluster> box_cluster(const Topology &topology);

/// How many pieces each step carries.
struct ClusterPlan {
  BoxCluster cluster;
  int pieces = 1; ///< C: pieces per share
  /// Per step, the pieces every GPU receives: by rail within its group, over the spine from
  /// another group, from the box of its group that took that piece over the spine (each
  /// forwarded in the box the next step; the last step has none), and the units sent directly
  /// (each to all g GPUs of a box of the group).
  std::vector<int64_t> rail;
  std::vector<int64_t> spine;
  std::vector<int64_t> leaf;
  std::vector<int64_t> direct;

  int num_steps() const { return static_cast<int>(rail.size()); }
  /// The sends of `step` (0-based), in slots in which every GPU sends one piece and receives one;
  /// chunk p * N + r is piece p of rank r's share.
  void sends(int step, std::vector<Send> &out) const;
  /// The step-synchronous cost this plan was balanced for, from the two bandwidths alone, in ns
  /// per byte of one share.
  Fraction modelled_cost(int64_t units_per_gbps) const;
};

/// What a plan is balanced for: the fewest ns step by step (any mix of rail and direct pieces), or
/// the pipelined trees' exact mix, which meets the cut bound when every step is in flight at once.
enum class ClusterPlanGoal { StepSynchronous, PipelinedTrees };

/// Plans `steps` steps of `pieces` pieces per share. Fails for fewer than 1 step or piece, fewer
/// than 3 steps with several groups (spine, leaf, box), and a rounding that leaves a leaf piece
/// ahead of its spine piece (more pieces help).
[[nodiscard]] Expected<ClusterPlan> plan_box_cluster(const BoxCluster &cluster, int steps,
                                                     int pieces, ClusterPlanGoal goal);

/// The pieces per share with which the pipelined trees' direct share is whole: the smallest
/// multiple of what it needs that is at least `at_least`.
int box_cluster_pieces(const BoxCluster &cluster, int at_least);

/// The least time, in ns per byte of one share, of any Allgather of `steps` synchronous steps on
/// the cluster, from a linear program over one box that any such schedule satisfies: the bound
/// its dual multipliers (found by z3) prove, re-derived by check_linear_bound
/// (model/linear_bound.h) in exact arithmetic. A GPU takes in what its box lacks only over its NIC
/// (at most its share of the NIC a step), and over the switch only what some other GPU of its box
/// held a step before; a share that enters the box in the last step reaches only the GPUs it enters
/// at. Leaf groups and everything sent out are left unconstrained, so the limit holds for them too
/// (loosely). The cut bound divided by this limit is the most any schedule of that many steps
/// reaches: where it is below a target, no planner can meet the target in those steps. Exact, or
/// rounded down to 10^-12 where the exact value does not fit in 64 bits.
[[nodiscard]] Expected<Fraction> box_cluster_step_limit(const BoxCluster &cluster, int steps,
                                                        int64_t units_per_gbps);

/// The cuts a cluster's Allgather bound comes from: every box but one (its NICs take in the
/// rest), every GPU but one (its NIC and its way into the box) and, with leaf groups, every group
/// but one (its uplink takes in the rest). Each is evaluated from the topology: the ranks outside
/// the set T need data from every rank inside over the links into T, whose bandwidth is at most
/// that of any cover of them by links and relations; the cover is chosen greedily (cheapest per
/// link first), and any cover gives a valid bound. No schedule beats the largest ratio.
struct ClusterCut {
  std::string name;
  int ranks_inside = 0;
  int64_t crossing_links = 0;
  std::vector<std::string> cover; ///< relation names, and "N links" for links covered alone
  int64_t bandwidth = 0;          ///< of the cover, in units
  Fraction lambda;                ///< ns per byte of one share
};
[[nodiscard]] Expected<std::vector<ClusterCut>> box_cluster_cuts(const Topology &topology,
                                                                 const BoxCluster &cluster);

struct ClusterSchedule {
  ClusterPlan plan;
  /// The cut with the larger ratio, and its lambda: a lower bound on any Allgather's time. When
  /// the pipelined trees take exactly that long, it is the cut bound B* and both are optimal.
  ClusterCut cut;
  int64_t units_per_gbps = 1;
  bool attained() const { return pipelined_cost == cut.lambda; }
  std::vector<int> rounds; ///< per step
  /// ns per byte of one share, evaluated on the topology's links and relations step by step
  /// (step-synchronous) and with every step in flight at once (pipelined trees).
  Fraction cost;
  Fraction pipelined_cost;
  Fraction efficiency;           ///< cut lambda / cost
  Fraction pipelined_efficiency; ///< cut lambda / pipelined_cost
};

/// Plans, then evaluates every send on the topology itself, against the cluster's cuts.
[[nodiscard]] Expected<ClusterSchedule> box_cluster_allgather(const Topology &topology, int steps,
                                                              int pieces, ClusterPlanGoal goal);

/// The schedule as an Algorithm (every send held in memory: ranks^2 x pieces x (g + 1) / g
/// of them).
Algorithm cluster_algorithm(const ClusterSchedule &schedule, const Topology &topology);

/// Allgather; ReduceScatter as the Allgather of the reversed topology run backwards with
/// reductions (its cuts and costs are that Allgather's, exactly); or Allreduce as that
/// ReduceScatter and then the Allgather, each in `steps` steps.
struct ClusterCollective {
  CollectiveKind kind = CollectiveKind::Allgather;
  std::optional<ClusterSchedule> reduce_scatter; ///< planned on the reversed topology
  std::optional<ClusterSchedule> allgather;
  /// Sums over the parts, in ns per byte of one share.
  Fraction lambda, cost, pipelined_cost;
  Fraction efficiency, pipelined_efficiency;
  int num_steps() const;
  /// The sends of `step`, streamed for timing: the ReduceScatter's (each Allgather send of the
  /// reversed topology turned around, a reduction), then the Allgather's, each part numbering
  /// its chunks as an Allgather does.
  void sends(int step, std::vector<Send> &out) const;
};

/// Fails as box_cluster_allgather does, and for collectives other than these three.
[[nodiscard]] Expected<ClusterCollective> box_cluster_collective(const Topology &topology,
                                                                 CollectiveKind kind, int steps,
                                                                 int pieces, ClusterPlanGoal goal);

/// As an Algorithm with the collective's own chunk numbering (compose_allreduce's buffer slots
/// for an Allreduce), for check_algorithm.
Algorithm cluster_collective_algorithm(const ClusterCollective &collective,
                                       const Topology &topology);

} // namespace syncoll::synth
