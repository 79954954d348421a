#include "model/cut_certificate.h"

#include "model/invariant.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

namespace syncoll {

namespace {

// The smallest power of ten, up to 10^9, that makes every bandwidth whole (50 GiB/s is
// 53.6870912 GB/s).
std::optional<int64_t> decimal_scale(const Topology &topology) {
  for (int64_t scale = 1; scale <= 1'000'000'000; scale *= 10) {
    bool whole = true;
    for (const Link &l : topology.links()) {
      const double v = l.bandwidth.value * double(scale);
      whole = whole && std::abs(v - std::round(v)) <= 1e-12 * std::max(1.0, v);
    }
    if (whole)
      return scale;
  }
  return std::nullopt;
}

} // namespace

Expected<ExactUnits> exact_units(const Topology &topology) {
  const auto decimal = decimal_scale(topology);
  if (!decimal)
    return fail({}, fmt::format("topology '{}': a link bandwidth is not a decimal of at most nine "
                                "places of GB/s, which the exact cut bound needs",
                                topology.name()));
  // A relation's bandwidth is its capacity in chunks at its slowest link's rate per chunk: a
  // whole number once the units also divide by every link capacity in a relation.
  int64_t per_chunk = 1;
  for (const BandwidthRelation &r : topology.relations())
    for (LinkId id : r.links)
      per_chunk = std::lcm(per_chunk, int64_t(topology.link(id).capacity));
  ExactUnits out;
  out.units_per_gbps = *decimal * per_chunk;
  if (out.units_per_gbps > 1'000'000'000)
    return fail({}, fmt::format("topology '{}': its bandwidths need more precision than the exact "
                                "cut bound keeps",
                                topology.name()));
  for (const Link &l : topology.links())
    out.links.push_back(std::llround(l.bandwidth.value * double(out.units_per_gbps)));
  for (const BandwidthRelation &rel : topology.relations()) {
    int64_t per_chunk_units = std::numeric_limits<int64_t>::max();
    for (LinkId id : rel.links)
      per_chunk_units =
          std::min(per_chunk_units, out.links[id.index()] / topology.link(id).capacity);
    out.relations.push_back(per_chunk_units * rel.capacity);
  }
  return out;
}

Expected<ExactBandwidths> exact_bandwidths(const Topology &topology) {
  SYNCOLL_TRY(units, exact_units(topology));
  ExactBandwidths out;
  out.units_per_gbps = units.units_per_gbps;
  out.links = std::move(units.links);
  out.relations = std::move(units.relations);
  out.source_relation.assign(topology.links().size(), -1);
  out.destination_relation.assign(topology.links().size(), -1);
  for (size_t r = 0; r < topology.relations().size(); ++r) {
    const BandwidthRelation &rel = topology.relations()[r];
    const RankId src = topology.link(rel.links.front()).src;
    const RankId dst = topology.link(rel.links.front()).dst;
    const bool one_source = std::all_of(rel.links.begin(), rel.links.end(),
                                        [&](LinkId id) { return topology.link(id).src == src; });
    const bool one_destination = std::all_of(rel.links.begin(), rel.links.end(), [&](LinkId id) {
      return topology.link(id).dst == dst;
    });
    if (rel.links.size() == 1) {
      out.shapes.push_back(RelationShape::OneLink);
      int64_t &link = out.links[rel.links.front().index()];
      link = std::min(link, out.relations[r]);
      continue;
    }
    if (!one_source && !one_destination)
      return fail({}, fmt::format("topology '{}': relation '{}' caps links of several sources and "
                                  "destinations, which no flow network holds; the cut bound "
                                  "needs relations of one source or one destination",
                                  topology.name(), rel.name));
    out.shapes.push_back(one_source ? RelationShape::SharedSource
                                    : RelationShape::SharedDestination);
    std::vector<int32_t> &side = one_source ? out.source_relation : out.destination_relation;
    for (LinkId id : rel.links) {
      if (side[id.index()] >= 0)
        return fail({}, fmt::format("topology '{}': link {}->{} is under relations '{}' and '{}' "
                                    "of one {}, which no flow network holds",
                                    topology.name(), topology.vertex_name(topology.link(id).src),
                                    topology.vertex_name(topology.link(id).dst),
                                    topology.relations()[size_t(side[id.index()])].name, rel.name,
                                    one_source ? "source" : "destination"));
      side[id.index()] = static_cast<int32_t>(r);
    }
  }
  return out;
}

FlowEdge link_edge(const Topology &t, const ExactBandwidths &b, size_t l, CutDirection d) {
  const Link &link = t.links()[l];
  const int32_t n = t.num_vertices();
  const int32_t tail = b.source_relation[l] >= 0 ? n + b.source_relation[l] : link.src.value();
  const int32_t head =
      b.destination_relation[l] >= 0 ? n + b.destination_relation[l] : link.dst.value();
  return d == CutDirection::Leaving ? FlowEdge{tail, head} : FlowEdge{head, tail};
}

std::optional<FlowEdge> relation_edge(const Topology &t, const ExactBandwidths &b, size_t r,
                                      CutDirection d) {
  const BandwidthRelation &rel = t.relations()[r];
  const int32_t node = t.num_vertices() + static_cast<int32_t>(r);
  FlowEdge e{};
  switch (b.shapes[r]) {
  case RelationShape::OneLink:
    return std::nullopt;
  case RelationShape::SharedSource:
    e = {t.link(rel.links.front()).src.value(), node};
    break;
  case RelationShape::SharedDestination:
    e = {node, t.link(rel.links.front()).dst.value()};
    break;
  }
  return d == CutDirection::Leaving ? e : FlowEdge{e.head, e.tail};
}

CutValue evaluate_cut(const Topology &topology, const ExactBandwidths &bandwidths, const Cut &cut,
                      CutDirection direction) {
  const size_t vertices = size_t(topology.num_vertices()) + topology.relations().size();
  std::vector<char> inside(vertices, 0);
  CutValue value;
  for (RankId v : cut.vertices) {
    SYNCOLL_INVARIANT(v.value() >= 0 && v.value() < topology.num_vertices(),
                      "a cut vertex outside the topology");
    inside[v.index()] = 1;
    value.ranks_inside += !topology.is_switch(v);
  }
  for (int32_t r : cut.relations) {
    SYNCOLL_INVARIANT(r >= 0 && size_t(r) < topology.relations().size(),
                      "a cut relation outside the topology");
    inside[size_t(topology.num_vertices() + r)] = 1;
  }
  for (size_t l = 0; l < topology.links().size(); ++l) {
    const FlowEdge e = link_edge(topology, bandwidths, l, direction);
    if (inside[size_t(e.tail)] && !inside[size_t(e.head)])
      value.bandwidth += bandwidths.links[l];
  }
  for (size_t r = 0; r < topology.relations().size(); ++r)
    if (const auto e = relation_edge(topology, bandwidths, r, direction))
      if (inside[size_t(e->tail)] && !inside[size_t(e->head)])
        value.bandwidth += bandwidths.relations[r];
  return value;
}

std::optional<std::string> check_sink_flow(const Topology &topology,
                                           const ExactBandwidths &bandwidths,
                                           CutDirection direction, Fraction lambda,
                                           const SinkFlow &flow) {
  using Wide = __int128;
  const int n = topology.num_ranks();
  if (flow.links.size() != topology.links().size() || flow.from_ranks.size() != size_t(n) ||
      flow.scale <= 0)
    return "the flow does not cover the topology";
  // A unit of data is `scale`; a bandwidth c (units) carries lambda x c / units_per_gbps of them.
  auto within = [&](int64_t carried, int64_t bandwidth) {
    return carried >= 0 && Wide(carried) * lambda.den * bandwidths.units_per_gbps <=
                               Wide(lambda.num) * bandwidth * flow.scale;
  };
  const size_t vertices = size_t(topology.num_vertices()) + topology.relations().size();
  std::vector<Wide> net(vertices, 0); // what flows in minus what flows out
  std::vector<Wide> through_relation(topology.relations().size(), 0);
  for (size_t l = 0; l < topology.links().size(); ++l) {
    if (!within(flow.links[l], bandwidths.links[l]))
      return fmt::format("link {}->{} carries {} of {} units, over its bandwidth",
                         topology.vertex_name(topology.links()[l].src),
                         topology.vertex_name(topology.links()[l].dst), flow.links[l], flow.scale);
    const FlowEdge e = link_edge(topology, bandwidths, l, direction);
    net[size_t(e.tail)] -= flow.links[l];
    net[size_t(e.head)] += flow.links[l];
    for (int32_t r : {bandwidths.source_relation[l], bandwidths.destination_relation[l]})
      if (r >= 0)
        through_relation[size_t(r)] += flow.links[l];
  }
  for (size_t r = 0; r < topology.relations().size(); ++r) {
    const auto e = relation_edge(topology, bandwidths, r, direction);
    if (!e)
      continue;
    if (through_relation[r] > Wide(std::numeric_limits<int64_t>::max()) ||
        !within(static_cast<int64_t>(through_relation[r]), bandwidths.relations[r]))
      return fmt::format("relation '{}' carries more than its bandwidth",
                         topology.relations()[r].name);
    net[size_t(e->tail)] -= through_relation[r];
    net[size_t(e->head)] += through_relation[r];
  }
  for (int v = 0; v < n; ++v) {
    if (flow.from_ranks[size_t(v)] < 0 || flow.from_ranks[size_t(v)] > flow.scale)
      return fmt::format("rank {} puts in {} of {} units", v, flow.from_ranks[size_t(v)],
                         flow.scale);
    net[size_t(v)] += flow.from_ranks[size_t(v)];
  }
  for (size_t v = 0; v < vertices; ++v) {
    const Wide expected = int(v) == flow.sink.value() ? Wide(n) * flow.scale : 0;
    if (net[v] != expected)
      return fmt::format("{} {} keeps {} units where it should keep {}",
                         v < size_t(topology.num_vertices()) ? "vertex" : "relation",
                         v < size_t(topology.num_vertices())
                             ? topology.vertex_name(RankId(static_cast<int32_t>(v)))
                             : topology.relations()[v - size_t(topology.num_vertices())].name,
                         static_cast<int64_t>(net[v]), static_cast<int64_t>(expected));
  }
  return std::nullopt;
}

} // namespace syncoll
