#include "synth/cluster.h"

#include "model/cut_certificate.h"
#include "model/invariant.h"
#include "synth/combining.h"
#include "synth/step_cost.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <optional>
#include <z3++.h>

namespace syncoll::synth {

namespace {

// A GPU's way out over `links`: their bandwidths together, capped by the one-source relation
// they share, if they share one.
int64_t port_units(const ExactBandwidths &bandwidths, const std::vector<LinkId> &links) {
  int64_t total = 0;
  for (LinkId l : links)
    total += bandwidths.links[l.index()];
  const int32_t relation = bandwidths.source_relation[links.front().index()];
  const bool shared = std::all_of(links.begin(), links.end(), [&](LinkId l) {
    return bandwidths.source_relation[l.index()] == relation;
  });
  if (relation >= 0 && shared)
    total = std::min(total, bandwidths.relations[size_t(relation)]);
  return total;
}

// The direct share of the pipelined trees, as a fraction of the units (box offset, piece) of a
// rail: 0 when the NICs bind with rails alone; else the share at which a GPU's NIC and its way
// into the box take equally long, per share of NIC traffic g(P-1) - (g-1)(P-1)w and switch
// traffic (g-1)(1 + (P-1)w) for a rail share w.
Fraction direct_share(const BoxCluster &c) {
  const int64_t p = c.boxes - 1, g = c.gpus, n = c.nic_units, s = c.port_units;
  if (g == 1)
    return {};
  // Rails alone (w = 1): NIC (P-1)/n against switch (g-1)P/s.
  if (__int128(p) * s >= __int128(g - 1) * (p + 1) * n)
    return {};
  // 1 - w = ((P-1)((g-1)n - s) + (g-1)n) / ((g-1)(P-1)(s+n)), in [0, 1] here.
  const int64_t num = p * ((g - 1) * n - s) + (g - 1) * n;
  const int64_t den = (g - 1) * p * (s + n);
  SYNCOLL_INVARIANT(num > 0, "a direct share where rails alone bind the NICs");
  return num >= den ? Fraction{1, 1} : Fraction::of(num, den);
}

// Rounds per-step reals to whole pieces that add up to `total`: cumulative sums rounded.
std::vector<int64_t> whole(const std::vector<double> &values, int64_t total) {
  std::vector<int64_t> out(values.size(), 0);
  double running = 0;
  int64_t before = 0;
  for (size_t t = 0; t < values.size(); ++t) {
    running += std::max(0.0, values[t]);
    const int64_t upto =
        t + 1 == values.size() ? total : std::clamp<int64_t>(std::llround(running), before, total);
    out[t] = upto - before;
    before = upto;
  }
  return out;
}

} // namespace

Expected<BoxCluster> box_cluster(const Topology &topology) {
  const Hierarchy &h = topology.hierarchy();
  const auto refuse = [&](std::string_view why) {
    return fail({}, fmt::format("topology '{}' is not a cluster of boxes with a NIC per GPU: {}",
                                topology.name(), why));
  };
  if (topology.num_switches() > 0)
    return refuse("it has switches (give the same machine unwound to links: multinode)");
  if (h.levels.size() != 2)
    return refuse("its hierarchy is not boxes x GPUs");
  BoxCluster c;
  c.boxes = h.levels[0].size;
  c.gpus = h.levels[1].size;
  if (c.boxes < 2)
    return refuse("it has one box");
  if (h.nics_per_node != c.gpus)
    return refuse(fmt::format("{} NICs per box for {} GPUs", h.nics_per_node, c.gpus));
  std::vector<LinkId> box_links, nic_links;
  for (int b = 0; b < c.boxes; ++b)
    for (int i = 0; i < c.gpus; ++i) {
      const RankId from(b * c.gpus + i);
      for (int j = 0; j < c.gpus; ++j) {
        if (j == i)
          continue;
        const auto link = topology.find_link(from, RankId(b * c.gpus + j));
        if (!link)
          return refuse(fmt::format("no link {} -> {} in box {}", from.value(), b * c.gpus + j, b));
        if (b == 0 && i == 0)
          box_links.push_back(*link);
      }
      for (int o = 1; o < c.boxes; ++o) {
        const auto link = topology.find_link(from, RankId(((b + o) % c.boxes) * c.gpus + i));
        if (!link)
          return refuse(fmt::format("no link from rank {} to GPU {} of box {}", from.value(), i,
                                    (b + o) % c.boxes));
        if (b == 0 && i == 0)
          nic_links.push_back(*link);
      }
    }
  SYNCOLL_TRY(bandwidths, exact_bandwidths(topology));
  c.nic_units = port_units(bandwidths, {nic_links.front()});
  c.port_units = c.gpus > 1 ? port_units(bandwidths, box_links) : c.nic_units;
  return c;
}

int box_cluster_pieces(const BoxCluster &cluster, int at_least) {
  const Fraction direct = direct_share(cluster);
  // (P - 1) x C x direct must be whole.
  const int64_t step = Fraction::of(direct.num * (cluster.boxes - 1), direct.den).den;
  const int64_t pieces = (std::max<int64_t>(at_least, 1) + step - 1) / step * step;
  return int(std::min<int64_t>(pieces, int64_t(1) << 20));
}

Expected<ClusterPlan> plan_box_cluster(const BoxCluster &cluster, int steps, int pieces,
                                       ClusterPlanGoal goal) {
  if (steps < 1)
    return fail({}, fmt::format("a schedule has at least 1 step, got {}", steps));
  if (pieces < 1)
    return fail({}, fmt::format("a share has at least 1 piece, got {}", pieces));
  const int64_t units = int64_t(cluster.boxes - 1) * pieces;
  const Fraction share = steps == 1 ? Fraction{1, 1} : direct_share(cluster);
  const std::optional<int64_t> fixed_direct =
      goal == ClusterPlanGoal::PipelinedTrees || steps == 1
          ? std::optional(std::llround(double(units) * share.value()))
          : std::nullopt;
  const int last = steps - 1;
  const auto g = int64_t(cluster.gpus);

  // min sum c_t: c_t n >= rail_t + g direct_t, c_t s >= (g-1) rail_{t-1} (rail_{-1} = C,
  // rail_last = 0), rail and direct adding up to their totals.
  z3::context ctx;
  z3::optimize lp(ctx);
  std::vector<z3::expr> rail, direct, cost;
  const auto real = [&](std::string name) {
    z3::expr x = ctx.real_const(name.c_str());
    lp.add(x >= 0);
    return x;
  };
  z3::expr rail_sum = ctx.real_val(0), direct_sum = ctx.real_val(0), total = ctx.real_val(0);
  for (int t = 0; t < steps; ++t) {
    rail.push_back(t == last ? ctx.real_val(0) : real(fmt::format("rail{}", t)));
    direct.push_back(real(fmt::format("direct{}", t)));
    cost.push_back(real(fmt::format("cost{}", t)));
    const z3::expr before =
        t == 0 ? ctx.real_val(std::to_string(pieces).c_str()) : rail[size_t(t - 1)];
    lp.add(cost.back() * ctx.real_val(std::to_string(cluster.nic_units).c_str()) >=
           rail.back() + ctx.real_val(std::to_string(g).c_str()) * direct.back());
    lp.add(cost.back() * ctx.real_val(std::to_string(cluster.port_units).c_str()) >=
           ctx.real_val(std::to_string(g - 1).c_str()) * before);
    rail_sum = rail_sum + rail.back();
    direct_sum = direct_sum + direct.back();
    total = total + cost.back();
  }
  lp.add(rail_sum + direct_sum == ctx.real_val(std::to_string(units).c_str()));
  if (fixed_direct)
    lp.add(direct_sum == ctx.real_val(std::to_string(*fixed_direct).c_str()));
  lp.minimize(total);
  std::vector<double> rail_values(size_t(steps), 0), direct_values(size_t(steps), 0);
  try {
    SYNCOLL_INVARIANT(lp.check() == z3::sat, "the cluster plan's linear program has no answer");
    const z3::model model = lp.get_model();
    for (int t = 0; t < steps; ++t) {
      rail_values[size_t(t)] = model.eval(rail[size_t(t)], true).as_double();
      direct_values[size_t(t)] = model.eval(direct[size_t(t)], true).as_double();
    }
  } catch (const z3::exception &e) {
    return fail({}, fmt::format("z3 failed on the cluster plan: {}", e.msg()));
  }
  ClusterPlan plan;
  plan.cluster = cluster;
  plan.pieces = pieces;
  const int64_t direct_units = fixed_direct.value_or(
      units -
      std::clamp<int64_t>(
          std::llround(std::accumulate(rail_values.begin(), rail_values.end(), 0.0)), 0, units));
  plan.rail = whole(rail_values, units - direct_units);
  plan.direct = whole(direct_values, direct_units);
  SYNCOLL_INVARIANT(plan.rail.back() == 0, "rail pieces in the last step would not be forwarded");
  return plan;
}

void ClusterPlan::sends(int step, std::vector<Send> &out) const {
  out.clear();
  const int boxes = cluster.boxes, gpus = cluster.gpus, n = cluster.ranks();
  const int64_t rail_total = std::accumulate(rail.begin(), rail.end(), int64_t(0));
  const int64_t rail_begin = std::accumulate(rail.begin(), rail.begin() + step, int64_t(0));
  const int64_t direct_begin =
      rail_total + std::accumulate(direct.begin(), direct.begin() + step, int64_t(0));
  // Unit u is (box offset 1 + u / C, piece u % C); rail units come first, step by step.
  const auto offset_of = [&](int64_t u) { return 1 + int(u / pieces); };
  const auto piece_of = [&](int64_t u) { return int(u % pieces); };
  const auto rank = [&](int box, int gpu) { return box * gpus + gpu; };
  const auto send = [&](int piece, int owner, int from, int to) {
    out.push_back({ChunkId(piece * n + owner), RankId(from), RankId(to)});
  };
  // Sends come in slots, each a permutation (every GPU sends one piece and receives one), so that
  // links and NICs that serve transfers first come first served are never left waiting on one
  // another.
  const auto forward_in_box = [&](int piece, auto owner_of) {
    for (int shift = 1; shift < gpus; ++shift)
      for (int b = 0; b < boxes; ++b)
        for (int i = 0; i < gpus; ++i)
          send(piece, owner_of(b, i), rank(b, i), rank(b, (i + shift) % gpus));
  };
  if (step == 0)
    for (int p = 0; p < pieces; ++p)
      forward_in_box(p, [&](int b, int i) { return rank(b, i); });
  else // the rail pieces that arrived in the step before
    for (int64_t u = rail_begin - rail[size_t(step - 1)]; u < rail_begin; ++u)
      forward_in_box(piece_of(u),
                     [&](int b, int i) { return rank((b + boxes - offset_of(u)) % boxes, i); });
  for (int64_t u = rail_begin; u < rail_begin + rail[size_t(step)]; ++u)
    for (int b = 0; b < boxes; ++b)
      for (int i = 0; i < gpus; ++i) {
        const int owner = rank((b + boxes - offset_of(u)) % boxes, i);
        send(piece_of(u), owner, owner, rank(b, i));
      }
  for (int64_t u = direct_begin; u < direct_begin + direct[size_t(step)]; ++u)
    for (int shift = 0; shift < gpus; ++shift)
      for (int b = 0; b < boxes; ++b)
        for (int j = 0; j < gpus; ++j) {
          const int owner = rank((b + boxes - offset_of(u)) % boxes, j);
          send(piece_of(u), owner, owner, rank(b, (j + shift) % gpus));
        }
}

Fraction ClusterPlan::modelled_cost(int64_t units_per_gbps) const {
  Fraction total;
  const int64_t g = cluster.gpus;
  for (int t = 0; t < num_steps(); ++t) {
    const int64_t before = t == 0 ? pieces : rail[size_t(t - 1)];
    const Fraction nic = Fraction::of((rail[size_t(t)] + g * direct[size_t(t)]) * units_per_gbps,
                                      int64_t(pieces) * cluster.nic_units);
    const Fraction port =
        Fraction::of((g - 1) * before * units_per_gbps, int64_t(pieces) * cluster.port_units);
    total = sum(total, less(nic, port) ? port : nic);
  }
  return total;
}

Expected<std::vector<ClusterCut>> box_cluster_cuts(const Topology &topology,
                                                   const BoxCluster &cluster) {
  SYNCOLL_TRY(bandwidths, exact_bandwidths(topology));
  const int n = topology.num_ranks();
  // A relation vertex goes with its source when it has one; one into a vertex goes inside when
  // that vertex is inside or everything feeding it is, so that it is the relation, not its
  // links, that crosses.
  const auto make = [&](std::string name, const std::vector<bool> &inside) {
    ClusterCut out;
    out.name = std::move(name);
    for (int r = 0; r < n; ++r)
      if (inside[size_t(r)])
        out.cut.vertices.push_back(RankId(r));
    for (size_t r = 0; r < topology.relations().size(); ++r) {
      const std::vector<LinkId> &links = topology.relations()[r].links;
      const Link &first = topology.link(links.front());
      const bool one_source = std::all_of(
          links.begin(), links.end(), [&](LinkId l) { return topology.link(l).src == first.src; });
      const bool in = one_source ? inside[first.src.index()]
                                 : inside[first.dst.index()] ||
                                       std::all_of(links.begin(), links.end(), [&](LinkId l) {
                                         return bool(inside[topology.link(l).src.index()]);
                                       });
      if (in && links.size() > 1)
        out.cut.relations.push_back(int32_t(r));
    }
    out.value = evaluate_cut(topology, bandwidths, out.cut, CutDirection::Leaving);
    SYNCOLL_INVARIANT(out.value.bandwidth > 0, "a cluster cut that nothing crosses");
    out.lambda = Fraction::of(int64_t(out.value.ranks_inside) * bandwidths.units_per_gbps,
                              out.value.bandwidth);
    return out;
  };
  std::vector<bool> boxes_but_one(size_t(n), true), gpus_but_one(size_t(n), true);
  for (int i = 0; i < cluster.gpus; ++i)
    boxes_but_one[size_t(i)] = false;
  gpus_but_one[0] = false;
  return std::vector<ClusterCut>{make("every box but box 0", boxes_but_one),
                                 make("every GPU but rank 0", gpus_but_one)};
}

Expected<ClusterSchedule> box_cluster_allgather(const Topology &topology, int steps, int pieces,
                                                ClusterPlanGoal goal) {
  SYNCOLL_TRY(cluster, box_cluster(topology));
  SYNCOLL_TRY(plan, plan_box_cluster(cluster, steps, pieces, goal));
  SYNCOLL_TRY(cuts, box_cluster_cuts(topology, cluster));
  SYNCOLL_TRY(bandwidths, exact_bandwidths(topology));
  ClusterSchedule out;
  out.units_per_gbps = bandwidths.units_per_gbps;
  StepCoster coster(topology, std::move(bandwidths), pieces);
  std::vector<Send> sends;
  for (int t = 0; t < plan.num_steps(); ++t) {
    plan.sends(t, sends);
    out.rounds.push_back(coster.add_step(sends).rounds);
  }
  out.cost = coster.step_synchronous();
  out.pipelined_cost = coster.pipelined();
  out.cut = less(cuts[0].lambda, cuts[1].lambda) ? cuts[1] : cuts[0];
  out.efficiency = quotient(out.cut.lambda, out.cost);
  out.pipelined_efficiency = quotient(out.cut.lambda, out.pipelined_cost);
  out.plan = std::move(plan);
  return out;
}

Algorithm cluster_algorithm(const ClusterSchedule &schedule, const Topology &topology) {
  const ClusterPlan &plan = schedule.plan;
  Algorithm out;
  out.name =
      fmt::format("cluster-allgather-{}-s{}-c{}", topology.name(), plan.num_steps(), plan.pieces);
  out.target = {"allgather", plan.cluster.ranks(), plan.pieces, std::nullopt, topology.name()};
  for (int t = 0; t < plan.num_steps(); ++t) {
    AlgorithmStep step;
    step.rounds = schedule.rounds[size_t(t)];
    plan.sends(t, step.sends);
    out.steps.push_back(std::move(step));
  }
  return out;
}

Expected<ClusterCollective> box_cluster_collective(const Topology &topology, CollectiveKind kind,
                                                   int steps, int pieces, ClusterPlanGoal goal) {
  ClusterCollective out;
  out.kind = kind;
  switch (kind) {
  case CollectiveKind::Allgather:
    break;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::Allreduce: {
    SYNCOLL_TRY(dual, box_cluster_allgather(reverse_topology(topology), steps, pieces, goal));
    out.reduce_scatter = std::move(dual);
    break;
  }
  case CollectiveKind::Alltoall:
  case CollectiveKind::Broadcast:
  case CollectiveKind::Reduce:
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
  case CollectiveKind::AllToNext:
  case CollectiveKind::Custom:
    return fail({}, fmt::format("a cluster of boxes is planned for allgather, reducescatter and "
                                "allreduce, not {}",
                                collective_kind_name(kind)));
  }
  if (kind != CollectiveKind::ReduceScatter) {
    SYNCOLL_TRY(allgather, box_cluster_allgather(topology, steps, pieces, goal));
    out.allgather = std::move(allgather);
  }
  for (const auto *part : {&out.reduce_scatter, &out.allgather}) {
    if (!*part)
      continue;
    out.lambda = sum(out.lambda, (*part)->cut.lambda);
    out.cost = sum(out.cost, (*part)->cost);
    out.pipelined_cost = sum(out.pipelined_cost, (*part)->pipelined_cost);
  }
  out.efficiency = quotient(out.lambda, out.cost);
  out.pipelined_efficiency = quotient(out.lambda, out.pipelined_cost);
  return out;
}

int ClusterCollective::num_steps() const {
  return (reduce_scatter ? reduce_scatter->plan.num_steps() : 0) +
         (allgather ? allgather->plan.num_steps() : 0);
}

void ClusterCollective::sends(int step, std::vector<Send> &out) const {
  const int first = reduce_scatter ? reduce_scatter->plan.num_steps() : 0;
  if (step >= first) {
    allgather->plan.sends(step - first, out);
    return;
  }
  reduce_scatter->plan.sends(first - 1 - step, out);
  for (Send &send : out) {
    std::swap(send.src, send.dst);
    send.op = SendOp::Reduce;
  }
}

Algorithm cluster_collective_algorithm(const ClusterCollective &collective,
                                       const Topology &topology) {
  std::optional<Algorithm> reduce_scatter;
  if (collective.reduce_scatter)
    reduce_scatter =
        invert_dual(cluster_algorithm(*collective.reduce_scatter, reverse_topology(topology)));
  const int n = topology.num_ranks();
  switch (collective.kind) {
  case CollectiveKind::Allgather:
    return cluster_algorithm(*collective.allgather, topology);
  case CollectiveKind::ReduceScatter: {
    const int pieces = collective.reduce_scatter->plan.pieces;
    reduce_scatter->name = fmt::format("cluster-reducescatter-{}-s{}-c{}", topology.name(),
                                       collective.reduce_scatter->plan.num_steps(), pieces);
    reduce_scatter->target = {"reducescatter", n, pieces, std::nullopt, topology.name()};
    return *reduce_scatter;
  }
  case CollectiveKind::Allreduce: {
    const int pieces = collective.allgather->plan.pieces;
    Algorithm out = compose_allreduce(
        *reduce_scatter, cluster_algorithm(*collective.allgather, topology), n, pieces);
    out.name = fmt::format("cluster-allreduce-{}-s{}-c{}", topology.name(),
                           collective.allgather->plan.num_steps(), pieces);
    out.target = {"allreduce", n, n * pieces, std::nullopt, topology.name()};
    return out;
  }
  case CollectiveKind::Alltoall:
  case CollectiveKind::Broadcast:
  case CollectiveKind::Reduce:
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
  case CollectiveKind::AllToNext:
  case CollectiveKind::Custom:
    break;
  }
  SYNCOLL_INVARIANT(false, "a cluster collective of a kind box_cluster_collective refuses");
  return {};
}

} // namespace syncoll::synth
