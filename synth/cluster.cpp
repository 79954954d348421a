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

// For each link, the relations over it.
std::vector<std::vector<int32_t>> relations_of_links(const Topology &topology) {
  std::vector<std::vector<int32_t>> out(topology.links().size());
  for (size_t r = 0; r < topology.relations().size(); ++r)
    for (LinkId l : topology.relations()[r].links)
      out[l.index()].push_back(int32_t(r));
  return out;
}

// A GPU's way out over `links`: their bandwidths together, capped by every relation over all of
// them.
int64_t port_units(const Topology &topology, const ExactUnits &units,
                   const std::vector<std::vector<int32_t>> &relations_of,
                   const std::vector<LinkId> &links) {
  int64_t total = 0;
  for (LinkId l : links)
    total += units.links[l.index()];
  for (int32_t r : relations_of[links.front().index()]) {
    const std::vector<LinkId> &over = topology.relations()[size_t(r)].links;
    const bool all = std::all_of(links.begin(), links.end(), [&](LinkId l) {
      return std::binary_search(over.begin(), over.end(), l);
    });
    if (all)
      total = std::min(total, units.relations[size_t(r)]);
  }
  return total;
}

// The direct share of the pipelined trees, as a fraction of the units (box offset, piece) of a
// rail: 0 when the NICs bind with rails alone; else the share at which a GPU's NIC and its way
// into the box take equally long, per share of NIC traffic g(P-1) - (g-1)(P-1)w and switch
// traffic (g-1)(1 + (P-1)w) for a rail share w. Leaf groups take rails alone.
Fraction direct_share(const BoxCluster &c) {
  // A GPU's share of its NIC is n / q.
  const int64_t p = c.boxes - 1, g = c.gpus, n = c.nic_units, s = c.port_units, q = c.gpus_per_nic;
  if (g == 1 || c.groups() > 1)
    return {};
  // Rails alone (w = 1): NIC (P-1)q/n against switch (g-1)P/s.
  if (__int128(p) * s * q >= __int128(g - 1) * (p + 1) * n)
    return {};
  // 1 - w = ((P-1)((g-1)n - qs) + (g-1)n) / ((g-1)(P-1)(qs+n)), in [0, 1] here.
  const int64_t num = p * ((g - 1) * n - q * s) + (g - 1) * n;
  const int64_t den = (g - 1) * p * (q * s + n);
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

// Which groups the relations over links of several sources and destinations make: K boxes per
// group and the least of their bandwidths, or K = all boxes when there are none.
Expected<std::pair<int, int64_t>> leaf_groups(const Topology &topology, const ExactUnits &units,
                                              int boxes, int gpus, int gpus_per_nic) {
  const int n = boxes * gpus;
  int per_group = boxes;
  int64_t uplink = 0;
  std::vector<int> ups, downs;
  for (size_t r = 0; r < topology.relations().size(); ++r) {
    const std::vector<LinkId> &links = topology.relations()[r].links;
    const Link &first = topology.link(links.front());
    const bool one_source = std::all_of(
        links.begin(), links.end(), [&](LinkId l) { return topology.link(l).src == first.src; });
    const bool one_destination = std::all_of(
        links.begin(), links.end(), [&](LinkId l) { return topology.link(l).dst == first.dst; });
    // A NIC shared by the gpus_per_nic GPUs of one box caps the links from (or into) them
    // alone; a leaf group of one box with one NIC is the same set of links.
    const auto nic_of_one_box = [&](bool source) {
      std::vector<int> ends;
      for (LinkId l : links)
        ends.push_back((source ? topology.link(l).src : topology.link(l).dst).value());
      std::sort(ends.begin(), ends.end());
      ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
      return int(ends.size()) == gpus_per_nic && ends.front() / gpus == ends.back() / gpus;
    };
    if (one_source || one_destination || nic_of_one_box(true) || nic_of_one_box(false))
      continue;
    // Out of a group (its links from one aligned range of boxes to every rank outside it) or
    // into one; with two groups, both.
    const auto range = [&](bool source) {
      int low = n, high = -1;
      for (LinkId l : links) {
        const int end = source ? topology.link(l).src.value() : topology.link(l).dst.value();
        low = std::min(low, end);
        high = std::max(high, end);
      }
      return std::pair{low, high};
    };
    const auto group_of = [&](bool source) -> std::optional<int> {
      const auto [low, high] = range(source);
      const int size = high - low + 1;
      if (size % gpus != 0 || low % size != 0 || boxes % (size / gpus) != 0 || size == n ||
          int64_t(links.size()) != int64_t(size) * (n - size))
        return std::nullopt;
      for (LinkId l : links) {
        const int inside = source ? topology.link(l).src.value() : topology.link(l).dst.value();
        const int other = source ? topology.link(l).dst.value() : topology.link(l).src.value();
        if (inside < low || inside > high || (other >= low && other <= high))
          return std::nullopt;
      }
      return size / gpus;
    };
    const auto out_of = group_of(true), into = group_of(false);
    if (!out_of && !into)
      return fail({}, fmt::format("topology '{}': relation '{}' is not the uplink of a group of "
                                  "boxes",
                                  topology.name(), topology.relations()[r].name));
    for (const auto &[size, source] : {std::pair{out_of, true}, std::pair{into, false}}) {
      if (!size)
        continue;
      if (per_group != boxes && per_group != *size)
        return fail({},
                    fmt::format("topology '{}': its leaf groups differ in size", topology.name()));
      per_group = *size;
      (source ? ups : downs).push_back(range(source).first / (*size * gpus));
    }
    uplink = uplink == 0 ? units.relations[r] : std::min(uplink, units.relations[r]);
  }
  if (per_group != boxes) {
    std::sort(ups.begin(), ups.end());
    ups.erase(std::unique(ups.begin(), ups.end()), ups.end());
    std::sort(downs.begin(), downs.end());
    downs.erase(std::unique(downs.begin(), downs.end()), downs.end());
    std::vector<int> every(size_t(boxes / per_group));
    std::iota(every.begin(), every.end(), 0);
    if (ups != every || downs != every)
      return fail({}, fmt::format("topology '{}': not every leaf group has one uplink each way",
                                  topology.name()));
  }
  return std::pair{per_group, uplink};
}

// The cut of every rank outside `target` (ranks in `target` need all their data from outside):
// the links into `target` covered greedily by relations and single links, cheapest per link.
ClusterCut cut_into(const Topology &topology, const ExactUnits &units,
                    const std::vector<bool> &target, std::string name) {
  ClusterCut out;
  out.name = std::move(name);
  out.ranks_inside = int(std::count(target.begin(), target.end(), false));
  std::vector<char> crossing(topology.links().size(), 0), covered(topology.links().size(), 0);
  for (size_t l = 0; l < topology.links().size(); ++l) {
    const Link &link = topology.links()[l];
    crossing[l] = !target[link.src.index()] && target[link.dst.index()];
    out.crossing_links += crossing[l];
  }
  std::vector<std::vector<LinkId>> over(topology.relations().size());
  for (size_t r = 0; r < over.size(); ++r)
    for (LinkId l : topology.relations()[r].links)
      if (crossing[l.index()])
        over[r].push_back(l);
  int64_t left = out.crossing_links, alone = 0;
  while (left > 0) {
    // The cheapest relation per link it would newly cover, against the cheapest single link.
    int64_t best_units = 0, best_new = 0;
    int32_t best = -1;
    for (size_t r = 0; r < over.size(); ++r) {
      int64_t fresh = 0;
      for (LinkId l : over[r])
        fresh += !covered[l.index()];
      if (fresh > 0 &&
          (best < 0 || __int128(units.relations[r]) * best_new < __int128(best_units) * fresh)) {
        best = int32_t(r);
        best_units = units.relations[r];
        best_new = fresh;
      }
    }
    size_t cheapest_link = topology.links().size();
    for (size_t l = 0; l < topology.links().size(); ++l)
      if (crossing[l] && !covered[l] &&
          (cheapest_link == topology.links().size() || units.links[l] < units.links[cheapest_link]))
        cheapest_link = l;
    if (best < 0 || __int128(units.links[cheapest_link]) * best_new < __int128(best_units)) {
      covered[cheapest_link] = 1;
      out.bandwidth += units.links[cheapest_link];
      ++alone;
      --left;
      continue;
    }
    for (LinkId l : over[size_t(best)]) {
      left -= !covered[l.index()];
      covered[l.index()] = 1;
    }
    out.bandwidth += best_units;
    out.cover.push_back(topology.relations()[size_t(best)].name);
  }
  if (alone > 0)
    out.cover.push_back(fmt::format("{} links", alone));
  SYNCOLL_INVARIANT(out.bandwidth > 0, "a cluster cut that nothing crosses");
  out.lambda = Fraction::of(int64_t(out.ranks_inside) * units.units_per_gbps, out.bandwidth);
  return out;
}

// A piece a GPU receives by NIC: whose (the owner's box), from which box, which piece.
struct Receipt {
  int owner;
  int sender;
  int piece;
};

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
  if (h.nics_per_node < 1 || c.gpus % h.nics_per_node != 0)
    return refuse(
        fmt::format("{} NICs per box do not divide its {} GPUs", h.nics_per_node, c.gpus));
  c.gpus_per_nic = c.gpus / h.nics_per_node;
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
  SYNCOLL_TRY(units, exact_units(topology));
  SYNCOLL_TRY(groups, leaf_groups(topology, units, c.boxes, c.gpus, c.gpus_per_nic));
  c.boxes_per_group = groups.first;
  c.uplink_units = groups.second;
  const auto relations_of = relations_of_links(topology);
  c.nic_units = port_units(topology, units, relations_of, {nic_links.front()});
  c.port_units = c.gpus > 1 ? port_units(topology, units, relations_of, box_links) : c.nic_units;
  return c;
}

Expected<std::vector<ClusterCut>> box_cluster_cuts(const Topology &topology,
                                                   const BoxCluster &cluster) {
  SYNCOLL_TRY(units, exact_units(topology));
  const int n = topology.num_ranks();
  const auto first = [&](int ranks) {
    std::vector<bool> target(size_t(n), false);
    std::fill(target.begin(), target.begin() + ranks, true);
    return target;
  };
  std::vector<ClusterCut> out{cut_into(topology, units, first(cluster.gpus), "every box but box 0"),
                              cut_into(topology, units, first(1), "every GPU but rank 0")};
  if (cluster.groups() > 1)
    out.push_back(cut_into(topology, units, first(cluster.boxes_per_group * cluster.gpus),
                           "every leaf group but group 0"));
  return out;
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
  const int64_t k = cluster.boxes_per_group, groups = cluster.groups();
  const int least = groups == 1 ? 1 : k == 1 ? 2 : 3;
  if (steps < least)
    return fail({}, fmt::format("leaf groups need at least {} steps (spine, leaf, box), got {}",
                                least, steps));
  const int64_t near_units = (k - 1) * pieces;
  const int64_t spine_units = (groups - 1) * pieces;
  const int64_t leaf_units = (groups - 1) * (k - 1) * pieces;
  const Fraction share = steps == 1 ? Fraction{1, 1} : direct_share(cluster);
  const std::optional<int64_t> fixed_direct =
      goal == ClusterPlanGoal::PipelinedTrees || steps == 1
          ? std::optional(std::llround(double(near_units) * share.value()))
          : std::nullopt;
  const int last = steps - 1;
  const auto g = int64_t(cluster.gpus);

  // min sum c_t: c_t n >= q (rail_t + spine_t + leaf_t + g direct_t) for q GPUs a NIC,
  // c_t s >= (g-1) (what arrived
  // by NIC the step before, or C at first), c_t U >= K g spine_t; nothing arrives by NIC in the
  // last step, and no leaf piece before its spine piece.
  z3::context ctx;
  z3::optimize lp(ctx);
  const auto number = [&](int64_t v) { return ctx.real_val(std::to_string(v).c_str()); };
  const auto real = [&](std::string name) {
    z3::expr x = ctx.real_const(name.c_str());
    lp.add(x >= 0);
    return x;
  };
  std::vector<z3::expr> rail, spine, leaf, direct;
  z3::expr rail_sum = number(0), spine_sum = number(0), leaf_sum = number(0),
           direct_sum = number(0), total = number(0);
  for (int t = 0; t < steps; ++t) {
    const bool nic = t != last;
    rail.push_back(nic && k > 1 ? real(fmt::format("rail{}", t)) : number(0));
    spine.push_back(nic && groups > 1 ? real(fmt::format("spine{}", t)) : number(0));
    leaf.push_back(nic && groups > 1 && k > 1 ? real(fmt::format("leaf{}", t)) : number(0));
    direct.push_back(k > 1 ? real(fmt::format("direct{}", t)) : number(0));
    const z3::expr cost = real(fmt::format("cost{}", t));
    const z3::expr before =
        t == 0 ? number(pieces) : rail[size_t(t - 1)] + spine[size_t(t - 1)] + leaf[size_t(t - 1)];
    lp.add(cost * number(cluster.nic_units) >=
           number(cluster.gpus_per_nic) *
               (rail.back() + spine.back() + leaf.back() + number(g) * direct.back()));
    lp.add(cost * number(cluster.port_units) >= number(g - 1) * before);
    if (groups > 1)
      lp.add(cost * number(cluster.uplink_units) >= number(k * g) * spine.back());
    if (groups > 1 && k > 1)
      lp.add(leaf_sum + leaf.back() <= number(k - 1) * spine_sum);
    rail_sum = rail_sum + rail.back();
    spine_sum = spine_sum + spine.back();
    leaf_sum = leaf_sum + leaf.back();
    direct_sum = direct_sum + direct.back();
    total = total + cost;
  }
  lp.add(rail_sum + direct_sum == number(near_units));
  lp.add(spine_sum == number(spine_units));
  lp.add(leaf_sum == number(leaf_units));
  if (fixed_direct)
    lp.add(direct_sum == number(*fixed_direct));
  lp.minimize(total);
  std::vector<double> values[4];
  try {
    SYNCOLL_INVARIANT(lp.check() == z3::sat, "the cluster plan's linear program has no answer");
    const z3::model model = lp.get_model();
    for (int t = 0; t < steps; ++t) {
      const z3::expr *of[4] = {&rail[size_t(t)], &spine[size_t(t)], &leaf[size_t(t)],
                               &direct[size_t(t)]};
      for (int kind = 0; kind < 4; ++kind)
        values[kind].push_back(model.eval(*of[kind], true).as_double());
    }
  } catch (const z3::exception &e) {
    return fail({}, fmt::format("z3 failed on the cluster plan: {}", e.msg()));
  }
  ClusterPlan plan;
  plan.cluster = cluster;
  plan.pieces = pieces;
  const int64_t direct_units = fixed_direct.value_or(
      near_units -
      std::clamp<int64_t>(std::llround(std::accumulate(values[0].begin(), values[0].end(), 0.0)), 0,
                          near_units));
  plan.rail = whole(values[0], near_units - direct_units);
  plan.spine = whole(values[1], spine_units);
  plan.leaf = whole(values[2], leaf_units);
  plan.direct = whole(values[3], direct_units);
  // Rounding may put a leaf piece ahead of its spine piece: carry it to the next step.
  int64_t spine_before = 0, leaf_before = 0, carry = 0;
  for (int t = 0; t < steps; ++t) {
    int64_t &here = plan.leaf[size_t(t)];
    here += carry;
    const int64_t allowed = (k - 1) * spine_before - leaf_before;
    carry = std::max<int64_t>(0, here - allowed);
    here -= carry;
    spine_before += plan.spine[size_t(t)];
    leaf_before += here;
  }
  if (carry > 0 || plan.leaf.back() > 0)
    return fail({}, fmt::format("{} pieces per share round to no plan of {} steps whose leaf "
                                "pieces follow their spine pieces; give more pieces",
                                pieces, steps));
  SYNCOLL_INVARIANT(plan.rail.back() == 0 && plan.spine.back() == 0,
                    "pieces in the last step would not be forwarded");
  return plan;
}

void ClusterPlan::sends(int step, std::vector<Send> &out) const {
  out.clear();
  const int gpus = cluster.gpus, n = cluster.ranks();
  const int k = cluster.boxes_per_group, groups = cluster.groups();
  const auto begin_of = [&](const std::vector<int64_t> &per_step, int t) {
    return std::accumulate(per_step.begin(), per_step.begin() + t, int64_t(0));
  };
  const int64_t rail_total = begin_of(rail, int(rail.size()));
  const auto box = [&](int group, int position) {
    return ((group + groups) % groups) * k + (position + k) % k;
  };
  const auto rank = [&](int b, int gpu) { return b * gpus + gpu; };
  // Unit u of each kind, as received by GPU i of box b: whose piece, from which box.
  const auto near = [&](int64_t u, int b) {
    const int from = box(b / k, b % k - 1 - int(u / pieces));
    return Receipt{from, from, int(u % pieces)};
  };
  const auto over_spine = [&](int64_t u, int b) {
    const int from = box(b / k - 1 - int(u / pieces), b % k);
    return Receipt{from, from, int(u % pieces)};
  };
  const auto over_leaf = [&](int64_t u, int b) {
    const int64_t q = u / (k - 1);
    const int position = b % k - 1 - int(u % (k - 1));
    return Receipt{box(b / k - 1 - int(q / pieces), position), box(b / k, position),
                   int(q % pieces)};
  };
  const auto send = [&](int piece, int owner, int from, int to) {
    out.push_back({ChunkId(piece * n + owner), RankId(from), RankId(to)});
  };
  // Sends come in slots, each a permutation (every GPU sends one piece and receives one), so that
  // links and NICs that serve transfers first come first served are never left waiting on one
  // another.
  // The units of one kind that arrive by NIC in step t: their sends (forward false), or each
  // arrived piece passed on to the box's other GPUs (forward true, the step after).
  const auto units_of_step = [&](int t, auto &&receipt_of, const std::vector<int64_t> &per_step,
                                 bool forward) {
    const int64_t first = begin_of(per_step, t);
    for (int64_t u = first; u < first + per_step[size_t(t)]; ++u) {
      if (forward) {
        for (int shift = 1; shift < gpus; ++shift)
          for (int b = 0; b < n / gpus; ++b) {
            const Receipt r = receipt_of(u, b);
            for (int i = 0; i < gpus; ++i)
              send(r.piece, rank(r.owner, i), rank(b, i), rank(b, (i + shift) % gpus));
          }
        continue;
      }
      for (int b = 0; b < n / gpus; ++b) {
        const Receipt r = receipt_of(u, b);
        for (int i = 0; i < gpus; ++i)
          send(r.piece, rank(r.owner, i), rank(r.sender, i), rank(b, i));
      }
    }
  };
  if (step == 0) {
    for (int p = 0; p < pieces; ++p)
      for (int shift = 1; shift < gpus; ++shift)
        for (int r = 0; r < n; ++r)
          send(p, r, r, rank(r / gpus, (r % gpus + shift) % gpus));
  } else { // what arrived by NIC in the step before, on to the box
    units_of_step(step - 1, near, rail, true);
    units_of_step(step - 1, over_spine, spine, true);
    units_of_step(step - 1, over_leaf, leaf, true);
  }
  units_of_step(step, near, rail, false);
  units_of_step(step, over_spine, spine, false);
  units_of_step(step, over_leaf, leaf, false);
  const int64_t first = rail_total + begin_of(direct, step);
  for (int64_t u = first; u < first + direct[size_t(step)]; ++u)
    for (int shift = 0; shift < gpus; ++shift)
      for (int b = 0; b < n / gpus; ++b) {
        const Receipt r = near(u, b);
        for (int j = 0; j < gpus; ++j)
          send(r.piece, rank(r.owner, j), rank(r.sender, j), rank(b, (j + shift) % gpus));
      }
}

Fraction ClusterPlan::modelled_cost(int64_t units_per_gbps) const {
  Fraction total;
  const int64_t g = cluster.gpus, k = cluster.boxes_per_group;
  const auto larger = [](Fraction a, Fraction b) { return less(a, b) ? b : a; };
  for (int t = 0; t < num_steps(); ++t) {
    const size_t i = size_t(t);
    const int64_t before = t == 0 ? pieces : rail[i - 1] + spine[i - 1] + leaf[i - 1];
    Fraction step = Fraction::of(
        cluster.gpus_per_nic * (rail[i] + spine[i] + leaf[i] + g * direct[i]) * units_per_gbps,
        int64_t(pieces) * cluster.nic_units);
    step = larger(step, Fraction::of((g - 1) * before * units_per_gbps,
                                     int64_t(pieces) * cluster.port_units));
    if (cluster.groups() > 1)
      step = larger(step, Fraction::of(k * g * spine[i] * units_per_gbps,
                                       int64_t(pieces) * cluster.uplink_units));
    total = sum(total, step);
  }
  return total;
}

Expected<ClusterSchedule> box_cluster_allgather(const Topology &topology, int steps, int pieces,
                                                ClusterPlanGoal goal) {
  SYNCOLL_TRY(cluster, box_cluster(topology));
  SYNCOLL_TRY(plan, plan_box_cluster(cluster, steps, pieces, goal));
  SYNCOLL_TRY(cuts, box_cluster_cuts(topology, cluster));
  SYNCOLL_TRY(units, exact_units(topology));
  ClusterSchedule out;
  out.units_per_gbps = units.units_per_gbps;
  StepCoster coster(topology, std::move(units), pieces);
  std::vector<Send> sends;
  for (int t = 0; t < plan.num_steps(); ++t) {
    plan.sends(t, sends);
    out.rounds.push_back(coster.add_step(sends).rounds);
  }
  out.cost = coster.step_synchronous();
  out.pipelined_cost = coster.pipelined();
  out.cut = cuts.front();
  for (const ClusterCut &cut : cuts)
    if (less(out.cut.lambda, cut.lambda))
      out.cut = cut;
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
  if (!collective.reduce_scatter)
    return cluster_algorithm(*collective.allgather, topology);
  const ClusterPlan &plan = collective.reduce_scatter->plan;
  const std::optional<Algorithm> allgather =
      collective.allgather ? std::optional(cluster_algorithm(*collective.allgather, topology))
                           : std::nullopt;
  return collective_from_allgathers(
      collective.kind, cluster_algorithm(*collective.reduce_scatter, reverse_topology(topology)),
      allgather ? &*allgather : nullptr, topology.num_ranks(), plan.pieces, topology.name(),
      "cluster", fmt::format("s{}-c{}", plan.num_steps(), plan.pieces));
}

} // namespace syncoll::synth
