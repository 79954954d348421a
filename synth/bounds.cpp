#include "synth/bounds.h"

#include "model/invariant.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <fmt/format.h>
#include <numeric>
#include <z3++.h>

namespace syncoll::synth {

Distances hop_distances(const Topology &topology) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  const int P = topology.num_ranks();
  // Switches are vertices too: a route through one counts its hops.
  const auto V = static_cast<size_t>(topology.num_vertices());
  Graph g(V);
  for (const Link &l : topology.links())
    boost::add_edge(l.src.index(), l.dst.index(), g);
  Distances d{P, std::vector<int>(size_t(P) * size_t(P), kUnreachable)};
  for (int s = 0; s < P; ++s) {
    std::vector<int> dist(V, kUnreachable);
    dist[size_t(s)] = 0;
    boost::breadth_first_search(g, boost::vertex(size_t(s), g),
                                boost::visitor(boost::make_bfs_visitor(
                                    boost::record_distances(dist.data(), boost::on_tree_edge()))));
    for (int t = 0; t < P; ++t)
      d.hops[size_t(s) * size_t(P) + size_t(t)] = dist[size_t(t)];
  }
  return d;
}

int steps_lower_bound(const Topology &topology, const CollectiveSpec &collective) {
  const Distances d = hop_distances(topology);
  int bound = 0;
  for (int c = 0; c < collective.num_chunks(); ++c) {
    const ChunkSpec &spec = collective.chunk(ChunkId(c));
    if (!spec.reduced) {
      for (const ChunkPlace &q : spec.post) {
        int nearest = kUnreachable;
        for (const ChunkPlace &p : spec.pre)
          nearest = std::min(nearest, d.at(p.rank.value(), q.rank.value()));
        bound = std::max(bound, nearest);
      }
      continue;
    }
    int best = kUnreachable;
    for (const ChunkPlace &r : spec.pre) {
      int in = 0, out = 0;
      for (const ChunkPlace &p : spec.pre)
        in = std::max(in, d.at(p.rank.value(), r.rank.value()));
      for (const ChunkPlace &q : spec.post)
        out = std::max(out, d.at(r.rank.value(), q.rank.value()));
      best = std::min(best, std::min(kUnreachable, in + out));
    }
    bound = std::max(bound, best);
  }
  return bound;
}

std::optional<std::string> counting_refutation(const Topology &topology,
                                               const CollectiveSpec &collective, int rounds) {
  for (int n = 0; n < topology.num_ranks(); ++n) {
    int64_t needed = 0, capacity = 0;
    for (int c = 0; c < collective.num_chunks(); ++c)
      needed += !collective.chunk(ChunkId(c)).reduced &&
                collective.is_post(ChunkId(c), RankId(n)) &&
                !collective.is_pre(ChunkId(c), RankId(n));
    int64_t per_round = 0;
    for (const Link &l : topology.links())
      if (l.dst == RankId(n))
        per_round += l.capacity;
    // A relation over some of those links caps them together (an NVSwitch port, a NIC): the
    // links outside it plus the smaller of its capacity and theirs.
    for (const BandwidthRelation &rel : topology.relations()) {
      int64_t inside = 0, outside = 0;
      std::vector<bool> in_rel(topology.links().size(), false);
      for (LinkId id : rel.links)
        in_rel[id.index()] = true;
      for (size_t i = 0; i < topology.links().size(); ++i)
        if (topology.links()[i].dst == RankId(n))
          (in_rel[i] ? inside : outside) += topology.links()[i].capacity;
      per_round = std::min(per_round, outside + std::min<int64_t>(inside, rel.capacity));
    }
    capacity = per_round * rounds;
    if (needed > capacity)
      return fmt::format("rank {} must receive {} chunks but its links carry at most {} in {} "
                         "rounds",
                         n, needed, capacity, rounds);
  }
  return std::nullopt;
}

std::optional<Fraction> rounds_per_chunk_bound(const Topology &topology,
                                               const CollectiveSpec &collective) {
  if (collective.is_combining())
    return std::nullopt;
  if (steps_lower_bound(topology, collective) >= kUnreachable)
    return std::nullopt;
  z3::context ctx;
  z3::optimize opt(ctx);
  const z3::expr R = ctx.real_const("R");
  const size_t L = topology.links().size();
  const int P = topology.num_ranks();
  std::vector<z3::expr_vector> load; // per link: x(c, l) over chunks
  for (size_t l = 0; l < L; ++l)
    load.emplace_back(ctx);
  for (int c = 0; c < collective.num_chunks(); ++c) {
    const ChunkSpec &spec = collective.chunk(ChunkId(c));
    std::vector<z3::expr> x; // fraction of chunk c that crosses link l (shared by destinations)
    for (size_t l = 0; l < L; ++l) {
      x.push_back(ctx.real_const(fmt::format("x{}_{}", c, l).c_str()));
      opt.add(x.back() >= 0 && x.back() <= 1);
      load[l].push_back(x.back());
    }
    for (const ChunkPlace &q : spec.post) {
      if (collective.is_pre(ChunkId(c), q.rank))
        continue;
      // One unit of flow from the pre ranks to q, inside the multicast capacities x.
      std::vector<z3::expr_vector> in, out;
      for (int n = 0; n < P; ++n) {
        in.emplace_back(ctx);
        out.emplace_back(ctx);
      }
      for (size_t l = 0; l < L; ++l) {
        z3::expr y = ctx.real_const(fmt::format("y{}_{}_{}", c, q.rank.value(), l).c_str());
        opt.add(y >= 0 && y <= x[l]);
        out[topology.links()[l].src.index()].push_back(y);
        in[topology.links()[l].dst.index()].push_back(y);
      }
      for (int n = 0; n < P; ++n) {
        if (collective.is_pre(ChunkId(c), RankId(n)))
          continue;
        z3::expr inflow = in[size_t(n)].empty() ? ctx.real_val(0) : z3::sum(in[size_t(n)]);
        z3::expr outflow = out[size_t(n)].empty() ? ctx.real_val(0) : z3::sum(out[size_t(n)]);
        opt.add(inflow - outflow == (n == q.rank.value() ? 1 : 0));
      }
    }
  }
  for (size_t l = 0; l < L; ++l)
    opt.add(z3::sum(load[l]) <= ctx.real_val(topology.links()[l].capacity) * R);
  for (const BandwidthRelation &rel : topology.relations()) {
    z3::expr_vector all(ctx);
    for (LinkId l : rel.links)
      for (const auto &e : load[l.index()])
        all.push_back(e);
    opt.add(z3::sum(all) <= ctx.real_val(rel.capacity) * R);
  }
  opt.minimize(R);
  SYNCOLL_INVARIANT(opt.check() == z3::sat, "the flow relaxation of a reachable collective");
  const z3::expr r = opt.get_model().eval(R, true);
  return Fraction::of(r.numerator().get_numeral_int64(),
                      r.denominator().get_numeral_int64() * collective.chunk_factor());
}

} // namespace syncoll::synth
