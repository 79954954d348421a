#include "synth/grid.h"

#include "model/cut_certificate.h"
#include "model/invariant.h"
#include "synth/step_cost.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <numeric>

namespace syncoll::synth {

namespace {

// Splits of `pieces` over `parts` orders, each a composition; all of them while they are few.
void each_split(int pieces, int parts, std::vector<int> &split, size_t at,
                const std::function<void(const std::vector<int> &)> &visit) {
  if (at + 1 == size_t(parts)) {
    split[at] = pieces;
    visit(split);
    return;
  }
  for (int here = 0; here <= pieces; ++here) {
    split[at] = here;
    each_split(pieces - here, parts, split, at + 1, visit);
  }
}

int64_t splits_count(int pieces, int parts) {
  // C(pieces + parts - 1, parts - 1)
  int64_t count = 1;
  for (int i = 1; i < parts; ++i)
    count = count * (pieces + i) / i;
  return count;
}

// The step in which each order's phase on each dimension starts (0-based), and the diameter.
struct Phases {
  std::vector<std::vector<int>> start; ///< per order, per phase
  int steps = 0;
};

Phases phases_of(const std::vector<int> &shape, const std::vector<std::vector<int>> &orders) {
  Phases out;
  for (const std::vector<int> &order : orders) {
    std::vector<int> start;
    int at = 0;
    for (int d : order) {
      start.push_back(at);
      at += shape[size_t(d)] - 1;
    }
    out.start.push_back(std::move(start));
    out.steps = at;
  }
  return out;
}

// The step-by-step time of a split, from the bundles each dimension's links carry at once and
// each dimension's link bandwidth (what the split is chosen by; the schedule is then costed on
// the topology itself).
double planned_time(const std::vector<int> &shape, const std::vector<std::vector<int>> &orders,
                    const Phases &phases, const std::vector<int> &split,
                    const std::vector<double> &gbps) {
  std::vector<std::vector<double>> load(size_t(phases.steps), std::vector<double>(shape.size()));
  for (size_t o = 0; o < orders.size(); ++o) {
    double bundle = split[o];
    for (size_t k = 0; k < orders[o].size(); ++k) {
      const int d = orders[o][k];
      for (int s = 0; s < shape[size_t(d)] - 1; ++s)
        load[size_t(phases.start[o][k] + s)][size_t(d)] += bundle;
      bundle *= shape[size_t(d)];
    }
  }
  double total = 0;
  for (const std::vector<double> &step : load) {
    double slowest = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      slowest = std::max(slowest, step[d] / gbps[d]);
    total += slowest;
  }
  return total;
}

} // namespace

Expected<GridSchedule> dimension_ordered_allgather(const Topology &topology,
                                                   const std::vector<int> &shape, int pieces) {
  const int n = topology.num_ranks();
  int64_t product = 1;
  for (int side : shape)
    product *= side;
  if (shape.empty() || product != n)
    return fail({}, fmt::format("a grid of sides {} does not hold the {} ranks of '{}'",
                                fmt::join(shape, "x"), n, topology.name()));
  SYNCOLL_CHECK(check_allgather_pieces(n, pieces));
  std::vector<int> stride(shape.size(), 1);
  for (size_t d = 1; d < shape.size(); ++d)
    stride[d] = stride[d - 1] * shape[d - 1];
  const auto coord = [&](int r, size_t d) { return (r / stride[d]) % shape[d]; };
  SYNCOLL_TRY(units, exact_units(topology));
  std::vector<double> gbps(shape.size(), 1.0);
  for (int r = 0; r < n; ++r)
    for (size_t d = 0; d < shape.size(); ++d) {
      if (coord(r, d) + 1 == shape[d])
        continue;
      for (auto [a, b] : {std::pair{r, r + stride[d]}, std::pair{r + stride[d], r}}) {
        const auto link = topology.find_link(RankId(a), RankId(b));
        if (!link)
          return fail({}, fmt::format("'{}' has no link {} -> {}, neighbours along dimension "
                                      "{} of a {} grid",
                                      topology.name(), a, b, d + 1, fmt::join(shape, "x")));
        if (r == 0)
          gbps[d] = double(units.links[link->index()]);
      }
    }

  // Every order of the dimensions longer than 1; the split over them with the least planned
  // time (all splits while there are at most 10^5, else over rotations only).
  std::vector<int> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1)
      dims.push_back(int(d));
  std::vector<std::vector<int>> orders;
  do
    orders.push_back(dims);
  while (std::next_permutation(dims.begin(), dims.end()));
  if (splits_count(pieces, int(orders.size())) > 100'000) {
    std::vector<std::vector<int>> rotations;
    for (size_t i = 0; i < dims.size(); ++i) {
      std::vector<int> order(dims.begin() + long(i), dims.end());
      order.insert(order.end(), dims.begin(), dims.begin() + long(i));
      rotations.push_back(std::move(order));
    }
    orders = std::move(rotations);
  }
  const Phases phases = phases_of(shape, orders);
  std::vector<int> split(orders.size()), best;
  double best_time = 0;
  each_split(pieces, int(orders.size()), split, 0, [&](const std::vector<int> &candidate) {
    const double time = planned_time(shape, orders, phases, candidate, gbps);
    if (best.empty() || time < best_time - 1e-12) {
      best = candidate;
      best_time = time;
    }
  });

  GridSchedule out;
  out.shape = shape;
  ScaleSchedule &schedule = out.schedule;
  schedule.chunks = pieces;
  Algorithm &algorithm = schedule.algorithm;
  algorithm.name = fmt::format("grid-allgather-{}-c{}", topology.name(), pieces);
  algorithm.target = {"allgather", n, pieces, std::nullopt, topology.name()};
  algorithm.steps.resize(size_t(phases.steps));
  int first_piece = 0;
  std::vector<int> owners;
  for (size_t o = 0; o < orders.size(); ++o) {
    if (best[o] == 0) {
      continue;
    }
    out.orders.push_back(orders[o]);
    out.pieces_per_order.push_back(best[o]);
    for (size_t k = 0; k < orders[o].size(); ++k) {
      const auto d = size_t(orders[o][k]);
      const int side = shape[d];
      for (int s = 1; s < side; ++s) {
        std::vector<Send> &sends = algorithm.steps[size_t(phases.start[o][k] + s - 1)].sends;
        for (int v = 0; v < n; ++v) {
          const int i = coord(v, d);
          for (int direction : {1, -1}) {
            const int to = i + direction, origin = i - direction * (s - 1);
            if (to < 0 || to >= side || origin < 0 || origin >= side)
              continue;
            // The bundle that started at `origin`: every owner that agrees with it off the
            // dimensions gathered in earlier phases.
            owners.assign(1, v + (origin - i) * stride[d]);
            for (size_t j = 0; j < k; ++j) {
              const auto e = size_t(orders[o][j]);
              std::vector<int> grown;
              for (int w : owners)
                for (int c = 0; c < shape[e]; ++c)
                  grown.push_back(w + (c - coord(w, e)) * stride[e]);
              owners = std::move(grown);
            }
            for (int p = first_piece; p < first_piece + best[o]; ++p)
              for (int w : owners)
                sends.push_back({ChunkId(p * n + w), RankId(v), RankId(v + direction * stride[d])});
          }
        }
      }
    }
    first_piece += best[o];
  }
  StepCoster coster(topology, std::move(units), pieces);
  for (AlgorithmStep &step : algorithm.steps) {
    std::sort(step.sends.begin(), step.sends.end());
    step.rounds = coster.add_step(step.sends).rounds;
  }
  SYNCOLL_TRY(bound, cut_bound(topology, CutDirection::Leaving));
  schedule.lambda = bound.lambda;
  schedule.cost = coster.step_synchronous();
  schedule.efficiency = quotient(schedule.lambda, schedule.cost);
  schedule.pipelined_cost = coster.pipelined();
  schedule.pipelined_efficiency = quotient(schedule.lambda, schedule.pipelined_cost);
  schedule.bounds.push_back(std::move(bound));
  return out;
}

Expected<ScaleSchedule> dimension_ordered(const Topology &topology, const std::vector<int> &shape,
                                          CollectiveKind kind, int pieces) {
  return from_allgather(topology, kind, pieces, "grid",
                        [&shape, pieces](const Topology &t) -> Expected<ScaleSchedule> {
                          SYNCOLL_TRY(grid, dimension_ordered_allgather(t, shape, pieces));
                          return std::move(grid.schedule);
                        });
}

} // namespace syncoll::synth
