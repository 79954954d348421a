// What `synth scale` makes when asked for a collective on a large machine: which method, how many
// pieces per share and how many steps, decided here once for the CLI and every bench
// (docs/scale.md). A direct-connect machine gets the cheapest of breadth-first, dimension-ordered
// (meshes) and paced schedules; a cluster of boxes its rail plan in 2 ceil(log2 N) steps.
#pragma once

#include "model/collective.h"
#include "model/fraction.h"
#include "model/topology.h"
#include "synth/cluster.h"
#include "synth/scale.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::synth {

/// Steps of each part of a cluster of boxes' schedule when none are asked for: 2 ceil(log2 N).
[[nodiscard]] int default_cluster_steps(int ranks);
/// Pieces per GPU's share on a cluster of boxes when none are asked for: about 2048 per box
/// beyond the first, as box_cluster_pieces rounds them.
[[nodiscard]] int default_cluster_pieces(const BoxCluster &cluster);
/// Pieces per rank's share on a direct-connect machine when none are asked for: the binding
/// ranks' incoming bandwidth in common units (2 on a 2D mesh, 6 on a 3D torus), which lets every
/// method meet the bound in whole pieces, where the collective model holds that many; else 1.
[[nodiscard]] int default_direct_pieces(const Topology &topology, CollectiveKind kind);

struct ScaleRequest {
  std::optional<int> pieces; ///< -C
  std::optional<int> steps;  ///< --steps: a paced schedule of exactly these steps, made alone
  /// The machine is a mesh of this shape (dimension-ordered schedules apply).
  std::optional<std::vector<int>> mesh_shape;
  /// Told each method as it starts, for a long run's stderr.
  std::function<void(std::string_view)> progress;
};

/// A method tried, and how near the bound it came (step by step).
struct ScaleCandidate {
  std::string method;
  bool paced = false;
  int steps = 0; ///< a paced schedule's planned steps; the others' own
  Fraction efficiency;
};

struct DirectChoice {
  ScaleSchedule schedule;
  std::string method;
  int pieces = 1;
  int diameter = 0;
  std::vector<ScaleCandidate> candidates; ///< every schedule made, in the order tried
  /// Whether paced schedules were tried, and why none could be made (empty: made).
  bool paced_tried = false;
  std::string paced_refused;
};

/// Breadth-first; on a mesh also dimension-ordered; where neither reaches the bound (or --steps
/// asks), paced in the diameter's steps up to two more, stopping at the first that reaches it.
/// The one that costs least, fewer steps on a tie. Fails as the methods do.
[[nodiscard]] Expected<DirectChoice>
choose_direct_schedule(const Topology &topology, CollectiveKind kind, const ScaleRequest &request);

} // namespace syncoll::synth
