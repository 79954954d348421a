// Generators of whole cases: library topologies, collectives, algorithms that check and programs
// that verify.
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_json.h"
#include "model/topology_library.h"
#include "testing/generators.h"
#include "testing/programs.h"

#include <algorithm>
#include <deque>
#include <map>

namespace syncoll::testing {
namespace {

TopologyParams library_params(const std::string &name) {
  TopologyParams p;
  if (name == "line" || name == "fully_connected" || name == "star" || name == "hub_and_spoke") {
    p.n = *rc::gen::inRange(2, 9);
  } else if (name == "ring") {
    p.n = *rc::gen::inRange(2, 9);
    p.unidirectional = *p.n > 2 && *rc::gen::arbitrary<bool>();
  } else if (name == "hypercube") {
    p.dims = *rc::gen::inRange(1, 4);
  } else if (name == "mesh2d" || name == "torus2d") {
    p.shape = std::vector<int>{*rc::gen::inRange(2, 5), *rc::gen::inRange(2, 5)};
  } else if (name == "torus3d" || name == "mesh3d") {
    p.shape =
        std::vector<int>{*rc::gen::inRange(2, 4), *rc::gen::inRange(2, 4), *rc::gen::inRange(2, 4)};
  } else if (name == "multinode" || name == "fat_tree") {
    p.nodes = *rc::gen::inRange(2, 5);
    p.gpus = *rc::gen::element(2, 4);
    p.nics = *rc::gen::inRange(1, 3);
  }
  return p;
}

// Free (rank, slot) places of one buffer, drawn without replacement so no two chunks share one.
struct PlacePool {
  std::vector<ChunkPlace> free;
  PlacePool(int ranks, int slots) {
    for (int r = 0; r < ranks; ++r)
      for (int s = 0; s < slots; ++s)
        free.push_back({RankId(r), s});
  }
  // Up to `count` places on distinct ranks (a chunk names a rank once per side).
  std::vector<ChunkPlace> take(int count) {
    std::vector<ChunkPlace> taken;
    for (int k = 0; k < count; ++k) {
      std::vector<size_t> open;
      for (size_t i = 0; i < free.size(); ++i)
        if (std::ranges::none_of(taken,
                                 [&](const ChunkPlace &p) { return p.rank == free[i].rank; }))
          open.push_back(i);
      if (open.empty())
        break;
      const size_t i = open[size_t(*rc::gen::inRange(0, int(open.size())))];
      taken.push_back(free[i]);
      free.erase(free.begin() + std::ptrdiff_t(i));
    }
    return taken;
  }
};

rc::Gen<CollectiveSpec> gen_custom_collective(int ranks, bool allow_reduced) {
  return rc::gen::exec([ranks, allow_reduced] {
    CollectiveDraft d;
    d.name = "custom";
    d.num_ranks = ranks;
    d.input_chunks = *rc::gen::inRange(1, 4);
    d.output_chunks = *rc::gen::inRange(1, 4);
    PlacePool inputs(ranks, d.input_chunks), outputs(ranks, d.output_chunks);
    const int chunks =
        *rc::gen::inRange(1, std::min({int(inputs.free.size()), int(outputs.free.size()), 6}) + 1);
    for (int c = 0; c < chunks; ++c) {
      ChunkSpec chunk;
      chunk.reduced = allow_reduced && *rc::gen::arbitrary<bool>();
      const int pre =
          *rc::gen::inRange(1, std::min(3, int(inputs.free.size()) - (chunks - c - 1)) + 1);
      chunk.pre = inputs.take(pre);
      const int post =
          *rc::gen::inRange(1, std::min(ranks, int(outputs.free.size()) - (chunks - c - 1)) + 1);
      chunk.post = outputs.take(post);
      d.chunks.push_back(std::move(chunk));
    }
    auto spec = CollectiveSpec::create(std::move(d));
    if (!spec)
      RC_FAIL("generated an invalid custom collective: " + spec.error().to_string());
    return *std::move(spec);
  });
}

bool rooted(CollectiveKind kind) {
  return kind == CollectiveKind::Broadcast || kind == CollectiveKind::Gather ||
         kind == CollectiveKind::Scatter || kind == CollectiveKind::Reduce;
}

rc::Gen<CollectiveSpec> gen_standard_collective(int ranks, bool allow_reduced) {
  return rc::gen::exec([ranks, allow_reduced] {
    std::vector<CollectiveKind> kinds = {CollectiveKind::Allgather, CollectiveKind::Alltoall,
                                         CollectiveKind::Broadcast, CollectiveKind::Gather,
                                         CollectiveKind::Scatter,   CollectiveKind::AllToNext};
    if (allow_reduced)
      kinds.insert(kinds.end(), {CollectiveKind::Reduce, CollectiveKind::ReduceScatter,
                                 CollectiveKind::Allreduce});
    const CollectiveKind kind = *rc::gen::elementOf(kinds);
    const int factor = *rc::gen::inRange(1, 4);
    std::optional<int> root;
    if (rooted(kind))
      root = *rc::gen::inRange(0, ranks);
    auto spec = make_collective(kind, ranks, factor, root);
    RC_ASSERT(spec.has_value());
    return *std::move(spec);
  });
}

// A strongly connected topology of rank-to-rank links: a bidirectional ring and random extras.
Topology gen_connected_topology(int ranks) {
  TopologyDraft d;
  d.name = "random-connected";
  d.num_ranks = ranks;
  std::map<std::pair<int, int>, int> capacity;
  for (int r = 0; r < ranks; ++r) {
    capacity[{r, (r + 1) % ranks}] = 1;
    capacity[{(r + 1) % ranks, r}] = 1;
  }
  const int extra = *rc::gen::inRange(0, ranks * 2);
  for (int k = 0; k < extra; ++k) {
    const int a = *rc::gen::inRange(0, ranks), b = *rc::gen::inRange(0, ranks);
    if (a != b)
      capacity[{a, b}] = *rc::gen::inRange(1, 4);
  }
  for (const auto &[ends, cap] : capacity)
    d.links.push_back({RankId(ends.first), RankId(ends.second), cap, Nanoseconds{700},
                       BytesPerNs{double(*rc::gen::inRange(5, 50))}});
  const int relations = *rc::gen::inRange(0, 3);
  for (int k = 0; k < relations; ++k) {
    const int r = *rc::gen::inRange(0, ranks);
    // A rank's outgoing links capped together, as a NIC caps a node's sends.
    TopologyDraft::Relation rel{"out" + std::to_string(k), {}, *rc::gen::inRange(1, 3)};
    for (const auto &[ends, cap] : capacity)
      if (ends.first == r)
        rel.links.emplace_back(RankId(ends.first), RankId(ends.second));
    d.relations.push_back(std::move(rel));
  }
  auto t = Topology::create(std::move(d));
  RC_ASSERT(t.has_value());
  return *std::move(t);
}

// The rounds step `sends` needs: the most any link or relation carries, over its capacity.
int rounds_for(const Topology &t, const std::vector<Send> &sends) {
  std::map<LinkId, int> load;
  for (const Send &s : sends)
    ++load[*t.find_link(s.src, s.dst)];
  int rounds = 1;
  for (const auto &[link, n] : load)
    rounds = std::max(rounds, (n + t.link(link).capacity - 1) / t.link(link).capacity);
  for (const BandwidthRelation &rel : t.relations()) {
    int n = 0;
    for (LinkId l : rel.links)
      n += load.contains(l) ? load[l] : 0;
    rounds = std::max(rounds, (n + rel.capacity - 1) / rel.capacity);
  }
  return rounds;
}

// Routes every chunk from its pre ranks to its post ranks along a shortest-path tree whose ties
// the generator breaks, one step per hop.
Algorithm route(const Topology &t, const CollectiveSpec &c) {
  const int n = t.num_ranks();
  std::vector<std::vector<Send>> steps;
  for (int k = 0; k < c.num_chunks(); ++k) {
    const ChunkId chunk(k);
    std::vector<int> depth(size_t(n), -1), parent(size_t(n), -1);
    std::deque<int> frontier;
    for (int r = 0; r < n; ++r)
      if (c.is_pre(chunk, RankId(r))) {
        depth[size_t(r)] = 0;
        frontier.push_back(r);
      }
    while (!frontier.empty()) {
      const int v = frontier.front();
      frontier.pop_front();
      // Which neighbour claims a rank first decides the tree: rotate the order by a draw.
      std::vector<LinkId> out = t.out_links(RankId(v));
      const int shift = *rc::gen::inRange(0, int(out.size()));
      std::rotate(out.begin(), out.begin() + shift, out.end());
      for (LinkId l : out) {
        const int w = t.link(l).dst.value();
        if (depth[size_t(w)] < 0) {
          depth[size_t(w)] = depth[size_t(v)] + 1;
          parent[size_t(w)] = v;
          frontier.push_back(w);
        }
      }
    }
    std::vector<bool> sent(size_t(n), false);
    for (int r = 0; r < n; ++r) {
      if (!c.is_post(chunk, RankId(r)))
        continue;
      RC_ASSERT(depth[size_t(r)] >= 0);
      for (int v = r; parent[size_t(v)] >= 0 && !sent[size_t(v)]; v = parent[size_t(v)]) {
        sent[size_t(v)] = true;
        const size_t step = size_t(depth[size_t(v)] - 1);
        if (steps.size() <= step)
          steps.resize(step + 1);
        steps[step].push_back({chunk, RankId(parent[size_t(v)]), RankId(v), SendOp::Copy});
      }
    }
  }
  Algorithm a;
  a.name = "shortest-path-trees";
  a.target.collective = std::string(collective_kind_name(c.kind()));
  a.target.ranks = n;
  a.target.chunk_factor = c.chunk_factor();
  a.target.root = c.root() ? std::optional<int>(c.root()->value()) : std::nullopt;
  a.target.topology = t.name();
  for (std::vector<Send> &sends : steps) {
    std::ranges::sort(sends);
    a.steps.push_back({rounds_for(t, sends), std::move(sends)});
  }
  return a;
}

} // namespace

void showValue(const FamilyCase &c, std::ostream &os) {
  os << "topology " << c.topology.name() << " (" << c.topology.num_ranks() << " ranks)\n"
     << "collective " << to_canonical_json(collective_to_json(c.collective)) << "\n"
     << program_to_mscclir_xml(c.program);
}

void showValue(const AlgorithmCase &c, std::ostream &os) {
  os << "topology " << to_canonical_json(topology_to_json(c.topology)) << "\n"
     << "collective " << to_canonical_json(collective_to_json(c.collective)) << "\n"
     << "algorithm " << to_canonical_json(algorithm_to_json(c.algorithm)) << "\n";
}

rc::Gen<Topology> gen_library_topology() {
  return rc::gen::exec([] {
    std::vector<std::string> names;
    for (const TopologyLibraryEntry &e : topology_library())
      names.push_back(e.name);
    const std::string name = *rc::gen::elementOf(names);
    auto t = make_library_topology(name, library_params(name));
    RC_ASSERT(t.has_value());
    return *std::move(t);
  });
}

rc::Gen<CollectiveSpec> gen_collective(int ranks) {
  return rc::gen::oneOf(gen_standard_collective(ranks, true), gen_custom_collective(ranks, true));
}

rc::Gen<AlgorithmCase> gen_algorithm() {
  return rc::gen::exec([] {
    const int ranks = *rc::gen::inRange(2, 7);
    Topology topology = gen_connected_topology(ranks);
    CollectiveSpec collective =
        *rc::gen::oneOf(gen_standard_collective(ranks, false), gen_custom_collective(ranks, false));
    Algorithm algorithm = route(topology, collective);
    // The generator's own promise, checked by the independent checker every time.
    const AlgorithmCheck check = check_algorithm(algorithm, topology, collective);
    RC_ASSERT(check.holds());
    return AlgorithmCase{std::move(topology), std::move(collective), std::move(algorithm)};
  });
}

rc::Gen<FamilyCase> gen_verified_program() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 6);
    const int n = *rc::gen::inRange(2, 9);
    std::optional<Program> program;
    switch (kind) {
    case 0:
      program = ring_allreduce_program(n, *rc::gen::inRange(1, 4));
      break;
    case 1:
      program = ring_allgather_program(n, *rc::gen::inRange(1, 4));
      break;
    case 2:
      program = allpairs_allreduce_program(n);
      break;
    case 3:
      program = recursive_doubling_allgather_program(1 << *rc::gen::inRange(1, 4));
      break;
    case 4: {
      const int nodes = *rc::gen::inRange(1, 4);
      program = two_step_alltoall_program(nodes, *rc::gen::inRange(nodes == 1 ? 2 : 1, 4));
      break;
    }
    default: {
      // A generated algorithm through the compiler, which verifies what it lowers.
      AlgorithmCase a = *gen_algorithm();
      auto dsl = lowering::algorithm_to_dsl(a.algorithm, a.topology, a.collective);
      RC_ASSERT(dsl.has_value());
      auto lowered = lowering::lower(*dsl);
      RC_ASSERT(lowered.has_value());
      RC_ASSERT(lowered->verified.has_value());
      return FamilyCase{lowered->program, a.topology, lowered->collective};
    }
    }
    auto topology = fully_connected(program->num_ranks());
    auto collective = collective_for_program(*program, std::nullopt);
    RC_ASSERT(topology.has_value());
    RC_ASSERT(collective.has_value());
    return FamilyCase{*std::move(program), *std::move(topology), *std::move(collective)};
  });
}

} // namespace syncoll::testing
