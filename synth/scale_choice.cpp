#include "synth/scale_choice.h"

#include "synth/bounds.h"
#include "synth/grid.h"
#include "synth/paced.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace syncoll::synth {

int default_cluster_steps(int ranks) {
  return 2 * static_cast<int>(std::ceil(std::log2(double(ranks))));
}

int default_cluster_pieces(const BoxCluster &cluster) {
  return box_cluster_pieces(cluster, 2048 / (cluster.boxes - 1));
}

int default_direct_pieces(const Topology &topology, CollectiveKind kind) {
  const Expected<int> binding = paced_pieces(topology);
  const int ranks = topology.num_ranks();
  // An Allreduce's chunks per rank are the ranks' shares, each cut into the pieces.
  const int64_t per_piece = kind == CollectiveKind::Allreduce ? ranks : 1;
  if (!binding || !fits_collective_model(kind, ranks, int(per_piece * *binding)))
    return 1;
  return *binding;
}

Expected<DirectChoice> choose_direct_schedule(const Topology &topology, CollectiveKind kind,
                                              const ScaleRequest &request) {
  if (topology.num_switches() > 0)
    return fail({}, fmt::format("topology '{}' has switches; synth scale's direct-connect "
                                "schedules send between ranks over direct links (a cluster of "
                                "boxes with a NIC per GPU is planned on its links: multinode "
                                "--nics GPUS)",
                                topology.name()));
  DirectChoice out;
  out.pieces = request.pieces.value_or(default_direct_pieces(topology, kind));
  const Distances hops = hop_distances(topology);
  out.diameter = *std::max_element(hops.hops.begin(), hops.hops.end());
  const auto say = [&](const std::string &what) {
    if (request.progress)
      request.progress(what);
  };
  std::optional<ScaleSchedule> best;
  const auto consider = [&](ScaleSchedule schedule, std::string method, bool paced = false,
                            int planned = 0) {
    out.candidates.push_back(
        {method, paced, paced ? planned : schedule.algorithm.num_steps(), schedule.efficiency});
    const bool cheaper = !best || less(schedule.cost, best->cost) ||
                         (schedule.cost == best->cost &&
                          schedule.algorithm.num_steps() < best->algorithm.num_steps());
    if (cheaper) {
      best = std::move(schedule);
      out.method = std::move(method);
    }
  };
  if (!request.steps) {
    say(fmt::format("breadth-first, {} pieces per share", out.pieces));
    SYNCOLL_TRY(breadth, breadth_first(topology, kind, out.pieces));
    consider(std::move(breadth), "breadth-first");
    if (request.mesh_shape) {
      const std::vector<int> &shape = *request.mesh_shape;
      say("dimension-ordered");
      SYNCOLL_TRY(grid, dimension_ordered(topology, shape, kind, out.pieces));
      SYNCOLL_TRY(orders, dimension_ordered_allgather(topology, shape, out.pieces));
      std::vector<std::string> axes_of;
      for (const std::vector<int> &order : orders.orders) {
        std::string axes;
        for (int d : order)
          axes += char('x' + d);
        axes_of.push_back(axes);
      }
      consider(std::move(grid),
               fmt::format("dimension-ordered (pieces {} in orders {})",
                           fmt::join(orders.pieces_per_order, "+"), fmt::join(axes_of, ", ")));
    }
  }
  if (request.steps || best->efficiency != Fraction{1, 1}) {
    out.paced_tried = true;
    const int last = request.steps ? *request.steps : out.diameter + 2;
    for (int steps = request.steps.value_or(out.diameter); steps <= last; ++steps) {
      say(fmt::format("paced in {} steps", steps));
      auto schedule = paced(topology, kind, out.pieces, steps);
      if (!schedule) {
        if (request.steps)
          return tl::unexpected(std::move(schedule).error());
        out.paced_refused = schedule.error().items().front().message;
        break;
      }
      const bool optimal = schedule->efficiency == Fraction{1, 1};
      consider(std::move(*schedule), fmt::format("paced ({} steps planned)", steps), true, steps);
      if (optimal)
        break;
    }
  }
  out.schedule = std::move(*best);
  return out;
}

} // namespace syncoll::synth
