// Allgather on meshes in as many steps as the diameter, by dimension-ordered pipelines
// (docs/scale.md, "Meshes by dimension"): the bucket algorithm of tori, run on lines.
//
// On a line of L ranks an Allgather takes L - 1 steps with every link carrying one bundle a step
// each way: in step s rank i passes on to i + 1 the bundle that started at i - s + 1, and to i - 1
// the one that started at i + s - 1. On a grid each piece of a share goes down its dimensions in
// one order, one line pipeline after the other, the bundle growing by the line's length at each
// phase (the pieces a rank gathered in the phase before). Every order takes the sum of (L_d - 1)
// steps, the diameter. Pieces are split over the orders so that every dimension's links carry
// the same load at once: on a square mesh, half row-first and half column-first, which meets the
// corner's cut bound exactly; on other shapes the split with the fewest ns is chosen by counting.
#pragma once

#include "model/algorithm.h"
#include "model/diagnostics.h"
#include "model/topology.h"
#include "synth/scale.h"

#include <vector>

namespace syncoll::synth {

struct GridSchedule {
  std::vector<int> shape;               ///< sides, rank = x + X (y + Y z)
  std::vector<std::vector<int>> orders; ///< each order of the dimensions used
  std::vector<int> pieces_per_order;    ///< how many of a share's pieces go in each order
  /// The algorithm, its bound, and its cost step by step and pipelined, evaluated on the
  /// topology's links.
  ScaleSchedule schedule;
};

/// The Allgather of a mesh or torus of `shape` (every neighbour along each dimension linked both
/// ways; a torus's wrap-around links go unused) in `pieces` pieces per share. Fails for a shape
/// that does not match the topology's ranks or links, or more than 2^24 chunk copies.
[[nodiscard]] Expected<GridSchedule>
dimension_ordered_allgather(const Topology &topology, const std::vector<int> &shape, int pieces);

/// from_allgather (synth/scale.h) with the dimension-ordered Allgather.
[[nodiscard]] Expected<ScaleSchedule> dimension_ordered(const Topology &topology,
                                                        const std::vector<int> &shape,
                                                        CollectiveKind kind, int pieces);

} // namespace syncoll::synth
