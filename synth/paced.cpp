#include "synth/paced.h"

#include "model/cut_certificate.h"
#include "model/invariant.h"
#include "synth/bounds.h"
#include "synth/step_cost.h"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <numeric>
#include <optional>

namespace syncoll::synth {

namespace {

constexpr int kMaxInDegree = 12;

// Each rank's incoming links, with their bandwidth in multiples of the greatest common unit.
struct Incoming {
  std::vector<std::vector<int32_t>> links;
  std::vector<std::vector<int64_t>> weight;
  std::vector<int64_t> total; ///< per rank, the sum of its weights
  std::vector<uint32_t> slot; ///< per link, its place among its destination's incoming links
  std::vector<std::vector<size_t>> out_links; ///< per rank, the links leaving it
};

Incoming incoming_of(const Topology &topology, const ExactUnits &units) {
  const int n = topology.num_ranks();
  int64_t unit = 0;
  for (int64_t u : units.links)
    unit = std::gcd(unit, u);
  Incoming out;
  out.links.resize(size_t(n));
  out.weight.resize(size_t(n));
  out.total.assign(size_t(n), 0);
  out.out_links.resize(size_t(n));
  for (size_t l = 0; l < topology.links().size(); ++l) {
    const size_t v = topology.links()[l].dst.index();
    out.slot.push_back(uint32_t(out.links[v].size()));
    out.out_links[topology.links()[l].src.index()].push_back(l);
    out.links[v].push_back(int32_t(l));
    out.weight[v].push_back(units.links[l] / unit);
    out.total[v] += units.links[l] / unit;
  }
  return out;
}

// How a chunk's deadline at a rank is set: T - 1 minus the hops it still has to go past the rank.
enum class DeadlineRule {
  // The most hops to any rank that a shortest path from the owner through this rank reaches:
  // every rank that could forward the chunk is held to the farthest that could need it.
  EveryShortestPath,
  // One breadth-first tree per owner, each rank hung below the neighbour (one hop nearer the
  // owner) whose subtree is shallowest so far: a rank is held only to its own subtree's depth.
  ShallowTree,
};

// The deadline of every chunk at every rank under `rule`; row-major by owner.
std::vector<int16_t> deadlines(const Topology &topology, const Distances &hops, int steps,
                               DeadlineRule rule) {
  const int n = topology.num_ranks();
  std::vector<std::vector<int32_t>> in_ranks(static_cast<size_t>(n));
  for (const Link &link : topology.links())
    in_ranks[link.dst.index()].push_back(int32_t(link.src.value()));
  const int farthest = *std::max_element(hops.hops.begin(), hops.hops.end());
  std::vector<int16_t> out(size_t(n) * size_t(n));
  std::vector<std::vector<int32_t>> at_hops(size_t(farthest) + 1);
  std::vector<int> below(static_cast<size_t>(n));
  for (int s = 0; s < n; ++s) {
    for (std::vector<int32_t> &ranks : at_hops)
      ranks.clear();
    for (int v = n - 1; v >= 0; --v)
      at_hops[size_t(hops.at(s, v))].push_back(v);
    std::fill(below.begin(), below.end(), 0);
    // Farthest from the owner first, so every rank's subtree is complete when it is reached;
    // within a distance from the highest rank down, each hung below its lowest-numbered
    // shallowest neighbour. The two orders matter together: the mirrored pairing (lowest rank
    // first, ties to the highest neighbour) does nearly as well (20 x 30: 99.3% in D steps, not
    // 100%), while both in one direction pile children on the same parents and lose 0.2-1.8%
    // on the long meshes measured.
    for (auto level = at_hops.rbegin(); level != at_hops.rend(); ++level)
      for (int32_t v : *level) {
        out[size_t(s) * size_t(n) + size_t(v)] = int16_t(steps - 1 - below[size_t(v)]);
        switch (rule) {
        case DeadlineRule::EveryShortestPath:
          for (int32_t u : in_ranks[size_t(v)])
            if (hops.at(s, u) == hops.at(s, v) - 1)
              below[size_t(u)] = std::max(below[size_t(u)], below[size_t(v)] + 1);
          break;
        case DeadlineRule::ShallowTree: {
          int32_t parent = -1;
          for (int32_t u : in_ranks[size_t(v)])
            if (hops.at(s, u) == hops.at(s, v) - 1 &&
                (parent < 0 || below[size_t(u)] < below[size_t(parent)] ||
                 (below[size_t(u)] == below[size_t(parent)] && u < parent)))
              parent = u;
          if (parent >= 0)
            below[size_t(parent)] = std::max(below[size_t(parent)], below[size_t(v)] + 1);
          break;
        }
        }
      }
  }
  return out;
}

// The planned cap of every step, in pieces per unit of weight: the binding ranks (least total
// incoming weight) take in every other share over `steps` steps, as evenly as their hop balls
// allow (by step t a rank can hold at most the shares of the ranks t + 1 hops away or nearer).
std::vector<int64_t> planned_pace(const Distances &hops, const Incoming &in, int pieces,
                                  int steps) {
  const int n = hops.ranks;
  const int64_t least = *std::min_element(in.total.begin(), in.total.end());
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t total = ceil_div(int64_t(n - 1) * pieces, least);
  std::vector<int64_t> reach(static_cast<size_t>(steps), total);
  for (int r = 0; r < n; ++r) {
    if (in.total[size_t(r)] != least)
      continue;
    std::vector<int64_t> within(static_cast<size_t>(steps), 0); // owners t + 1 hops away or nearer
    for (int s = 0; s < n; ++s) {
      if (s == r)
        continue;
      for (int t = hops.at(s, r) - 1; t < steps; ++t)
        ++within[size_t(t)];
    }
    for (int t = 0; t < steps; ++t)
      reach[size_t(t)] = std::min(reach[size_t(t)], ceil_div(within[size_t(t)] * pieces, least));
  }
  // The least level whose fill, capped by the reach so far, carries the total.
  std::vector<int64_t> pace(static_cast<size_t>(steps));
  for (int64_t level = ceil_div(total, steps);; ++level) {
    int64_t held = 0;
    for (int t = 0; t < steps; ++t) {
      pace[size_t(t)] = std::clamp<int64_t>(reach[size_t(t)] - held, 0, level);
      held += pace[size_t(t)];
    }
    if (held < total)
      continue;
    // Take the excess off the latest of the fullest steps.
    for (int64_t excess = held - total; excess > 0;) {
      const int64_t top = *std::max_element(pace.begin(), pace.end());
      for (int t = steps - 1; t >= 0 && excess > 0; --t)
        if (pace[size_t(t)] == top) {
          --pace[size_t(t)];
          --excess;
        }
    }
    return pace;
  }
}

// One rank's candidates in one step: a chunk owner whose pieces it still lacks and some
// neighbour holds in full.
struct Candidate {
  int16_t deadline;
  int32_t owner;
  uint32_t links; ///< bit k: the rank's k-th incoming link comes from a holder
  int64_t pieces; ///< still lacking
};

// The least cap under which the candidates due by `step` all fit (Hall's condition on every set
// of incoming links: what may only come over them fits in their weight times the cap).
int64_t least_cap(std::span<const Candidate> candidates, const std::vector<int64_t> &weight,
                  int step) {
  const size_t sets = size_t(1) << weight.size();
  std::vector<int64_t> due(sets, 0);
  for (const Candidate &c : candidates)
    if (c.deadline <= step)
      due[c.links] += c.pieces;
  for (size_t k = 0; k < weight.size(); ++k)
    for (size_t set = 0; set < sets; ++set)
      if (set & (size_t(1) << k))
        due[set] += due[set ^ (size_t(1) << k)];
  int64_t cap = 0;
  for (size_t set = 1; set < sets; ++set) {
    int64_t room = 0;
    for (size_t k = 0; k < weight.size(); ++k)
      if (set & (size_t(1) << k))
        room += weight[k];
    cap = std::max(cap, (due[set] + room - 1) / room);
  }
  return cap;
}

// Places one rank's candidates, earliest deadline first, on its incoming links of `room`
// pieces each: every candidate takes as many pieces as augmenting paths (moving pieces placed
// before to other links they may use) allow, so the candidates before it keep theirs.
class Placement {
public:
  Placement(std::span<const Candidate> candidates, std::vector<int64_t> room)
      : candidates_(candidates), room_(std::move(room)), taken_(candidates.size(), 0) {
    for (size_t i = 0; i < candidates_.size(); ++i) {
      const uint32_t links = candidates_[i].links;
      auto at = std::find(sets_.begin(), sets_.end(), links);
      if (at == sets_.end()) {
        sets_.push_back(links);
        flow_.emplace_back(room_.size(), 0);
        at = sets_.end() - 1;
      }
      taken_[i] = place(size_t(at - sets_.begin()), candidates_[i].pieces);
    }
  }

  /// For each candidate, the pieces it takes over each incoming link: (candidate, link, count).
  template <typename Visit> void each(Visit visit) const {
    for (size_t set = 0; set < sets_.size(); ++set) {
      std::vector<int64_t> left = flow_[set];
      size_t k = 0;
      for (size_t i = 0; i < candidates_.size(); ++i) {
        if (candidates_[i].links != sets_[set])
          continue;
        for (int64_t need = taken_[i]; need > 0;) {
          while (left[k] == 0)
            ++k;
          const int64_t count = std::min(need, left[k]);
          visit(i, k, count);
          left[k] -= count;
          need -= count;
        }
      }
    }
  }

private:
  int64_t place(size_t set, int64_t pieces) {
    const size_t links = room_.size();
    int64_t placed = 0;
    std::vector<std::pair<int32_t, int32_t>> parent(links); // (link, set) a piece moves from
    std::vector<char> seen(links);
    std::vector<size_t> queue;
    while (placed < pieces) {
      std::fill(seen.begin(), seen.end(), 0);
      queue.clear();
      for (size_t k = 0; k < links; ++k)
        if (sets_[set] & (uint32_t(1) << k)) {
          seen[k] = 1;
          parent[k] = {-1, -1};
          queue.push_back(k);
        }
      size_t free_link = links;
      for (size_t i = 0; i < queue.size() && free_link == links; ++i) {
        const size_t from = queue[i];
        if (room_[from] > 0) {
          free_link = from;
          break;
        }
        for (size_t other = 0; other < sets_.size(); ++other) {
          if (flow_[other][from] == 0)
            continue;
          for (size_t to = 0; to < links; ++to)
            if (!seen[to] && (sets_[other] & (uint32_t(1) << to))) {
              seen[to] = 1;
              parent[to] = {int32_t(from), int32_t(other)};
              queue.push_back(to);
            }
        }
      }
      if (free_link == links)
        return placed;
      int64_t amount = std::min(pieces - placed, room_[free_link]);
      for (size_t k = free_link; parent[k].first >= 0; k = size_t(parent[k].first))
        amount = std::min(amount, flow_[size_t(parent[k].second)][size_t(parent[k].first)]);
      size_t k = free_link;
      for (; parent[k].first >= 0; k = size_t(parent[k].first)) {
        flow_[size_t(parent[k].second)][size_t(parent[k].first)] -= amount;
        flow_[size_t(parent[k].second)][k] += amount;
      }
      flow_[set][k] += amount;
      room_[free_link] -= amount;
      placed += amount;
    }
    return placed;
  }

  std::span<const Candidate> candidates_;
  std::vector<int64_t> room_;
  std::vector<uint32_t> sets_;
  std::vector<std::vector<int64_t>> flow_; ///< per set of links, pieces on each link
  std::vector<int64_t> taken_;
};

// The machine and plan a paced schedule runs on, shared by both deadline rules.
struct Plan {
  const Topology &topology;
  const Distances &hops;
  const Incoming &in;
  const ExactUnits &units;
  int pieces;
  int steps;
  std::vector<int64_t> pace;
};

// A rank's candidates, most urgent first: earliest deadline; then fewest links to come over
// (they have the least choice later); then farthest owner (it has the fewest chances to come).
void order_candidates(std::span<Candidate> candidates, const Distances &hops, int rank) {
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate &a, const Candidate &b) {
    if (a.deadline != b.deadline)
      return a.deadline < b.deadline;
    if (std::popcount(a.links) != std::popcount(b.links))
      return std::popcount(a.links) < std::popcount(b.links);
    if (hops.at(a.owner, rank) != hops.at(b.owner, rank))
      return hops.at(a.owner, rank) > hops.at(b.owner, rank);
    return a.owner < b.owner;
  });
}

// The schedule under one deadline rule: its steps (empty ones dropped) and their cost.
struct Paced {
  std::vector<AlgorithmStep> steps;
  Fraction cost;
  Fraction pipelined_cost;
};

Paced run(const Plan &plan, DeadlineRule rule) {
  const Topology &topology = plan.topology;
  const int n = topology.num_ranks();
  const int pieces = plan.pieces;
  const std::vector<int16_t> due = deadlines(topology, plan.hops, plan.steps, rule);
  // Pieces of each owner each rank holds, always the owner's first ones; row-major by rank.
  std::vector<int32_t> held(size_t(n) * size_t(n), 0);
  for (int v = 0; v < n; ++v)
    held[size_t(v) * size_t(n) + size_t(v)] = pieces;
  Paced out;
  StepCoster coster(topology, plan.units, pieces);
  // Which incoming links of each rank come from a full holder of each owner's share (bit k:
  // the rank's k-th incoming link), and the owners each rank lacks with such a link; kept up
  // to date as shares complete, so a step looks only at what it can take.
  std::vector<uint32_t> from_holder(size_t(n) * size_t(n), 0);
  std::vector<std::vector<int32_t>> lacking(static_cast<size_t>(n));
  const auto offer = [&](size_t link, int32_t owner) {
    const Link &l = topology.links()[link];
    const size_t v = l.dst.index();
    const size_t at = v * size_t(n) + size_t(owner);
    if (held[at] == pieces)
      return;
    if (from_holder[at] == 0)
      lacking[v].push_back(owner);
    from_holder[at] |= uint32_t(1) << plan.in.slot[link];
  };
  for (size_t l = 0; l < topology.links().size(); ++l)
    offer(l, int32_t(topology.links()[l].src.value()));
  std::vector<Candidate> candidates;
  std::vector<size_t> first(size_t(n) + 1);
  std::vector<std::pair<size_t, int32_t>> arrivals; // (index into held, pieces held after)
  for (int t = 0; t < plan.steps; ++t) {
    candidates.clear();
    for (int v = 0; v < n; ++v) {
      first[size_t(v)] = candidates.size();
      std::vector<int32_t> &owners = lacking[size_t(v)];
      std::erase_if(owners,
                    [&](int32_t s) { return held[size_t(v) * size_t(n) + size_t(s)] == pieces; });
      for (int32_t s : owners) {
        const size_t at = size_t(v) * size_t(n) + size_t(s);
        candidates.push_back(
            {due[size_t(s) * size_t(n) + size_t(v)], s, from_holder[at], pieces - held[at]});
      }
      order_candidates(std::span(candidates).subspan(first[size_t(v)]), plan.hops, v);
    }
    first[size_t(n)] = candidates.size();
    const auto of_rank = [&](int v) {
      return std::span<const Candidate>(candidates.data() + first[size_t(v)],
                                        first[size_t(v) + 1] - first[size_t(v)]);
    };
    int64_t cap = plan.pace[size_t(t)];
    for (int v = 0; v < n; ++v)
      cap = std::max(cap, least_cap(of_rank(v), plan.in.weight[size_t(v)], t));

    AlgorithmStep step;
    arrivals.clear();
    for (int v = 0; v < n; ++v) {
      const std::span<const Candidate> mine = of_rank(v);
      if (mine.empty())
        continue;
      std::vector<int64_t> room;
      for (int64_t w : plan.in.weight[size_t(v)])
        room.push_back(cap * w);
      const Placement placement(mine, std::move(room));
      std::vector<int32_t> next(mine.size());
      for (size_t i = 0; i < mine.size(); ++i)
        next[i] = held[size_t(v) * size_t(n) + size_t(mine[i].owner)];
      placement.each([&](size_t i, size_t k, int64_t count) {
        const RankId src = topology.links()[size_t(plan.in.links[size_t(v)][k])].src;
        for (int64_t c = 0; c < count; ++c)
          step.sends.push_back({ChunkId(next[i]++ * n + mine[i].owner), src, RankId(v)});
      });
      for (size_t i = 0; i < mine.size(); ++i) {
        SYNCOLL_INVARIANT(mine[i].deadline > t || next[i] == pieces,
                          "a paced step missed a deadline under the cap chosen to meet it");
        arrivals.emplace_back(size_t(v) * size_t(n) + size_t(mine[i].owner), next[i]);
      }
    }
    for (const auto &[index, now] : arrivals)
      held[index] = now;
    for (const auto &[index, now] : arrivals) {
      if (now < pieces)
        continue;
      const size_t v = index / size_t(n);
      for (size_t link : plan.in.out_links[v])
        offer(link, int32_t(index % size_t(n)));
    }
    if (step.sends.empty())
      continue;
    const StepCost cost = coster.add_step(step.sends);
    std::sort(step.sends.begin(), step.sends.end());
    step.rounds = cost.rounds;
    out.steps.push_back(std::move(step));
  }
  SYNCOLL_INVARIANT(std::all_of(held.begin(), held.end(), [&](int32_t h) { return h == pieces; }),
                    "a paced schedule ended with a rank lacking a piece");
  out.cost = coster.step_synchronous();
  out.pipelined_cost = coster.pipelined();
  return out;
}

// Why a paced schedule cannot run on `topology`, if it cannot.
std::optional<std::string> refusal(const Topology &topology) {
  if (topology.num_switches() == 0 && topology.relations().empty())
    return std::nullopt;
  return fmt::format("topology '{}' has {}; a paced schedule sends between ranks over links of "
                     "their own bandwidth",
                     topology.name(),
                     topology.num_switches() > 0 ? "switches" : "bandwidth relations");
}

} // namespace

Expected<ScaleSchedule> paced_allgather(const Topology &topology, int pieces, int steps) {
  const int n = topology.num_ranks();
  if (auto refused = refusal(topology))
    return fail({}, std::move(*refused));
  SYNCOLL_CHECK(check_allgather_pieces(n, pieces));
  SYNCOLL_TRY(bound, cut_bound(topology, CutDirection::Leaving));
  SYNCOLL_TRY(units, exact_units(topology));
  const Distances hops = hop_distances(topology);
  const int diameter = *std::max_element(hops.hops.begin(), hops.hops.end());
  SYNCOLL_INVARIANT(diameter < kUnreachable,
                    "the cut bound passed a topology whose ranks do not all connect");
  if (steps < diameter || steps > diameter + 64)
    return fail({}, fmt::format("a paced schedule on '{}' takes from its diameter, {}, to {} "
                                "steps, not {}",
                                topology.name(), diameter, diameter + 64, steps));
  const Incoming in = incoming_of(topology, units);
  for (int v = 0; v < n; ++v)
    if (in.links[size_t(v)].size() > size_t(kMaxInDegree))
      return fail({}, fmt::format("rank {} of '{}' has {} incoming links; a paced schedule "
                                  "balances at most {}",
                                  v, topology.name(), in.links[size_t(v)].size(), kMaxInDegree));

  const Plan plan{topology, hops, in, units, pieces, steps, planned_pace(hops, in, pieces, steps)};
  // Shallow trees reach the bound on every mesh measured; every shortest path is tried when
  // they do not (it wins on some small 3D meshes), and the cheaper kept, fewer steps on a tie.
  Paced best = run(plan, DeadlineRule::ShallowTree);
  if (quotient(bound.lambda, best.cost) != Fraction{1, 1}) {
    Paced other = run(plan, DeadlineRule::EveryShortestPath);
    if (less(other.cost, best.cost) ||
        (other.cost == best.cost && other.steps.size() < best.steps.size()))
      best = std::move(other);
  }

  ScaleSchedule out;
  out.chunks = pieces;
  out.algorithm.name = fmt::format("paced-allgather-{}-c{}-s{}", topology.name(), pieces, steps);
  out.algorithm.target = {"allgather", n, pieces, std::nullopt, topology.name()};
  out.algorithm.steps = std::move(best.steps);
  out.cost = best.cost;
  out.pipelined_cost = best.pipelined_cost;
  out.lambda = bound.lambda;
  out.efficiency = quotient(out.lambda, out.cost);
  out.pipelined_efficiency = quotient(out.lambda, out.pipelined_cost);
  out.bounds.push_back(std::move(bound));
  return out;
}

Expected<int> paced_pieces(const Topology &topology) {
  if (auto refused = refusal(topology))
    return fail({}, std::move(*refused));
  SYNCOLL_TRY(units, exact_units(topology));
  const Incoming in = incoming_of(topology, units);
  const int64_t least = *std::min_element(in.total.begin(), in.total.end());
  if (least < 1 || least > 64)
    return fail({}, fmt::format("the ranks of '{}' with the least incoming bandwidth take in {} "
                                "times the links' common unit; a paced schedule cuts a share "
                                "into at most 64 pieces",
                                topology.name(), least));
  return int(least);
}

Expected<ScaleSchedule> paced(const Topology &topology, CollectiveKind kind, int pieces,
                              int steps) {
  return from_allgather(topology, kind, pieces, "paced", [pieces, steps](const Topology &t) {
    return paced_allgather(t, pieces, steps);
  });
}

} // namespace syncoll::synth
