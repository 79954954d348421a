#include "synth/scale.h"

#include "model/cut_certificate.h"
#include "model/invariant.h"
#include "synth/bounds.h"
#include "synth/combining.h"
#include "synth/step_cost.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll::synth {

namespace {

// One step's chunks into one rank v, spread over v's incoming links. The chunks come in types:
// the pieces of owners whose allowed links (from neighbours one hop nearer the owner) are the
// same set. A greedy start puts each chunk on the allowed link it keeps least busy for its
// bandwidth; then chunks move along augmenting paths (link a -> a link b some chunk on a may
// use -> ...) from the busiest link to one that stays below it, until the busiest link has no
// such path. With equal bandwidths that is the least possible busiest load: the links a busiest
// link reaches hold chunks that can go nowhere else, more than one less than its load each.
class IncomingBalance {
public:
  struct Type {
    std::vector<int32_t> allowed; ///< indices into the rank's incoming links
    int64_t chunks = 0;
    std::vector<int64_t> on; ///< per incoming link: chunks of this type it carries
  };

  IncomingBalance(std::vector<int64_t> units, std::vector<Type> types)
      : units_(std::move(units)), load_(units_.size(), 0), types_(std::move(types)) {}

  void run() {
    std::stable_sort(types_.begin(), types_.end(), [](const Type &a, const Type &b) {
      return a.allowed.size() < b.allowed.size();
    });
    for (Type &type : types_) {
      type.on.assign(units_.size(), 0);
      for (int64_t c = 0; c < type.chunks; ++c) {
        int32_t best = type.allowed.front();
        for (int32_t k : type.allowed)
          if (busier(best, 1, k, 1))
            best = k;
        ++type.on[size_t(best)];
        ++load_[size_t(best)];
      }
    }
    while (augment()) {
    }
  }

  const std::vector<Type> &types() const { return types_; }
  const std::vector<int64_t> &load() const { return load_; }

private:
  // Whether link a with `extra_a` more chunks is busier than b with `extra_b` more.
  bool busier(int32_t a, int64_t extra_a, int32_t b, int64_t extra_b) const {
    return __int128(load_[size_t(a)] + extra_a) * units_[size_t(b)] >
           __int128(load_[size_t(b)] + extra_b) * units_[size_t(a)];
  }

  // Moves one chunk's worth of load off the busiest link, if a path allows; whether it did.
  bool augment() {
    const auto links = int32_t(units_.size());
    int32_t top = 0;
    for (int32_t k = 1; k < links; ++k)
      if (busier(k, 0, top, 0))
        top = k;
    if (load_[size_t(top)] == 0)
      return false;
    // Breadth-first over links; parent[k] = (link, type) the chunk to k comes from.
    std::vector<std::pair<int32_t, int32_t>> parent(size_t(links), {-1, -1});
    std::vector<int32_t> queue{top};
    parent[size_t(top)] = {top, -1};
    for (size_t i = 0; i < queue.size(); ++i) {
      const int32_t from = queue[i];
      for (size_t t = 0; t < types_.size(); ++t) {
        const Type &type = types_[t];
        if (type.on[size_t(from)] == 0)
          continue;
        for (int32_t to : type.allowed) {
          if (parent[size_t(to)].first >= 0)
            continue;
          parent[size_t(to)] = {from, int32_t(t)};
          if (busier(top, 0, to, 1)) {
            for (int32_t k = to; k != top; k = parent[size_t(k)].first) {
              Type &via = types_[size_t(parent[size_t(k)].second)];
              --via.on[size_t(parent[size_t(k)].first)];
              ++via.on[size_t(k)];
            }
            --load_[size_t(top)];
            ++load_[size_t(to)];
            return true;
          }
          queue.push_back(to);
        }
      }
    }
    return false;
  }

  std::vector<int64_t> units_;
  std::vector<int64_t> load_;
  std::vector<Type> types_;
};

} // namespace

double planned_ns(const Topology &topology, int steps, Fraction ns_per_byte, double share_bytes) {
  double alpha_ns = 0;
  for (const Link &l : topology.links())
    alpha_ns = std::max(alpha_ns, l.alpha.count);
  return steps * alpha_ns + share_bytes * ns_per_byte.value();
}

Expected<void> check_allgather_pieces(int ranks, int pieces) {
  if (pieces < 1)
    return fail({}, fmt::format("a share is cut into at least 1 piece, not {}", pieces));
  return fits_collective_model(CollectiveKind::Allgather, ranks, pieces);
}

Expected<ScaleSchedule> breadth_first_allgather(const Topology &topology, int chunks) {
  const int n = topology.num_ranks();
  if (topology.num_switches() > 0)
    return fail({}, fmt::format("topology '{}' has switches; a breadth-first schedule sends "
                                "between ranks over direct links (a cluster of boxes with a NIC "
                                "per GPU is planned on its links: multinode --nics GPUS)",
                                topology.name()));
  SYNCOLL_CHECK(check_allgather_pieces(n, chunks));
  SYNCOLL_TRY(bound, cut_bound(topology, CutDirection::Leaving));
  SYNCOLL_TRY(bandwidths, exact_bandwidths(topology));
  const Distances hops = hop_distances(topology);
  int diameter = 0;
  for (int h : hops.hops) {
    SYNCOLL_INVARIANT(h < kUnreachable,
                      "the cut bound passed a topology whose ranks do not all connect");
    diameter = std::max(diameter, h);
  }
  std::vector<std::vector<int32_t>> in_links(static_cast<size_t>(n));
  for (size_t l = 0; l < topology.links().size(); ++l)
    in_links[topology.links()[l].dst.index()].push_back(int32_t(l));

  ScaleSchedule out;
  out.chunks = chunks;
  out.algorithm.name = fmt::format("bfb-allgather-{}-c{}", topology.name(), chunks);
  out.algorithm.target = {"allgather", n, chunks, std::nullopt, topology.name()};
  std::vector<int64_t> in_units;
  SYNCOLL_TRY(units, exact_units(topology));
  StepCoster coster(topology, std::move(units), chunks);
  for (int t = 1; t <= diameter; ++t) {
    AlgorithmStep step;
    for (int v = 0; v < n; ++v) {
      const std::vector<int32_t> &in = in_links[size_t(v)];
      // Owners t hops away, by the set of incoming links they may use.
      std::map<std::vector<int32_t>, std::vector<int32_t>> owners_by_allowed;
      for (int r = 0; r < n; ++r) {
        if (hops.at(r, v) != t)
          continue;
        std::vector<int32_t> allowed;
        for (size_t k = 0; k < in.size(); ++k)
          if (hops.at(r, topology.links()[size_t(in[k])].src.value()) == t - 1)
            allowed.push_back(int32_t(k));
        SYNCOLL_INVARIANT(!allowed.empty(), "a rank t hops away has no neighbour t-1 away");
        owners_by_allowed[allowed].push_back(r);
      }
      if (owners_by_allowed.empty())
        continue;
      std::vector<IncomingBalance::Type> types;
      for (const auto &[allowed, who] : owners_by_allowed)
        types.push_back({allowed, int64_t(who.size()) * chunks, {}});
      in_units.clear();
      for (int32_t l : in)
        in_units.push_back(bandwidths.links[size_t(l)]);
      IncomingBalance balance(in_units, types);
      balance.run();
      for (const IncomingBalance::Type &type : balance.types()) {
        const std::vector<int32_t> &who = owners_by_allowed.at(type.allowed);
        // The type's chunks, owner by owner and piece by piece, fill its links in order.
        size_t k = 0;
        int64_t left = type.on.empty() ? 0 : type.on[0];
        for (int c = 0; c < chunks; ++c)
          for (int32_t r : who) {
            while (left == 0) {
              ++k;
              left = type.on[k];
            }
            --left;
            const int32_t l = in[k];
            step.sends.push_back({ChunkId(c * n + r), topology.links()[size_t(l)].src, RankId(v)});
          }
      }
    }
    const StepCost cost = coster.add_step(step.sends);
    std::sort(step.sends.begin(), step.sends.end());
    step.rounds = cost.rounds;
    out.algorithm.steps.push_back(std::move(step));
  }
  out.cost = coster.step_synchronous();
  out.pipelined_cost = coster.pipelined();
  out.lambda = bound.lambda;
  out.efficiency = quotient(out.lambda, out.cost);
  out.pipelined_efficiency = quotient(out.lambda, out.pipelined_cost);
  out.bounds.push_back(std::move(bound));
  return out;
}

Expected<ScaleSchedule> from_allgather(const Topology &topology, CollectiveKind kind, int chunks,
                                       std::string_view method, const AllgatherOf &allgather) {
  const int n = topology.num_ranks();
  switch (kind) {
  case CollectiveKind::Allgather:
    return allgather(topology);
  case CollectiveKind::ReduceScatter: {
    SYNCOLL_TRY(dual, allgather(reverse_topology(topology)));
    SYNCOLL_TRY(bound, cut_bound(topology, CutDirection::Entering));
    SYNCOLL_INVARIANT(bound.lambda == dual.lambda,
                      "the ReduceScatter bound differs from the reversed Allgather's");
    ScaleSchedule out = std::move(dual);
    out.kind = kind;
    out.algorithm = collective_from_allgathers(kind, out.algorithm, nullptr, n, chunks,
                                               topology.name(), method, fmt::format("c{}", chunks));
    out.bounds = {std::move(bound)};
    return out;
  }
  case CollectiveKind::Allreduce: {
    SYNCOLL_CHECK(fits_collective_model(kind, n, n * chunks));
    SYNCOLL_TRY(dual, allgather(reverse_topology(topology)));
    SYNCOLL_TRY(bound, cut_bound(topology, CutDirection::Entering));
    SYNCOLL_INVARIANT(bound.lambda == dual.lambda,
                      "the ReduceScatter bound differs from the reversed Allgather's");
    SYNCOLL_TRY(forward, allgather(topology));
    ScaleSchedule out;
    out.kind = kind;
    out.chunks = chunks;
    out.algorithm = collective_from_allgathers(kind, dual.algorithm, &forward.algorithm, n, chunks,
                                               topology.name(), method, fmt::format("c{}", chunks));
    out.bounds = {std::move(bound), std::move(forward.bounds.front())};
    out.lambda = sum(dual.lambda, forward.lambda);
    out.cost = sum(dual.cost, forward.cost);
    out.efficiency = quotient(out.lambda, out.cost);
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
  return fail({}, fmt::format("{} schedules are for allgather, reducescatter and allreduce, not {}",
                              method, collective_kind_name(kind)));
}

Expected<ScaleSchedule> breadth_first(const Topology &topology, CollectiveKind kind, int chunks) {
  return from_allgather(topology, kind, chunks, "bfb",
                        [chunks](const Topology &t) { return breadth_first_allgather(t, chunks); });
}

} // namespace syncoll::synth
