#include "synth/combining.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace syncoll::synth {

Topology reverse_topology(const Topology &topology) {
  TopologyDraft d = topology.to_draft();
  d.name += "-reversed";
  for (Link &l : d.links)
    std::swap(l.src, l.dst);
  for (auto &r : d.relations)
    for (auto &ends : r.links)
      std::swap(ends.first, ends.second);
  auto reversed = Topology::create(std::move(d));
  SYNCOLL_INVARIANT(reversed.has_value(), "reversing a valid topology");
  return *reversed;
}

std::optional<CollectiveSpec> non_combining_dual(const CollectiveSpec &collective) {
  CollectiveDraft d = collective.draft();
  for (ChunkSpec &c : d.chunks) {
    if (!c.reduced || c.post.size() != 1 || int(c.pre.size()) != collective.num_ranks())
      return std::nullopt;
    std::swap(c.pre, c.post);
    c.reduced = false;
  }
  std::swap(d.input_chunks, d.output_chunks);
  d.name = "dual of " + d.name;
  d.kind = CollectiveKind::Custom;
  d.root.reset();
  d.in_place = InPlaceKind::None;
  auto dual = CollectiveSpec::create(std::move(d));
  SYNCOLL_INVARIANT(dual.has_value(), "the dual of a valid collective");
  return *dual;
}

std::optional<CollectiveSpec> fan_in_transpose(const CollectiveSpec &collective) {
  if (collective.is_combining() || collective.num_chunks() == 0)
    return std::nullopt;
  CollectiveDraft d = collective.draft();
  const RankId source = d.chunks.front().pre.front().rank;
  for (ChunkSpec &c : d.chunks) {
    if (c.pre.size() != 1 || c.post.size() != 1 || c.pre.front().rank != source)
      return std::nullopt;
    std::swap(c.pre, c.post);
  }
  std::swap(d.input_chunks, d.output_chunks);
  d.name = "transpose of " + d.name;
  d.kind = CollectiveKind::Custom;
  d.root.reset();
  d.in_place = InPlaceKind::None;
  auto transposed = CollectiveSpec::create(std::move(d));
  SYNCOLL_INVARIANT(transposed.has_value(), "the transpose of a valid collective");
  return *transposed;
}

Algorithm invert_transpose(const Algorithm &transposed, const CollectiveSpec &transposed_spec) {
  // needed[c] holds the ranks from which chunk c must still travel on: its post ranks, and the
  // sources of the sends kept so far (walking the steps backwards).
  std::vector<std::set<int>> needed(static_cast<size_t>(transposed_spec.num_chunks()));
  for (int c = 0; c < transposed_spec.num_chunks(); ++c)
    for (const ChunkPlace &p : transposed_spec.chunk(ChunkId(c)).post)
      needed[size_t(c)].insert(p.rank.value());
  Algorithm a;
  for (auto step = transposed.steps.rbegin(); step != transposed.steps.rend(); ++step) {
    AlgorithmStep s{step->rounds, {}};
    for (const Send &send : step->sends)
      if (needed[send.chunk.index()].count(send.dst.value()))
        s.sends.push_back({send.chunk, send.dst, send.src, SendOp::Copy});
    for (const Send &kept : s.sends)
      needed[kept.chunk.index()].insert(kept.dst.value()); // the original source
    std::sort(s.sends.begin(), s.sends.end());
    a.steps.push_back(std::move(s));
  }
  return a;
}

Algorithm invert_dual(const Algorithm &dual) {
  Algorithm a;
  for (auto step = dual.steps.rbegin(); step != dual.steps.rend(); ++step) {
    AlgorithmStep s{step->rounds, {}};
    for (const Send &send : step->sends)
      s.sends.push_back({send.chunk, send.dst, send.src, SendOp::Reduce});
    std::sort(s.sends.begin(), s.sends.end());
    a.steps.push_back(std::move(s));
  }
  return a;
}

Algorithm compose_allreduce(const Algorithm &reduce_scatter, const Algorithm &allgather, int ranks,
                            int chunks_per_rank) {
  auto slot = [&](ChunkId c) {
    const int i = c.value() / ranks, n = c.value() % ranks;
    return ChunkId(n * chunks_per_rank + i);
  };
  Algorithm a;
  for (const Algorithm *phase : {&reduce_scatter, &allgather})
    for (const AlgorithmStep &step : phase->steps) {
      AlgorithmStep s{step.rounds, {}};
      for (const Send &send : step.sends)
        s.sends.push_back({slot(send.chunk), send.src, send.dst, send.op});
      std::sort(s.sends.begin(), s.sends.end());
      a.steps.push_back(std::move(s));
    }
  return a;
}

Algorithm collective_from_allgathers(CollectiveKind kind, const Algorithm &reversed_allgather,
                                     const Algorithm *allgather, int ranks, int pieces,
                                     std::string_view topology, std::string_view method,
                                     std::string_view tag) {
  SYNCOLL_INVARIANT((kind == CollectiveKind::ReduceScatter && !allgather) ||
                        (kind == CollectiveKind::Allreduce && allgather),
                    "a ReduceScatter comes from one Allgather, an Allreduce from two");
  Algorithm out = invert_dual(reversed_allgather);
  if (allgather)
    out = compose_allreduce(out, *allgather, ranks, pieces);
  out.name = fmt::format("{}-{}-{}-{}", method, collective_kind_name(kind), topology, tag);
  out.target = {std::string(collective_kind_name(kind)), ranks, allgather ? ranks * pieces : pieces,
                std::nullopt, std::string(topology)};
  return out;
}

} // namespace syncoll::synth
