// Instance symmetries (topology automorphisms with their chunk relabelling) and the lex-leader
// constraints the SAT backend builds from them.
#include "model/invariant.h"
#include "model/topology_library.h"
#include "synth/symmetry.h"
#include "synth/synthesize.h"
#include "tests/synth/targets.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <set>

namespace syncoll::synth {
namespace {

using testing::small_topology;
using testing::target_of;

CollectiveSpec spec(CollectiveKind kind, int ranks, int chunks = 1) {
  auto c = make_collective(kind, ranks, chunks, target_of(kind).root);
  SYNCOLL_INVARIANT(c.has_value(), "test collective");
  return *c;
}

// Every generator must map links to links of the same capacity, and each chunk to a chunk whose
// pre and post ranks are the images of its own.
void expect_symmetries(const Topology &t, const CollectiveSpec &c, const SymmetryGroup &g) {
  const int P = t.num_ranks();
  for (const InstanceSymmetry &s : g.generators) {
    ASSERT_EQ(s.rank_image.size(), size_t(P));
    std::vector<int> sorted = s.rank_image;
    std::sort(sorted.begin(), sorted.end());
    for (int n = 0; n < P; ++n)
      ASSERT_EQ(sorted[size_t(n)], n) << "not a permutation";
    for (const Link &l : t.links())
      EXPECT_EQ(
          t.capacity(RankId(s.rank_image[l.src.index()]), RankId(s.rank_image[l.dst.index()])),
          l.capacity);
    for (int ch = 0; ch < c.num_chunks(); ++ch) {
      const int to = s.chunk_image[size_t(ch)];
      ASSERT_GE(to, 0);
      std::set<int> pre, post, image_pre, image_post;
      for (const ChunkPlace &p : c.chunk(ChunkId(ch)).pre)
        pre.insert(s.rank_image[p.rank.index()]);
      for (const ChunkPlace &p : c.chunk(ChunkId(ch)).post)
        post.insert(s.rank_image[p.rank.index()]);
      for (const ChunkPlace &p : c.chunk(ChunkId(to)).pre)
        image_pre.insert(p.rank.value());
      for (const ChunkPlace &p : c.chunk(ChunkId(to)).post)
        image_post.insert(p.rank.value());
      EXPECT_EQ(pre, image_pre);
      EXPECT_EQ(post, image_post);
    }
  }
}

TEST(SymmetryTest, GroupOrdersOfLibraryTopologies) {
  struct Case {
    Topology topology;
    CollectiveKind kind;
    std::uint64_t order;
  };
  const std::vector<Case> cases = {
      {*ring(5), CollectiveKind::Allgather, 10},      // dihedral
      {*ring(5), CollectiveKind::Broadcast, 2},       // the reflection through the root
      {*line(4), CollectiveKind::Allgather, 2},       // end for end
      {*hypercube(3), CollectiveKind::Allgather, 48}, // 2^3 x 3!
      {*hypercube(3), CollectiveKind::Gather, 6},     // permutations of the root's axes
      {*fully_connected(4), CollectiveKind::Alltoall, 24},
      {*star(5), CollectiveKind::Allgather, 24}, // the leaves; the hub stays
  };
  for (const Case &k : cases) {
    const CollectiveSpec c = spec(k.kind, k.topology.num_ranks());
    const SymmetryGroup g = instance_symmetries(k.topology, c);
    SCOPED_TRACE(k.topology.name() + " " + std::string(collective_kind_name(k.kind)));
    EXPECT_TRUE(g.complete);
    EXPECT_EQ(g.order, k.order);
    expect_symmetries(k.topology, c, g);
  }
}

TEST(SymmetryTest, ABudgetTooSmallIsReportedIncomplete) {
  const CollectiveSpec c = spec(CollectiveKind::Allgather, 8);
  const SymmetryGroup g = instance_symmetries(*hypercube(3), c, /*node_budget=*/5);
  EXPECT_FALSE(g.complete);
  EXPECT_LT(g.order, 48u);
  expect_symmetries(*hypercube(3), c, g);
}

TEST(SymmetryTest, Dgx1GeneratorsAreSymmetries) {
  for (CollectiveKind kind : {CollectiveKind::Allgather, CollectiveKind::Alltoall}) {
    const CollectiveSpec c = spec(kind, 8, 2);
    const SymmetryGroup g = instance_symmetries(dgx1(), c);
    EXPECT_TRUE(g.complete);
    EXPECT_GT(g.order, 1u);
    expect_symmetries(dgx1(), c, g);
  }
}

// Lex-leader constraints only remove algorithms that have a symmetric twin left in: with them
// on, the SAT backend decides every random instance as it does without (itself checked against
// the SMT backend in sat_synth_test), and what it finds still checks.
RC_GTEST_PROP(SymmetryProperty, BreakingSymmetryKeepsEveryVerdict, ()) {
  const Topology topology = *rc::gen::element(0, 1, 2) == 0 ? *hypercube(3) : small_topology();
  const Target target = target_of(*rc::gen::element(
      CollectiveKind::Allgather, CollectiveKind::Broadcast, CollectiveKind::Gather,
      CollectiveKind::Alltoall, CollectiveKind::ReduceScatter));
  const int chunks = *rc::gen::inRange(1, 4);
  const int steps = *rc::gen::inRange(1, 5);
  const int rounds = steps + *rc::gen::inRange(0, 4);
  RC_TAG(collective_kind_name(target.kind));
  SynthOptions plain, broken;
  broken.break_symmetry = true;
  auto a = synthesize(topology, target, chunks, {steps, rounds}, plain);
  auto b = synthesize(topology, target, chunks, {steps, rounds}, broken);
  RC_ASSERT(a.has_value());
  RC_ASSERT(b.has_value());
  RC_TAG(verdict_name(a->verdict));
  RC_ASSERT(a->verdict == b->verdict);
}

} // namespace
} // namespace syncoll::synth
