// Synthesis targets for the tests: rooted collectives rooted at rank 0, as in SCCL's tables.
#pragma once

#include "model/topology_library.h"
#include "synth/synthesize.h"

#include <map>
#include <optional>
#include <rapidcheck.h>
#include <set>
#include <string>

namespace syncoll::synth::testing {

struct Row {
  CollectiveKind kind;
  int chunks, steps, rounds;
};

inline Target target_of(CollectiveKind kind) {
  Target t;
  t.kind = kind;
  if (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Gather ||
      kind == CollectiveKind::Scatter || kind == CollectiveKind::Reduce)
    t.root = 0;
  return t;
}

/// Small connected topologies from the library (2-5 ranks, or the 4-rank hypercube).
inline Topology small_topology() {
  const int n = *rc::gen::inRange(2, 6);
  switch (*rc::gen::inRange(0, 6)) {
  case 0:
    return *line(n);
  case 1:
    return *ring(n);
  case 2:
    return *fully_connected(n);
  case 3:
    return *star(n);
  case 4:
    return *hub_and_spoke(n);
  default:
    return *hypercube(2);
  }
}

/// What the synthesizer finds (fewest steps) for a random collective on a small topology, for
/// property tests downstream of synthesis; nullopt where it finds none (discard the case).
struct SmallSynthesized {
  Topology topology;
  CollectiveKind kind;
  Algorithm algorithm;
  CollectiveSpec collective;
};
inline std::optional<SmallSynthesized> small_synthesized() {
  const Topology topology = small_topology();
  const CollectiveKind kind = *rc::gen::element(
      CollectiveKind::Allgather, CollectiveKind::Broadcast, CollectiveKind::Gather,
      CollectiveKind::Scatter, CollectiveKind::Alltoall, CollectiveKind::ReduceScatter,
      CollectiveKind::Reduce, CollectiveKind::Allreduce);
  const Target target = target_of(kind);
  const int ranks = topology.num_ranks();
  const int chunks =
      kind == CollectiveKind::Allreduce ? ranks * *rc::gen::inRange(1, 3) : *rc::gen::inRange(1, 3);
  auto found = least_steps(topology, target, chunks, std::nullopt, 2, 8, {});
  RC_ASSERT(found.has_value());
  if (!found->found)
    return std::nullopt;
  auto spec = target.collective(ranks, chunks);
  RC_ASSERT(spec.has_value());
  return SmallSynthesized{topology, kind, *found->found->algorithm, *spec};
}

/// A random topology every vertex of which reaches every other: a ring through all vertices and
/// random chords, each link of a random whole 1-8 GB/s; `switches` of its vertices are switches.
inline TopologyDraft random_connected_draft(int ranks, int switches) {
  TopologyDraft d;
  d.name = "random";
  d.num_ranks = ranks;
  for (int s = 0; s < switches; ++s)
    d.switches.push_back("sw" + std::to_string(s));
  const int vertices = ranks + switches;
  std::set<std::pair<int, int>> used;
  auto add = [&](int a, int b) {
    if (a == b || !used.insert({a, b}).second)
      return;
    d.links.push_back(
        {RankId(a), RankId(b), 1, Nanoseconds{1}, BytesPerNs{double(*rc::gen::inRange(1, 9))}});
  };
  for (int a = 0; a < vertices; ++a)
    add(a, (a + 1) % vertices);
  const int chords = *rc::gen::inRange(0, 2 * vertices);
  for (int c = 0; c < chords; ++c)
    add(*rc::gen::inRange(0, vertices), *rc::gen::inRange(0, vertices));
  return d;
}

/// An Allgather schedule's step-synchronous cost recomputed from its sends alone, apart from the
/// synthesizer's own costing: per step the busiest link's pieces over its bandwidth, summed.
/// Nothing for a send between ranks without a link.
inline std::optional<Fraction> cost_from_sends(const Algorithm &algorithm, const Topology &topology,
                                               int pieces) {
  Fraction cost;
  for (const AlgorithmStep &step : algorithm.steps) {
    std::map<std::pair<RankId, RankId>, int64_t> sends;
    for (const Send &send : step.sends)
      ++sends[{send.src, send.dst}];
    Fraction slowest;
    for (const auto &[ends, count] : sends) {
      const auto link = topology.find_link(ends.first, ends.second);
      if (!link)
        return std::nullopt;
      const Fraction t =
          Fraction::of(count, int64_t(pieces) * int64_t(topology.link(*link).bandwidth.value));
      slowest = less(slowest, t) ? t : slowest;
    }
    cost = sum(cost, slowest);
  }
  return cost;
}

} // namespace syncoll::synth::testing
