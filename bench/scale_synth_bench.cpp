// Synthesis at scale (docs/scale.md): the exact cut bound and breadth-first Allgather schedules
// against the published figures of ForestColl (its Python implementation on this machine kind,
// docs/references.md) and TACOS's known-answer All-Gather times, in the same link model.
//   ./build/ci/bench/scale_synth_bench [--quick]
// --quick leaves out the 1,024- and 4,096-GPU rows and compares with NCCL's ring on 256 GPUs
// instead of 1,024.
#include "model/collective_traits.h"
#include "model/text.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/search.h"
#include "nccl/steps.h"
#include "simulator/algorithm_sim.h"
#include "simulator/program_sim.h"
#include "synth/cluster.h"
#include "synth/cut_bound.h"
#include "synth/grid.h"
#include "synth/paced.h"
#include "synth/scale.h"
#include "synth/scale_choice.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace syncoll;

namespace {

double seconds_of(const std::function<void()> &work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Topology must(Expected<Topology> t) {
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().to_string().c_str());
    std::exit(2);
  }
  return std::move(*t);
}

// The 2D or 3D mesh of `shape`.
Topology mesh_of(const std::vector<int> &shape) {
  return shape.size() == 2 ? must(mesh2d(shape[0], shape[1]))
                           : must(mesh3d(shape[0], shape[1], shape[2]));
}

Topology dgx_boxes(int nodes, const Topology &box, double nic_gbps) {
  FatTree fabric;
  fabric.nics_per_node = box.num_ranks();
  fabric.nic_bandwidth = BytesPerNs{nic_gbps};
  return must(fat_tree(nodes, box, fabric));
}

struct BoundRow {
  std::string name;
  std::function<Topology()> topology;
  double unit_gbps;    ///< the anchor counts bandwidth in these (1 for GB/s)
  double anchor_bound; ///< its B*, in its units
  double anchor_s;     ///< its time for the bound alone; 0: not published
  bool large;
};

void bound_table(bool quick) {
  const std::vector<BoundRow> rows = {
      {"torus 4x4", [] { return must(torus2d(4, 4)); }, 50, 4.267, 0.05, false},
      {"torus 8x8", [] { return must(torus2d(8, 8)); }, 50, 4.063, 1.2, false},
      {"torus 16x16", [] { return must(torus2d(16, 16)); }, 50, 4.016, 19.9, false},
      {"torus 4x4x4", [] { return must(torus3d(4, 4, 4)); }, 50, 6.095, 1.6, false},
      {"torus 8x8x8", [] { return must(torus3d(8, 8, 8)); }, 50, 6.012, 127.7, false},
      {"torus 32x32", [] { return must(torus2d(32, 32)); }, 50, 4.004, 378, true},
      {"mesh 4x4", [] { return must(mesh2d(4, 4)); }, 50, 2.133, 0.02, false},
      {"mesh 8x8", [] { return must(mesh2d(8, 8)); }, 50, 2.032, 0.6, false},
      {"mesh 32x32", [] { return must(mesh2d(32, 32)); }, 50, 0, 0, true},
      {"hypercube 2^10", [] { return must(hypercube(10)); }, 50, 0, 0, true},
      {"DGX A100 x2", [] { return dgx_boxes(2, dgx_a100(), 25); }, 1, 346.67, 0.13, false},
      {"DGX A100 x8", [] { return dgx_boxes(8, dgx_a100(), 25); }, 1, 228.57, 1.4, false},
      {"DGX A100 x16", [] { return dgx_boxes(16, dgx_a100(), 25); }, 1, 213.33, 6.3, false},
      {"DGX H100 x2", [] { return dgx_boxes(2, dgx_h100(), 50); }, 1, 533.33, 0.08, false},
      {"DGX H100 x4", [] { return dgx_boxes(4, dgx_h100(), 50); }, 1, 516.13, 0.45, false},
      {"DGX H100 x8", [] { return dgx_boxes(8, dgx_h100(), 50); }, 1, 457.14, 0.8, false},
      {"DGX H100 x16", [] { return dgx_boxes(16, dgx_h100(), 50); }, 1, 426.67, 3.6, false},
      {"DGX H100 x128", [] { return dgx_boxes(128, dgx_h100(), 50); }, 1, 403.1, 0, true},
      {"DGX H100 x512", [] { return dgx_boxes(512, dgx_h100(), 50); }, 1, 400.8, 0, true},
  };
  fmt::print("The cut bound (Allgather), exact, with its certificate checked\n");
  fmt::print("{:<16} {:>6} {:>24} {:>12} {:>9} {:>10} {:>11} {:>9}\n", "topology", "GPUs",
             "B* GB/s (exact)", "decimal", "anchor", "ours s", "anchor s", "speedup");
  for (const BoundRow &row : rows) {
    if (quick && row.large)
      continue;
    const Topology t = row.topology();
    Expected<synth::CutBound> bound = tl::unexpected(Diagnostics{});
    const double s = seconds_of([&] { bound = synth::cut_bound(t, CutDirection::Leaving); });
    if (!bound) {
      fmt::print("{:<16} {}\n", row.name, bound.error().to_string());
      continue;
    }
    const double in_units = bound->bandwidth_gbps.value() / row.unit_gbps;
    fmt::print("{:<16} {:>6} {:>24} {:>12.3f} {:>9} {:>10.3f} {:>11} {:>9}\n", row.name,
               t.num_ranks(), to_string(bound->bandwidth_gbps), in_units,
               row.anchor_bound > 0 ? fmt::format("{:.3f}", row.anchor_bound) : "-", s,
               row.anchor_s > 0 ? fmt::format("{:.2f}", row.anchor_s) : "-",
               row.anchor_s > 0 ? fmt::format("{:.0f}x", row.anchor_s / s) : "-");
  }
  fmt::print(
      "(anchor: ForestColl's bound in its units, 1 per link on tori and meshes, and its time "
      "for the bound alone)\n\n");
}

struct ScheduleRow {
  std::string name;
  std::function<Topology()> topology;
  int chunks;
  double anchor_s; ///< ForestColl's tree packing (k chosen automatically); 0: none published
  bool large;
};

void schedule_table(bool quick) {
  const std::vector<ScheduleRow> rows = {
      {"torus 4x4", [] { return must(torus2d(4, 4)); }, 4, 0.74, false},
      {"torus 8x8", [] { return must(torus2d(8, 8)); }, 4, 62.1, false},
      {"torus 16x16", [] { return must(torus2d(16, 16)); }, 4, 1424, false},
      {"torus 4x4x4", [] { return must(torus3d(4, 4, 4)); }, 12, 50.7, false},
      {"torus 8x8x8", [] { return must(torus3d(8, 8, 8)); }, 12, 0, false},
      {"torus 8x8x16", [] { return must(torus3d(8, 8, 16)); }, 12, 0, true},
      {"torus 32x32", [] { return must(torus2d(32, 32)); }, 4, 0, true},
      {"hypercube 2^6", [] { return must(hypercube(6)); }, 60, 0, false},
      {"hypercube 2^10", [] { return must(hypercube(10)); }, 10, 0, true},
      {"ring 64", [] { return must(ring(64)); }, 2, 0, false},
      {"mesh 4x4", [] { return must(mesh2d(4, 4)); }, 2, 0.35, false},
      {"mesh 8x8", [] { return must(mesh2d(8, 8)); }, 2, 20.3, false},
      {"mesh 32x32", [] { return must(mesh2d(32, 32)); }, 2, 0, true},
      {"mesh 4x4x4", [] { return must(mesh3d(4, 4, 4)); }, 6, 0, false},
  };
  fmt::print("Breadth-first Allgather: steps, share of the cut bound, synthesis time\n");
  fmt::print("{:<16} {:>6} {:>7} {:>6} {:>12} {:>12} {:>10} {:>11} {:>9}\n", "topology", "GPUs",
             "pieces", "steps", "% of B*", "pipelined %", "ours s", "anchor s", "speedup");
  for (const ScheduleRow &row : rows) {
    if (quick && row.large)
      continue;
    const Topology t = row.topology();
    Expected<synth::ScaleSchedule> s = tl::unexpected(Diagnostics{});
    const double seconds = seconds_of([&] { s = synth::breadth_first_allgather(t, row.chunks); });
    if (!s) {
      fmt::print("{:<16} {}\n", row.name, s.error().to_string());
      continue;
    }
    fmt::print("{:<16} {:>6} {:>7} {:>6} {:>11.4f}% {:>11.4f}% {:>10.3f} {:>11} {:>9}\n", row.name,
               t.num_ranks(), row.chunks, s->algorithm.num_steps(), 100 * s->efficiency.value(),
               100 * s->pipelined_efficiency.value(), seconds,
               row.anchor_s > 0 ? fmt::format("{:.2f}", row.anchor_s) : "-",
               row.anchor_s > 0 ? fmt::format("{:.0f}x", row.anchor_s / seconds) : "-");
  }
  fmt::print("(steps = the diameter on every row; anchor: ForestColl's spanning-tree packing, "
             "100% of B* with trees 2-10x deeper than the diameter)\n\n");
}

// Meshes by dimension-ordered pipelines: the share of the cut bound in diameter steps, against
// the breadth-first schedule of the same pieces and TACOS's time at 1,024 NPUs.
void grid_table(bool quick) {
  struct Row {
    std::vector<int> shape;
    int pieces;
    double anchor_s; ///< TACOS's synthesis time; 0: none measured
    bool large;
  };
  const std::vector<Row> rows = {
      {{4, 4}, 2, 0, false},      {{8, 8}, 2, 0, false},    {{16, 16}, 2, 0, false},
      {{32, 32}, 2, 153.7, true}, {{4, 4, 4}, 6, 0, false}, {{8, 8, 8}, 6, 0, false},
      {{7, 12}, 26, 0, false},    {{8, 8, 16}, 6, 0, true},
  };
  fmt::print("Dimension-ordered Allgather on meshes: share of the cut bound in diameter steps\n");
  fmt::print("{:<16} {:>6} {:>7} {:>6} {:>12} {:>16} {:>10} {:>11} {:>9}\n", "mesh", "GPUs",
             "pieces", "steps", "% of B*", "breadth-first %", "ours s", "anchor s", "speedup");
  for (const Row &row : rows) {
    if (quick && row.large)
      continue;
    const Topology t = mesh_of(row.shape);
    Expected<synth::GridSchedule> s = tl::unexpected(Diagnostics{});
    const double seconds =
        seconds_of([&] { s = synth::dimension_ordered_allgather(t, row.shape, row.pieces); });
    auto breadth = synth::breadth_first_allgather(t, row.pieces);
    if (!s || !breadth) {
      fmt::print("{:<16} {}\n", fmt::join(row.shape, "x"),
                 (s ? breadth.error() : s.error()).to_string());
      continue;
    }
    fmt::print("{:<16} {:>6} {:>7} {:>6} {:>11.4f}% {:>15.4f}% {:>10.3f} {:>11} {:>9}\n",
               fmt::format("mesh {}", fmt::join(row.shape, "x")), t.num_ranks(), row.pieces,
               s->schedule.algorithm.num_steps(), 100 * s->schedule.efficiency.value(),
               100 * breadth->efficiency.value(), seconds,
               row.anchor_s > 0 ? fmt::format("{:.1f}", row.anchor_s) : "-",
               row.anchor_s > 0 ? fmt::format("{:.0f}x", row.anchor_s / seconds) : "-");
  }
  fmt::print("(steps = the diameter; anchor: TACOS's synthesis of the 32x32 mesh, 97.4% of B*; "
             "non-square shapes lose where one order's later phase shares a dimension with "
             "another's first)\n\n");
}

// Paced schedules on meshes of every shape: the share of the cut bound in the diameter's steps
// (one or two more where it falls short), against breadth-first and dimension-ordered schedules
// of the same pieces and TACOS's share of the bound on its test shapes and at 1,024 NPUs.
void paced_table(bool quick) {
  struct Row {
    std::vector<int> shape;
    double tacos_percent; ///< TACOS's share of B*; 0: not measured
    double tacos_s;       ///< TACOS's synthesis time; 0: not measured
    bool large;
  };
  const std::vector<Row> rows = {
      {{5, 5}, 99.9, 0, false},    {{10, 10}, 98.0, 0, false},  {{7, 12}, 99.0, 0, false},
      {{3, 9}, 0, 0, false},       {{5, 40}, 0, 0, false},      {{12, 20}, 0, 0, false},
      {{20, 30}, 0, 0, false},     {{3, 3, 3}, 96.2, 0, false}, {{3, 4, 5}, 98.2, 0, false},
      {{4, 2, 3}, 99.9, 0, false}, {{6, 6, 12}, 0, 0, false},   {{32, 32}, 97.4, 153.7, true},
      {{8, 8, 16}, 0, 0, true},    {{4, 8, 32}, 0, 0, true},
  };
  fmt::print("Paced Allgather on meshes: share of the cut bound in D, D + 1, D + 2 steps (stopping "
             "at the bound)\n");
  fmt::print("{:<14} {:>6} {:>7} {:>4} {:>30} {:>16} {:>18} {:>9} {:>10} {:>9}\n", "mesh", "GPUs",
             "pieces", "D", "steps: % of B*", "breadth-first %", "dimension-order %", "ours s",
             "TACOS %", "TACOS s");
  for (const Row &row : rows) {
    if (quick && row.large)
      continue;
    const Topology t = mesh_of(row.shape);
    int diameter = 0;
    for (int side : row.shape)
      diameter += side - 1;
    const int pieces = synth::default_direct_pieces(t, CollectiveKind::Allgather);
    std::vector<std::string> points;
    double seconds = 0;
    for (int steps = diameter; steps <= diameter + 2; ++steps) {
      Expected<synth::ScaleSchedule> s = tl::unexpected(Diagnostics{});
      const double took = seconds_of([&] { s = synth::paced_allgather(t, pieces, steps); });
      if (steps == diameter)
        seconds = took;
      if (!s) {
        points.push_back(s.error().to_string());
        break;
      }
      points.push_back(fmt::format("{}:{:.4f}", steps, 100 * s->efficiency.value()));
      if (s->efficiency == Fraction{1, 1})
        break;
    }
    auto breadth = synth::breadth_first_allgather(t, pieces);
    auto grid = synth::dimension_ordered_allgather(t, row.shape, pieces);
    fmt::print("{:<14} {:>6} {:>7} {:>4} {:>30} {:>15.4f}% {:>17.4f}% {:>9.3f} {:>10} {:>9}\n",
               fmt::format("mesh {}", fmt::join(row.shape, "x")), t.num_ranks(), pieces, diameter,
               fmt::format("{}", fmt::join(points, " ")),
               breadth ? 100 * breadth->efficiency.value() : 0.0,
               grid ? 100 * grid->schedule.efficiency.value() : 0.0, seconds,
               row.tacos_percent > 0 ? fmt::format("{:.1f}%", row.tacos_percent) : "-",
               row.tacos_s > 0 ? fmt::format("{:.1f}", row.tacos_s) : "-");
  }
  fmt::print("(pieces: the corner's incoming links, 2 on a 2D mesh and 3 on a 3D one; ours s: the "
             "paced schedule in D steps, both deadline rules where the first falls short; TACOS: "
             "its share of B* on its test shapes and the 32x32 mesh, and its synthesis time)\n\n");
}

struct ClusterRow {
  std::string name;
  int boxes;
  bool h100;
  double forestcoll_s; ///< ForestColl's trees (k chosen automatically); 0: not published
  bool large;
  std::optional<LeafGroups> leaves = std::nullopt; ///< an oversubscribed spine
};

Topology cluster_of(int boxes, bool h100, std::optional<LeafGroups> leaves = std::nullopt) {
  return must(
      multinode(boxes, h100 ? dgx_h100() : dgx_a100(), 8, BytesPerNs{h100 ? 50.0 : 25.0}, leaves));
}

// Clusters of DGX boxes, a NIC per GPU on a non-blocking network (unwound to links): the step
// schedule in 2 ceil(log2 N) steps and the pipelined trees, against the cut, ForestColl's time
// for its trees and NCCL's ring as a model (8 rings, each NIC's bandwidth once: algbw
// g x n x N / (N - 1), in N - 1 steps).
void cluster_table(bool quick) {
  const std::vector<ClusterRow> rows = {
      {"DGX A100 x2", 2, false, 3.8, false},
      {"DGX A100 x4", 4, false, 34.4, false},
      {"DGX A100 x8", 8, false, 453, false},
      {"DGX A100 x16", 16, false, 0, false},
      {"DGX H100 x2", 2, true, 1.4, false},
      {"DGX H100 x4", 4, true, 20.2, false},
      {"DGX H100 x8", 8, true, 139.6, false},
      {"DGX H100 x16", 16, true, 0, false},
      {"DGX H100 x32", 32, true, 0, true},
      {"DGX H100 x128", 128, true, 0, true},
      {"DGX H100 x512", 512, true, 0, true},
      {"H100 x8 L2 4:1", 8, true, 0, false, LeafGroups{2, 4}},
      {"H100 x32 L4 8:1", 32, true, 0, false, LeafGroups{4, 8}},
      {"H100 x128 L4 8:1", 128, true, 0, true, LeafGroups{4, 8}},
      {"H100 x128 L16 2:1", 128, true, 0, true, LeafGroups{16, 2}},
  };
  fmt::print("Allgather on clusters of boxes (NIC per GPU, non-blocking): share of the cut "
             "bound, steps, synthesis time\n");
  fmt::print("{:<17} {:>5} {:>6} {:>6} {:>10} {:>9} {:>11} {:>8} {:>9} {:>9} {:>12}\n", "topology",
             "GPUs", "pieces", "steps", "steps %", "limit %", "pipelined %", "ours s", "anchor s",
             "speedup", "NCCL ring %");
  for (const ClusterRow &row : rows) {
    if (quick && row.large)
      continue;
    const Topology t = cluster_of(row.boxes, row.h100, row.leaves);
    const auto cluster = synth::box_cluster(t);
    if (!cluster) {
      fmt::print("{:<14} {}\n", row.name, cluster.error().to_string());
      continue;
    }
    const int pieces = synth::default_cluster_pieces(*cluster);
    Expected<synth::ClusterSchedule> steps = tl::unexpected(Diagnostics{});
    Expected<synth::ClusterSchedule> trees = tl::unexpected(Diagnostics{});
    const double seconds = seconds_of([&] {
      steps = synth::box_cluster_allgather(t, synth::default_cluster_steps(t.num_ranks()), pieces,
                                           synth::ClusterPlanGoal::StepSynchronous);
      trees = synth::box_cluster_allgather(t, 4, pieces, synth::ClusterPlanGoal::PipelinedTrees);
    });
    if (!steps || !trees) {
      fmt::print("{:<14} {}\n", row.name, (steps ? trees : steps).error().to_string());
      continue;
    }
    const double n = t.num_ranks();
    const double ring_gbps = 8 * (row.h100 ? 50.0 : 25.0) * n / (n - 1);
    const double bound_gbps = n / steps->cut.lambda.value();
    const std::string ring =
        row.leaves ? "-" : fmt::format("{:.1f}%", 100 * ring_gbps / bound_gbps);
    const auto limit =
        synth::box_cluster_step_limit(*cluster, steps->plan.num_steps(), steps->units_per_gbps);
    const std::string most =
        !limit ? "-"
               : fmt::format("{:.3f}%",
                             100 * std::min(1.0, steps->cut.lambda.value() / limit->value()));
    fmt::print(
        "{:<17} {:>5} {:>6} {:>6} {:>9.3f}% {:>9} {:>10.4f}%{} {:>8.3f} {:>9} {:>9} {:>12}\n",
        row.name, t.num_ranks(), pieces, steps->plan.num_steps(), 100 * steps->efficiency.value(),
        most, 100 * trees->pipelined_efficiency.value(), trees->attained() ? "*" : " ", seconds,
        row.forestcoll_s > 0 ? fmt::format("{:.1f}", row.forestcoll_s) : "-",
        row.forestcoll_s > 0 ? fmt::format("{:.0f}x", row.forestcoll_s / seconds) : "-", ring);
  }
  fmt::print("(*: the pipelined trees take exactly the cut's time, so the cut is B* and they are "
             "optimal; limit: the most any schedule of those steps reaches (the step limit's "
             "linear program; leaf groups left out of it); ours s: both schedules, every send "
             "evaluated on the topology; anchor: "
             "ForestColl's tree packing; NCCL ring: N - 1 steps; L K R:1: leaf groups of K boxes "
             "whose uplinks carry 1/R of their NICs)\n\n");
}

// A cluster plan streamed into the step-synchronous simulator.
class ClusterSteps final : public simulator::StepSource {
public:
  explicit ClusterSteps(synth::ClusterPlan plan) : plan_(std::move(plan)) {}
  int num_steps() const override { return plan_.num_steps(); }
  void sends(int step, std::vector<Send> &out) const override { plan_.sends(step, out); }

private:
  synth::ClusterPlan plan_;
};

// The frontier point (steps, pieces) of a cluster's Allgather whose planned time for `size`
// bytes, steps x the network's largest alpha plus the bandwidth term, is least; also the best
// for each part of an Allreduce, whose parts take the same steps.
std::optional<synth::ClusterPlan> frontier_point(const Topology &t,
                                                 const synth::BoxCluster &cluster, int64_t size) {
  const auto units = exact_units(t);
  if (!units)
    return std::nullopt;
  const int n = t.num_ranks();
  const double share = double(size) / n;
  std::optional<synth::ClusterPlan> best;
  double best_ns = 0;
  for (int pieces : {1, synth::default_cluster_pieces(cluster)})
    for (int s = 1; s <= synth::default_cluster_steps(n); ++s) {
      auto plan =
          synth::plan_box_cluster(cluster, s, pieces, synth::ClusterPlanGoal::StepSynchronous);
      if (!plan || share / pieces < 1)
        continue;
      const double ns = synth::planned_ns(t, s, plan->modelled_cost(units->units_per_gbps), share);
      if (!best || ns < best_ns) {
        best = std::move(*plan);
        best_ns = ns;
      }
    }
  return best;
}

// A cluster Allreduce (ReduceScatter, then Allgather) streamed into the simulator.
class ClusterCollectiveSteps final : public simulator::StepSource {
public:
  explicit ClusterCollectiveSteps(synth::ClusterCollective c) : collective_(std::move(c)) {}
  int num_steps() const override { return collective_.num_steps(); }
  void sends(int step, std::vector<Send> &out) const override { collective_.sends(step, out); }

private:
  synth::ClusterCollective collective_;
};

// The cluster Allreduce against NCCL's ring and tree Allreduce (streamed, 32 channels) on `boxes`
// DGX H100 boxes; per size the steps per part and pieces whose planned time is least.
void cluster_allreduce_against_nccl(int boxes) {
  const Topology t = cluster_of(boxes, true);
  const auto cluster = synth::box_cluster(t);
  auto graph = nccl::nccl_search_rings(t, nccl::nccl_generation_for(t));
  if (!cluster || !graph) {
    fmt::print("{} DGX H100 boxes: no cluster or no NCCL ring\n", boxes);
    return;
  }
  const int channels = graph->runtime_channels();
  const auto rings = graph->channel_rings(channels, std::nullopt);
  auto ring = nccl::NcclRingSteps::create(CollectiveKind::Allreduce, rings);
  // As simulate's tree on a topology: chains along the searched rings where no tree of direct
  // links exists.
  auto trees = nccl::nccl_topology_trees(t, channels, rings);
  if (!ring || !trees) {
    fmt::print("no NCCL ring or tree\n");
    return;
  }
  constexpr int kTreePipelineChunks = 64;
  auto tree = nccl::NcclTreeSteps::create(*trees, kTreePipelineChunks);
  if (!tree) {
    fmt::print("{}\n", tree.error().to_string());
    return;
  }
  const int n = t.num_ranks();
  fmt::print("Allreduce on {} DGX H100 boxes ({} GPUs): the cluster ReduceScatter + Allgather "
             "(frontier point per size) against NCCL's ring ({} steps) and tree ({} pipelined "
             "chunks), {} channels, all simulated step by step\n",
             boxes, n, 2 * (n - 1), kTreePipelineChunks, channels);
  fmt::print("{:>9} {:>6} {:>7} {:>12} {:>12} {:>12} {:>9} {:>9}\n", "size", "steps", "pieces",
             "ours us", "ring us", "tree us", "vs ring", "vs tree");
  for (int64_t size = 1 << 10; size <= int64_t(1) << 30; size <<= 5) {
    const auto point = frontier_point(t, *cluster, size);
    if (!point) {
      fmt::print("{:>9} no plan\n", format_size(size));
      continue;
    }
    const int best_steps = point->num_steps(), best_pieces = point->pieces;
    auto ours_plan =
        synth::box_cluster_collective(t, CollectiveKind::Allreduce, best_steps, best_pieces,
                                      synth::ClusterPlanGoal::StepSynchronous);
    if (!ours_plan) {
      fmt::print("{:>9} {}\n", format_size(size), ours_plan.error().to_string());
      continue;
    }
    const ClusterCollectiveSteps ours_steps(std::move(*ours_plan));
    auto ours =
        simulator::simulate_steps(ours_steps, t, std::max<int64_t>(1, size / n / best_pieces), 1.0);
    auto by_ring = simulator::simulate_steps(*ring, t, ring->chunk_bytes(size), 1.0);
    auto by_tree = simulator::simulate_steps(*tree, t, tree->chunk_bytes(size), 1.0);
    if (!ours || !by_ring || !by_tree) {
      fmt::print("{:>9} failed\n", format_size(size));
      continue;
    }
    const double ours_us = double(ours->completion) / 1e6;
    const double ring_us = double(by_ring->completion) / 1e6;
    const double tree_us = double(by_tree->completion) / 1e6;
    fmt::print("{:>9} {:>6} {:>7} {:>12.3f} {:>12.3f} {:>12.3f} {:>8.2f}x {:>8.2f}x\n",
               format_size(size), 2 * best_steps, best_pieces, ours_us, ring_us, tree_us,
               ring_us / ours_us, tree_us / ours_us);
  }
  fmt::print("\n");
}

// The unwound machine against the fat tree it stands for: the same cluster schedule simulated on
// both (the fat tree routing every send through its leaves and spines), and the fat tree's
// max-flow bound against the cluster's cut.
void unwound_against_fat_tree(bool quick) {
  struct Row {
    int boxes;
    std::optional<LeafGroups> leaves;
    bool rails;
  };
  const std::vector<Row> rows = {{8, std::nullopt, false},
                                 {8, std::nullopt, true},
                                 {8, LeafGroups{2, 4}, false},
                                 {16, LeafGroups{4, 2}, false},
                                 {64, LeafGroups{8, 4}, false}};
  fmt::print("The cluster schedule on the unwound machine and on the fat tree with switches "
             "(1 GiB Allgather, DGX H100, simulated step by step)\n");
  fmt::print("{:<30} {:>14} {:>14} {:>12} {:>16} {:>14} {:>14}\n", "machine", "unwound us",
             "fat tree us", "difference", "NCCL ring (tree)", "cut GB/s", "max-flow GB/s");
  for (const Row &row : rows) {
    if (quick && row.boxes > 16)
      continue;
    const Topology unwound = cluster_of(row.boxes, true, row.leaves);
    FatTree fabric;
    fabric.nics_per_node = 8;
    fabric.nic_bandwidth = BytesPerNs{50};
    fabric.rails = row.rails;
    if (row.leaves) {
      fabric.nodes_per_leaf = row.leaves->nodes_per_leaf;
      fabric.oversubscription = row.leaves->oversubscription;
    }
    const Topology tree = must(fat_tree(row.boxes, dgx_h100(), fabric));
    const auto cluster = synth::box_cluster(unwound);
    const int n = unwound.num_ranks();
    auto schedule = synth::box_cluster_allgather(unwound, synth::default_cluster_steps(n), 16,
                                                 synth::ClusterPlanGoal::StepSynchronous);
    auto bound = synth::cut_bound(tree, CutDirection::Leaving);
    if (!cluster || !schedule || !bound) {
      fmt::print("{} boxes: no schedule or bound\n", row.boxes);
      continue;
    }
    const ClusterSteps steps(schedule->plan);
    const int64_t chunk = (int64_t(1) << 30) / n / 16;
    auto on_unwound = simulator::simulate_steps(steps, unwound, chunk, 1.0);
    auto on_tree = simulator::simulate_steps(steps, tree, chunk, 1.0);
    if (!on_unwound || !on_tree) {
      fmt::print("{} boxes: {}\n", row.boxes,
                 (on_unwound ? on_tree : on_unwound).error().to_string());
      continue;
    }
    const double a = double(on_unwound->completion) / 1e6;
    const double b = double(on_tree->completion) / 1e6;
    // NCCL's ring on the fat tree, for scale: few flows, so ECMP seldom puts two on one spine.
    std::string ring_text = "-";
    if (auto graph = nccl::nccl_search_rings(tree, nccl::nccl_generation_for(tree))) {
      auto ring = nccl::NcclRingSteps::create(
          CollectiveKind::Allgather, graph->channel_rings(graph->runtime_channels(), std::nullopt));
      if (ring)
        if (auto sim =
                simulator::simulate_steps(*ring, tree, ring->chunk_bytes(int64_t(1) << 30), 1.0))
          ring_text = fmt::format("{:.3f}", double(sim->completion) / 1e6);
    }
    const std::string name =
        fmt::format("{} boxes{}{}", row.boxes, row.rails ? ", rails" : "",
                    row.leaves ? fmt::format(", leaves of {}, {}:1", row.leaves->nodes_per_leaf,
                                             row.leaves->oversubscription)
                               : "");
    fmt::print("{:<30} {:>14.3f} {:>14.3f} {:>11.2f}% {:>16} {:>14.3f} {:>14.3f}\n", name, a, b,
               100 * (b - a) / a, ring_text, n / schedule->cut.lambda.value(),
               bound->bandwidth_gbps.value());
  }
  fmt::print("(the fat tree routes each source-destination pair over one spine a hash picks, as "
             "static ECMP does; the unwound machine spreads as adaptive routing would)\n\n");
}

// The cluster Allgather against NCCL's ring (the rings NCCL's search finds, streamed) from 1 KiB
// to 1 GiB on `boxes` DGX H100 boxes; per size the point of the frontier (steps, pieces) whose
// planned time, steps x the network's alpha plus the bandwidth term, is least.
void cluster_against_nccl(int boxes) {
  const Topology t = cluster_of(boxes, true);
  const auto cluster = synth::box_cluster(t);
  const auto cuts = cluster
                        ? synth::box_cluster_cuts(t, *cluster)
                        : Expected<std::vector<synth::ClusterCut>>(tl::unexpected(cluster.error()));
  auto graph = nccl::nccl_search_rings(t, nccl::nccl_generation_for(t));
  if (!cluster || !cuts || !graph) {
    fmt::print("{} DGX H100 boxes: no cluster or no NCCL ring\n", boxes);
    return;
  }
  auto ring = nccl::NcclRingSteps::create(
      CollectiveKind::Allgather, graph->channel_rings(graph->runtime_channels(), std::nullopt));
  if (!ring) {
    fmt::print("{}\n", ring.error().to_string());
    return;
  }
  const int n = t.num_ranks();
  fmt::print("Allgather on {} DGX H100 boxes ({} GPUs): the cluster schedule (frontier point "
             "per size) against NCCL's ring ({} steps, {} rings), both simulated step by step\n",
             boxes, n, n - 1, graph->runtime_channels());
  fmt::print("{:>9} {:>6} {:>7} {:>14} {:>14} {:>9}\n", "size", "steps", "pieces", "ours us",
             "NCCL ring us", "speedup");
  for (int64_t size = 1 << 10; size <= int64_t(1) << 30; size <<= 5) {
    auto best = frontier_point(t, *cluster, size);
    if (!best) {
      fmt::print("{:>9} no plan\n", format_size(size));
      continue;
    }
    const int steps = best->num_steps(), pieces = best->pieces;
    const ClusterSteps ours_steps(std::move(*best));
    auto ours =
        simulator::simulate_steps(ours_steps, t, std::max<int64_t>(1, size / n / pieces), 1.0);
    auto theirs = simulator::simulate_steps(*ring, t, ring->chunk_bytes(size), 1.0);
    if (!ours || !theirs) {
      fmt::print("{:>9} failed\n", format_size(size));
      continue;
    }
    const double ours_us = double(ours->completion) / 1e6;
    const double theirs_us = double(theirs->completion) / 1e6;
    fmt::print("{:>9} {:>6} {:>7} {:>14.3f} {:>14.3f} {:>8.2f}x\n", format_size(size), steps,
               pieces, ours_us, theirs_us, theirs_us / ours_us);
  }
  fmt::print("(cut bound {:.3f} GB/s: at 1 GiB no Allgather takes less than {:.1f} us)\n\n",
             n / std::max(cuts->at(0).lambda.value(), cuts->at(1).lambda.value()),
             double(int64_t(1) << 30) /
                 (n / std::max(cuts->at(0).lambda.value(), cuts->at(1).lambda.value())) / 1e3);
}

struct TacosRow {
  std::string name;
  std::function<Expected<Topology>()> shape;
  double gib_per_s, alpha_us;
  int chunks;
  int64_t output_gib;
  double tacos_us;
};

// The shape with TACOS's link model: every link `gib_per_s` GiB/s after `alpha_us`.
Topology tacos_links(const Topology &shape, double gib_per_s, double alpha_us) {
  TopologyDraft d = shape.to_draft();
  for (Link &l : d.links) {
    l.bandwidth = BytesPerNs{gib_per_s * 1.073741824};
    l.alpha = Nanoseconds{alpha_us * 1000};
  }
  return must(Topology::create(std::move(d)));
}

void tacos_table() {
  const std::vector<TacosRow> rows = {
      {"Torus3D 3x3x3", [] { return torus3d(3, 3, 3); }, 50, 0.5, 1, 1, 3706.20},
      {"Torus3D 3x4x5", [] { return torus3d(3, 4, 5); }, 50, 0.5, 2, 2, 6676.67},
      {"Torus3D 4x2x3", [] { return torus3d(4, 2, 3); }, 50, 0.5, 3, 3, 11673.67},
      {"Mesh2D 5x5", [] { return mesh2d(5, 5); }, 50, 0.5, 1, 1, 9606.0},
      {"Mesh2D 10x10", [] { return mesh2d(10, 10); }, 100, 1, 2, 1, 5049.0},
      {"Mesh2D 7x12", [] { return mesh2d(7, 12); }, 100, 1, 3, 4, 19966.27},
      {"Mesh3D 3x3x3", [] { return mesh3d(3, 3, 3); }, 50, 0.5, 1, 1, 6671.17},
      {"Mesh3D 3x4x5", [] { return mesh3d(3, 4, 5); }, 50, 0.5, 2, 2, 13353.33},
      {"Mesh3D 4x2x3", [] { return mesh3d(4, 2, 3); }, 50, 0.5, 3, 3, 19178.17},
  };
  fmt::print("TACOS's known-answer All-Gather times, same link model (alpha + chunk / bandwidth "
             "per chunk, one chunk per link at a time, each send as soon as its chunk is there)\n");
  fmt::print("{:<16} {:>7} {:>12} {:>12} {:>12} {:>8} {:>9} {:>12} {:>8}\n", "topology", "pieces",
             "bound us", "ours us", "TACOS us", "ratio", "% of B*", "best (pieces)", "ratio");
  for (const TacosRow &row : rows) {
    const Topology t = tacos_links(must(row.shape()), row.gib_per_s, row.alpha_us);
    const int64_t output = row.output_gib << 30;
    // The simulated time of the faster of the breadth-first and the paced (diameter steps)
    // schedules in `chunks` pieces per rank, with its step-by-step share of the bound.
    auto simulated_us = [&](int chunks) -> std::optional<std::pair<double, double>> {
      auto collective = make_collective(CollectiveKind::Allgather, t.num_ranks(), chunks);
      auto breadth = synth::breadth_first_allgather(t, chunks);
      if (!collective || !breadth)
        return std::nullopt;
      std::vector<synth::ScaleSchedule> schedules{*breadth};
      if (auto paced = synth::paced_allgather(t, chunks, breadth->algorithm.num_steps()))
        schedules.push_back(std::move(*paced));
      std::optional<std::pair<double, double>> fastest;
      for (const synth::ScaleSchedule &s : schedules) {
        simulator::AlgorithmSimOptions options;
        options.timing = simulator::AlgorithmTiming::Dataflow;
        options.switching = simulator::Switching::StoreAndForward;
        auto sim = simulator::simulate_algorithm(
            s.algorithm, t, *collective, input_bytes_for_nccl_tests_size(*collective, output),
            options);
        if (sim && (!fastest || double(sim->completion) / 1e6 < fastest->first))
          fastest = std::pair{double(sim->completion) / 1e6, s.efficiency.value()};
      }
      return fastest;
    };
    const auto same = simulated_us(row.chunks);
    const auto bound = synth::cut_bound(t, CutDirection::Leaving);
    if (!same || !bound) {
      fmt::print("{:<16} failed\n", row.name);
      continue;
    }
    int best_chunks = row.chunks;
    double best_us = same->first;
    for (int chunks = 1; chunks <= 8; ++chunks)
      if (const auto other = simulated_us(chunks); other && other->first < best_us)
        best_chunks = chunks, best_us = other->first;
    const double bound_us = double(output) / bound->bandwidth_gbps.value() / 1e3;
    fmt::print("{:<16} {:>7} {:>12.2f} {:>12.2f} {:>12.2f} {:>7.3f}x {:>8.2f}% {:>12} {:>7.3f}x\n",
               row.name, row.chunks, bound_us, same->first, row.tacos_us,
               row.tacos_us / same->first, 100 * same->second,
               fmt::format("{:.2f} ({})", best_us, best_chunks), row.tacos_us / best_us);
  }
  fmt::print("(ours: the faster of the breadth-first and paced schedules in diameter steps; "
             "ratio: TACOS's time over ours, > 1: ours is faster; % of B*: the schedule's "
             "bandwidth term step by step at TACOS's pieces; best: 1-8 pieces per rank)\n");
}

// The breadth-first schedule against NCCL's ring (as syncoll models it: the rings its search
// finds, run as a thread-block program) from 1 KiB to 1 GiB, on a torus of `side` x `side`.
void against_nccl(int side) {
  const Topology t = must(torus2d(side, side));
  constexpr int kPieces = 4;
  auto schedule = synth::breadth_first_allgather(t, kPieces);
  auto collective = make_collective(CollectiveKind::Allgather, t.num_ranks(), kPieces);
  auto graph = nccl::nccl_search_rings(t, nccl::nccl_generation_for(t));
  if (!schedule || !collective || !graph) {
    fmt::print("torus {}x{}: no schedule or no NCCL ring\n", side, side);
    return;
  }
  auto ring = nccl::nccl_ring_program(CollectiveKind::Allgather,
                                      graph->channel_rings(graph->runtime_channels(), std::nullopt),
                                      Protocol::Simple);
  if (!ring) {
    fmt::print("torus {}x{}: {}\n", side, side, ring.error().to_string());
    return;
  }
  fmt::print("Allgather on a {}x{} torus ({} GPUs): breadth-first ({} steps, {} pieces) against "
             "NCCL's ring ({} steps), simulated\n",
             side, side, t.num_ranks(), schedule->algorithm.num_steps(), kPieces,
             t.num_ranks() - 1);
  fmt::print("{:>9} {:>14} {:>14} {:>9}\n", "size", "ours us", "NCCL ring us", "speedup");
  for (int64_t size = 1 << 10; size <= int64_t(1) << 30; size <<= 5) {
    auto ours = simulator::simulate_algorithm(schedule->algorithm, t, *collective,
                                              input_bytes_for_nccl_tests_size(*collective, size),
                                              simulator::AlgorithmSimOptions{});
    simulator::ProgramSimOptions options;
    options.size_bytes = size;
    auto theirs = simulator::simulate_program(*ring, t, options);
    if (!ours || !theirs) {
      fmt::print("{:>9} failed\n", format_size(size));
      continue;
    }
    const double ours_us = double(ours->completion) / 1e6;
    const double theirs_us = double(theirs->result.completion) / 1e6;
    fmt::print("{:>9} {:>14.3f} {:>14.3f} {:>8.2f}x\n", format_size(size), ours_us, theirs_us,
               theirs_us / ours_us);
  }
  fmt::print("\n");
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  std::string section;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
      continue;
    }
    if (std::strcmp(argv[i], "--section") == 0 && i + 1 < argc) {
      section = argv[++i];
      continue;
    }
    std::fprintf(stderr, "usage: scale_synth_bench [--quick] "
                         "[--section bounds|schedules|clusters|nccl|tacos]\n");
    return 2;
  }
  const auto run = [&](const char *name) { return section.empty() || section == name; };
  if (run("bounds"))
    bound_table(quick);
  if (run("schedules")) {
    schedule_table(quick);
    grid_table(quick);
    paced_table(quick);
  }
  if (run("clusters")) {
    cluster_table(quick);
    unwound_against_fat_tree(quick);
  }
  if (run("nccl")) {
    against_nccl(quick ? 16 : 32);
    cluster_against_nccl(quick ? 16 : 128);
    cluster_allreduce_against_nccl(quick ? 16 : 128);
  }
  if (run("tacos"))
    tacos_table();
  return 0;
}
