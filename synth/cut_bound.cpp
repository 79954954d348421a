#include "synth/cut_bound.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace syncoll::synth {

namespace {

constexpr int64_t kLargest = int64_t(1) << 62;

// The flow network of model/cut_certificate.h with a super-source: vertices are the topology's,
// then one per relation, then the source. Edge i and i ^ 1 are a pair (forward, residual).
class FlowNetwork {
public:
  FlowNetwork(const Topology &t, const ExactBandwidths &b, CutDirection d)
      : ranks_(t.num_ranks()), source_(t.num_vertices() + int32_t(t.relations().size())) {
    for (size_t l = 0; l < t.links().size(); ++l) {
      const FlowEdge e = link_edge(t, b, l, d);
      link_edge_.push_back(add(e.tail, e.head, b.links[l]));
    }
    for (size_t r = 0; r < t.relations().size(); ++r)
      if (const auto e = relation_edge(t, b, r, d))
        add(e->tail, e->head, b.relations[r]);
    for (int32_t v = 0; v < ranks_; ++v)
      source_edge_.push_back(add(source_, v, 0));
    // Adjacency in one array, by tail.
    const size_t vertices = size_t(source_) + 1;
    first_.assign(vertices + 1, 0);
    for (size_t e = 0; e < edges_.size(); ++e)
      ++first_[size_t(tail_[e]) + 1];
    for (size_t v = 0; v < vertices; ++v)
      first_[v + 1] += first_[v];
    adjacency_.resize(edges_.size());
    std::vector<int32_t> fill(first_.begin(), first_.end() - 1);
    for (size_t e = 0; e < edges_.size(); ++e)
      adjacency_[size_t(fill[size_t(tail_[e])]++)] = int32_t(e);
    level_.resize(vertices);
    arc_.resize(vertices);
  }

  int32_t vertices() const { return source_ + 1; }
  int32_t source() const { return source_; }

  /// Bandwidth (units) leaving each rank on the network's edges.
  std::vector<int64_t> out_units() const {
    std::vector<int64_t> out(size_t(ranks_), 0);
    for (size_t e = 0; e < edges_.size(); e += 2)
      if (tail_[e] < ranks_ && units_[e] > 0)
        out[size_t(tail_[e])] += units_[e];
    return out;
  }

  /// Capacities for lambda = num / den: a rank's unit is den x units_per_gbps, an edge carries
  /// num x its bandwidth in units. Flows start at zero.
  void set_lambda(Fraction lambda, int64_t units_per_gbps) {
    for (size_t e = 0; e < edges_.size(); e += 2) {
      edges_[e] = {units_[e] * lambda.num, 0};
      edges_[e + 1] = {0, 0};
    }
    for (int32_t e : source_edge_)
      edges_[size_t(e)].capacity = lambda.den * units_per_gbps;
  }

  /// Max-flow from the source to `sink` (Dinic), stopping once `enough` is through.
  int64_t max_flow(int32_t sink, int64_t enough) {
    int64_t total = 0;
    while (total < enough && levels(sink))
      for (int64_t pushed; total < enough && (pushed = push(source_, sink, enough - total)) > 0;)
        total += pushed;
    return total;
  }

  /// The vertices the source still reaches in the residual network: a minimum cut's source side.
  std::vector<char> source_side() {
    levels(-1);
    std::vector<char> side(level_.size());
    for (size_t v = 0; v < level_.size(); ++v)
      side[v] = level_[v] >= 0;
    return side;
  }

  /// Bandwidth (units) of the edges from `side` to the rest, source edges aside.
  int64_t crossing_units(const std::vector<char> &side) const {
    int64_t sum = 0;
    for (size_t e = 0; e < edges_.size(); e += 2)
      if (tail_[e] != source_ && side[size_t(tail_[e])] && !side[size_t(head_[e])])
        sum += units_[e];
    return sum;
  }

  int64_t link_flow(size_t l) const { return edges_[size_t(link_edge_[l])].flow; }
  int64_t source_flow(int32_t rank) const {
    return edges_[size_t(source_edge_[size_t(rank)])].flow;
  }

private:
  struct Edge {
    int64_t capacity = 0;
    int64_t flow = 0;
  };

  int32_t add(int32_t tail, int32_t head, int64_t units) {
    const auto e = int32_t(edges_.size());
    for (auto [from, to, u] : {std::tuple{tail, head, units}, std::tuple{head, tail, int64_t(0)}}) {
      edges_.push_back({});
      tail_.push_back(from);
      head_.push_back(to);
      units_.push_back(u);
    }
    return e;
  }

  // Breadth-first levels from the source over residual edges; whether `sink` was reached.
  bool levels(int32_t sink) {
    std::fill(level_.begin(), level_.end(), -1);
    queue_.clear();
    queue_.push_back(source_);
    level_[size_t(source_)] = 0;
    for (size_t i = 0; i < queue_.size(); ++i) {
      const int32_t v = queue_[i];
      for (int32_t k = first_[size_t(v)]; k < first_[size_t(v) + 1]; ++k) {
        const int32_t e = adjacency_[size_t(k)];
        const int32_t w = head_[size_t(e)];
        if (level_[size_t(w)] < 0 && edges_[size_t(e)].flow < edges_[size_t(e)].capacity) {
          level_[size_t(w)] = level_[size_t(v)] + 1;
          queue_.push_back(w);
        }
      }
    }
    for (size_t v = 0; v < arc_.size(); ++v)
      arc_[v] = first_[v];
    return sink >= 0 && level_[size_t(sink)] >= 0;
  }

  // One augmenting path along the levels (depth first, resuming each vertex's arcs).
  int64_t push(int32_t v, int32_t sink, int64_t limit) {
    if (v == sink)
      return limit;
    for (int32_t &k = arc_[size_t(v)]; k < first_[size_t(v) + 1]; ++k) {
      const int32_t e = adjacency_[size_t(k)];
      const int32_t w = head_[size_t(e)];
      Edge &edge = edges_[size_t(e)];
      if (level_[size_t(w)] != level_[size_t(v)] + 1 || edge.flow >= edge.capacity)
        continue;
      const int64_t pushed = push(w, sink, std::min(limit, edge.capacity - edge.flow));
      if (pushed > 0) {
        edge.flow += pushed;
        edges_[size_t(e ^ 1)].flow -= pushed;
        return pushed;
      }
    }
    return 0;
  }

  int32_t ranks_;
  int32_t source_;
  std::vector<Edge> edges_;
  std::vector<int32_t> tail_, head_;
  std::vector<int64_t> units_; ///< bandwidth in units (0 for residual edges)
  std::vector<int32_t> link_edge_, source_edge_;
  std::vector<int32_t> first_, adjacency_;
  std::vector<int32_t> level_, arc_, queue_;
};

// Whether lambda's flow network stays within the exact arithmetic: every capacity and the flow
// each rank must take in below 2^62.
bool representable(Fraction lambda, int64_t units_per_gbps, int64_t largest_units, int ranks) {
  using Wide = __int128;
  return Wide(lambda.num) * largest_units < kLargest &&
         Wide(lambda.den) * units_per_gbps * ranks < kLargest;
}

} // namespace

Expected<CutBound> cut_bound(const Topology &topology, CutDirection direction) {
  SYNCOLL_TRY(bandwidths, exact_bandwidths(topology));
  const int n = topology.num_ranks();
  if (n < 2)
    return fail({}, "a cut bound needs at least two ranks");
  FlowNetwork network(topology, bandwidths, direction);
  int64_t largest = 0;
  for (int64_t u : bandwidths.links)
    largest = std::max(largest, u);
  for (int64_t u : bandwidths.relations)
    largest = std::max(largest, u);

  CutBound bound;
  bound.direction = direction;
  bound.ranks = n;
  bound.units_per_gbps = bandwidths.units_per_gbps;
  const char *verb = direction == CutDirection::Leaving ? "sends" : "receives";
  // The first candidate: the busiest single rank, whose share must cross its own links.
  const std::vector<int64_t> out = network.out_units();
  for (int v = 0; v < n; ++v) {
    if (out[size_t(v)] == 0)
      return fail({},
                  fmt::format("rank {} {} on no link: the {} cannot finish", v, verb,
                              direction == CutDirection::Leaving ? "Allgather" : "ReduceScatter"));
    const Fraction ratio = Fraction::of(bandwidths.units_per_gbps, out[size_t(v)]);
    if (v == 0 || less(bound.lambda, ratio)) {
      bound.lambda = ratio;
      bound.cut = {{RankId(v)}, {}};
    }
  }
  for (int t = 0; t < n; ++t) {
    for (;;) {
      if (!representable(bound.lambda, bandwidths.units_per_gbps, largest, n))
        return fail({}, fmt::format("topology '{}': the bound's fractions outgrow its exact "
                                    "arithmetic (ratio {})",
                                    topology.name(), to_string(bound.lambda)));
      network.set_lambda(bound.lambda, bandwidths.units_per_gbps);
      const int64_t unit = bound.lambda.den * bandwidths.units_per_gbps;
      const int64_t need = unit * n;
      ++bound.max_flows;
      if (network.max_flow(t, need) >= need) {
        SinkFlow flow{RankId(t), unit, {}, {}};
        for (size_t l = 0; l < topology.links().size(); ++l)
          flow.links.push_back(network.link_flow(l));
        for (int v = 0; v < n; ++v)
          flow.from_ranks.push_back(network.source_flow(v));
        const auto problem = check_sink_flow(topology, bandwidths, direction, bound.lambda, flow);
        SYNCOLL_INVARIANT(
            !problem,
            fmt::format("the cut bound's flow into rank {} does not check: {}", t, *problem)
                .c_str());
        ++bound.flows_checked;
        break;
      }
      // Rank t cannot take in every rank's unit: its minimum cut (S on the source's side) has
      // |S ∩ ranks| > lambda x B+(S), a larger ratio.
      const std::vector<char> side = network.source_side();
      Cut cut;
      int inside = 0;
      for (int32_t v = 0; v < topology.num_vertices(); ++v)
        if (side[size_t(v)]) {
          cut.vertices.push_back(RankId(v));
          inside += v < n;
        }
      for (size_t r = 0; r < topology.relations().size(); ++r)
        if (side[size_t(topology.num_vertices()) + r])
          cut.relations.push_back(int32_t(r));
      const int64_t crossing = network.crossing_units(side);
      if (crossing == 0)
        return fail({}, fmt::format("rank {} cannot {} the data of rank {}: no link {} the {} "
                                    "vertices that hold it",
                                    t, direction == CutDirection::Leaving ? "receive" : "send",
                                    cut.vertices.front().value(),
                                    direction == CutDirection::Leaving ? "leaves" : "enters",
                                    cut.vertices.size()));
      const Fraction ratio = Fraction::of(int64_t(inside) * bandwidths.units_per_gbps, crossing);
      SYNCOLL_INVARIANT(less(bound.lambda, ratio), "a minimum cut did not raise the cut ratio");
      bound.lambda = ratio;
      bound.cut = std::move(cut);
    }
  }
  bound.value = evaluate_cut(topology, bandwidths, bound.cut, direction);
  bound.bandwidth_gbps = Fraction::of(int64_t(n) * bound.lambda.den, bound.lambda.num);
  const auto problem = check_cut_bound(topology, bound);
  SYNCOLL_INVARIANT(!problem,
                    fmt::format("the cut bound's cut does not check: {}", *problem).c_str());
  return bound;
}

std::optional<std::string> check_cut_bound(const Topology &topology, const CutBound &bound) {
  auto bandwidths = exact_bandwidths(topology);
  if (!bandwidths)
    return bandwidths.error().to_string();
  const CutValue value = evaluate_cut(topology, *bandwidths, bound.cut, bound.direction);
  if (value.ranks_inside == 0 || value.ranks_inside == topology.num_ranks())
    return fmt::format("the cut holds {} of {} ranks", value.ranks_inside, topology.num_ranks());
  if (value.bandwidth == 0)
    return "no bandwidth crosses the cut";
  const Fraction ratio =
      Fraction::of(int64_t(value.ranks_inside) * bandwidths->units_per_gbps, value.bandwidth);
  if (ratio != bound.lambda)
    return fmt::format("the cut's ratio is {}, the bound says {}", to_string(ratio),
                       to_string(bound.lambda));
  if (bound.bandwidth_gbps !=
      Fraction::of(int64_t(topology.num_ranks()) * bound.lambda.den, bound.lambda.num))
    return "the bandwidth is not N / lambda";
  return std::nullopt;
}

} // namespace syncoll::synth
