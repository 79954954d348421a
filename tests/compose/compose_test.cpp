// Compositions of multicasts, reductions and fences: the standard ones compute the standard
// collectives; bad compositions are refused with the reason; factorized plans lower to programs
// the verifier passes, for random hierarchies, stripes, rings and pipeline depths (property).
#include "compose/factorize.h"
#include "lowering/compile.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "tests/support/topologies.h"

#include <gtest/gtest.h>
#include <map>
#include <rapidcheck/gtest.h>
#include <set>

namespace syncoll::compose {
namespace {

constexpr CollectiveKind kStandard[] = {CollectiveKind::Allgather,     CollectiveKind::Alltoall,
                                        CollectiveKind::Broadcast,     CollectiveKind::Gather,
                                        CollectiveKind::Scatter,       CollectiveKind::Reduce,
                                        CollectiveKind::ReduceScatter, CollectiveKind::Allreduce};

std::optional<int> root_for(CollectiveKind kind, int ranks) {
  switch (kind) {
  case CollectiveKind::Broadcast:
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
  case CollectiveKind::Reduce:
    return ranks - 1;
  case CollectiveKind::Allgather:
  case CollectiveKind::Alltoall:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::Allreduce:
  case CollectiveKind::AllToNext:
  case CollectiveKind::Custom:
    return std::nullopt;
  }
  return std::nullopt;
}

TEST(CompositionTest, StandardCompositionsComputeTheStandardCollectives) {
  for (CollectiveKind kind : kStandard)
    for (int ranks : {1, 2, 3, 8})
      for (int factor : {1, 2, 5, ranks}) {
        auto c = Composition::standard(kind, ranks, factor, root_for(kind, ranks));
        ASSERT_TRUE(c) << collective_kind_name(kind) << ": " << c.error().to_string();
        auto derived = c->specification("derived");
        ASSERT_TRUE(derived) << derived.error().to_string();
        auto standard = make_collective(kind, ranks, factor, root_for(kind, ranks));
        ASSERT_TRUE(standard);
        EXPECT_TRUE(same_postcondition(*derived, *standard))
            << collective_kind_name(kind) << " on " << ranks << " ranks, factor " << factor;
        // Refining keeps the meaning: the same collective with every chunk cut in three.
        auto finer = c->refined(3).specification("finer");
        auto standard3 = make_collective(kind, ranks, factor * 3, root_for(kind, ranks));
        ASSERT_TRUE(finer && standard3);
        EXPECT_TRUE(same_postcondition(*finer, *standard3)) << collective_kind_name(kind);
      }
}

// 64 slices of an Allreduce over 64 nodes of 8 GPUs: one root per node, and every GPU index (so
// every NIC) a root on 8 of the nodes.
TEST(CompositionTest, SlicedAllreduceRootsSpreadOverNodesAndPositions) {
  auto c = Composition::standard(CollectiveKind::Allreduce, 512, 64, std::nullopt);
  ASSERT_TRUE(c) << c.error().to_string();
  std::set<int> nodes;
  std::map<int, int> per_position;
  for (const Primitive &p : c->epochs().front()) {
    nodes.insert(p.root.value() / 8);
    ++per_position[p.root.value() % 8];
  }
  EXPECT_EQ(nodes.size(), 64u);
  ASSERT_EQ(per_position.size(), 8u);
  for (const auto &[position, roots] : per_position)
    EXPECT_EQ(roots, 8) << "GPU " << position;
}

TEST(CompositionTest, ADifferentCompositionIsADifferentCollective) {
  // Allgather without rank 0's multicast leaves its slice of every output undefined.
  auto c = Composition::create(4, 1, 4);
  ASSERT_TRUE(c);
  for (int r = 1; r < 4; ++r)
    ASSERT_TRUE(c->multicast({BufferKind::Input, 0, 1}, RankId(r), Members::all(),
                             {BufferKind::Output, r, 1}));
  auto derived = c->specification("partial");
  ASSERT_TRUE(derived);
  EXPECT_FALSE(same_postcondition(*derived, *make_collective(CollectiveKind::Allgather, 4, 1)));
}

TEST(CompositionTest, PrimitivesOfOneEpochMayNotTouchWhatAnotherWrites) {
  auto c = Composition::create(2, 2, 2);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->multicast({BufferKind::Input, 0, 1}, RankId(0), Members::all(),
                           {BufferKind::Output, 0, 1}));
  auto twice = c->multicast({BufferKind::Input, 1, 1}, RankId(1), Members::all(),
                            {BufferKind::Output, 0, 1});
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().to_string().find("another primitive of this epoch writes"),
            std::string::npos)
      << twice.error().to_string();
  auto reads = c->multicast({BufferKind::Output, 0, 1}, RankId(1), Members::of({RankId(0)}),
                            {BufferKind::Output, 1, 1});
  ASSERT_FALSE(reads);
  EXPECT_NE(reads.error().to_string().find("a fence between them"), std::string::npos);
  // After a fence the same read is fine: it reads what the first epoch wrote.
  c->fence();
  EXPECT_TRUE(c->multicast({BufferKind::Output, 0, 1}, RankId(1), Members::of({RankId(0)}),
                           {BufferKind::Output, 1, 1}));
}

TEST(CompositionTest, BadPrimitivesSayWhatIsWrong) {
  auto c = Composition::create(4, 2, 2);
  ASSERT_TRUE(c);
  auto outside = c->multicast({BufferKind::Input, 1, 2}, RankId(0), Members::all(),
                              {BufferKind::Output, 0, 2});
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().to_string().find("outside its buffer"), std::string::npos);
  auto rank = c->reduction({BufferKind::Input, 0, 1}, Members::all(), RankId(4),
                           {BufferKind::Output, 0, 1});
  ASSERT_FALSE(rank);
  EXPECT_NE(rank.error().to_string().find("root 4"), std::string::npos);
  auto into_send = c->multicast({BufferKind::Input, 0, 1}, RankId(0), Members::others(),
                                {BufferKind::Input, 1, 1});
  ASSERT_FALSE(into_send);
  auto nobody = Composition::create(1, 1, 1)->multicast(
      {BufferKind::Input, 0, 1}, RankId(0), Members::others(), {BufferKind::Output, 0, 1});
  ASSERT_FALSE(nobody);
  EXPECT_NE(nobody.error().to_string().find("no receivers"), std::string::npos);
}

// Lowers `kind` factorized by `h` on `topology` and returns the verifier's report as text when a
// property fails (empty when verified).
std::string lower_and_verify(CollectiveKind kind, const Hierarchy &h, const Topology &topology,
                             int factor) {
  const int ranks = topology.num_ranks();
  auto c = Composition::standard(kind, ranks, factor, root_for(kind, ranks));
  if (!c)
    return c.error().to_string();
  auto spec = make_collective(kind, ranks, factor, root_for(kind, ranks));
  auto f = factorize(*c, *spec, h, topology);
  if (!f)
    return "factorize: " + f.error().to_string();
  auto lowered = lowering::lower(f->program);
  if (!lowered)
    return "lower: " + lowered.error().to_string();
  if (!lowered->verified)
    return lowered->verified.error().to_text();
  return "";
}

TEST(FactorizeTest, EveryStandardCollectiveOnTwoNodesVerifies) {
  auto node = fully_connected(4);
  ASSERT_TRUE(node);
  auto machine = multinode(2, *node, 2, BytesPerNs{25});
  ASSERT_TRUE(machine) << machine.error().to_string();
  for (CollectiveKind kind : kStandard)
    for (Hierarchy h : {Hierarchy{{2, 4}, 1, 1, 1, {}}, Hierarchy{{2, 4}, 2, 2, 2, {}},
                        Hierarchy{{2, 2, 2}, 4, 1, 3, {}}, Hierarchy{{8}, 1, 1, 2, {}}}) {
      const std::string failure =
          lower_and_verify(kind, h, *machine, kind == CollectiveKind::Allreduce ? 8 : 1);
      EXPECT_EQ(failure, "") << collective_kind_name(kind) << " factors " << h.factors.size()
                             << " stripes " << h.stripes << " ring " << h.ring_nodes << " pipeline "
                             << h.pipeline;
    }
}

TEST(FactorizeTest, BadParametersAreRefused) {
  EXPECT_FALSE(checked({{2, 3}, 1, 1, 1, {}}, 8));
  EXPECT_FALSE(checked({{2, 4}, 3, 1, 1, {}}, 8));
  EXPECT_FALSE(checked({{2, 4}, 1, 3, 1, {}}, 8));
  EXPECT_FALSE(checked({{2, 4}, 1, 1, 0, {}}, 8));
  auto h = checked({}, 8);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->factors, std::vector<int>{8});
}

// For random hierarchies (2-3 levels of 2-8 groups, at most 16 ranks), every standard collective
// composed and factorized with random stripes, ring nodes and pipeline depth verifies. (Past a few
// dozen ranks, all-to-all-like plans need more thread blocks per rank than the executor keeps
// resident: the verifier's resource verdict, not a wrong program.)
TEST(FactorizeTest, ATransportPerLevelChoosesTheLinksItsHopsUse) {
  // Two nodes of four GPUs (100 GB/s links inside) whose two NICs (25 GB/s) hang off one leaf
  // switch: inside a node a hop can take the GPUs' own link or go out through the NICs.
  const Topology node = testing::uniform_fully_connected(4, 1, 0, 100);
  FatTree fabric;
  fabric.nics_per_node = 2;
  fabric.nic_bandwidth = BytesPerNs{25};
  auto machine = fat_tree(2, node, fabric);
  ASSERT_TRUE(machine) << machine.error().to_string();
  auto c = Composition::standard(CollectiveKind::Allgather, 8, 1);
  auto spec = make_collective(CollectiveKind::Allgather, 8, 1);
  ASSERT_TRUE(c && spec);
  auto time_us = [&](std::vector<Transport> transports) -> Expected<double> {
    SYNCOLL_TRY(f, factorize(*c, *spec, {{2, 4}, 1, 1, 1, transports}, *machine));
    // The plan runs on the machine less what its transports leave unused.
    EXPECT_EQ(f.topology.find_link(RankId(0), RankId(1)).has_value(),
              transports.empty() || transports[1] != Transport::Net);
    EXPECT_TRUE(f.topology.reaches(RankId(0), RankId(1)));
    auto lowered = lowering::lower(f.program);
    EXPECT_TRUE(lowered && lowered->verified);
    simulator::ProgramSimOptions o;
    o.size_bytes = int64_t(64) << 20;
    auto sim = simulator::simulate_program(lowered->program, f.topology, o);
    EXPECT_TRUE(sim && !sim->deadlocked);
    return double(sim->result.completion) / 1e6;
  };
  auto direct = time_us({});
  auto p2p = time_us({Transport::Auto, Transport::P2p});
  auto net = time_us({Transport::Auto, Transport::Net});
  ASSERT_TRUE(direct && p2p && net) << (net ? "" : net.error().to_string());
  EXPECT_DOUBLE_EQ(*direct, *p2p);
  // Inside the node through a 25 GB/s NIC instead of a 100 GB/s link: well over twice as long.
  EXPECT_GT(*net, 2 * *direct);

  // What a level's transport cannot carry is refused, with the ranks.
  auto across =
      factorize(*c, *spec, {{2, 4}, 1, 1, 1, {Transport::P2p, Transport::Auto}}, *machine);
  ASSERT_FALSE(across);
  EXPECT_NE(across.error().to_string().find("different nodes"), std::string::npos)
      << across.error().to_string();
  auto joined = multinode(2, node, 2, BytesPerNs{25});
  ASSERT_TRUE(joined);
  auto no_fabric =
      factorize(*c, *spec, {{2, 4}, 1, 1, 1, {Transport::Auto, Transport::Net}}, *joined);
  ASSERT_FALSE(no_fabric);
  EXPECT_NE(no_fabric.error().to_string().find("no switch fabric"), std::string::npos)
      << no_fabric.error().to_string();
  EXPECT_FALSE(checked({{2, 4}, 1, 1, 1, {Transport::Net}}, 8));
  EXPECT_EQ(parse_transport("net"), Transport::Net);
  EXPECT_EQ(parse_transport("ipc"), std::nullopt);
}

RC_GTEST_PROP(FactorizeProperty, RandomHierarchiesVerify, ()) {
  const int levels = *rc::gen::inRange(2, 4);
  std::vector<int> factors;
  int ranks = 1;
  for (int l = 0; l < levels; ++l) {
    const int f = *rc::gen::inRange(2, std::max(3, std::min(9, 16 / ranks + 1)));
    if (ranks * f > 16)
      break;
    factors.push_back(f);
    ranks *= f;
  }
  RC_PRE(factors.size() >= 2);
  const int top = ranks / factors[0];
  std::vector<int> stripe_choices;
  for (int s = 1; s <= top; ++s)
    if (top % s == 0)
      stripe_choices.push_back(s);
  Hierarchy h{factors,
              *rc::gen::elementOf(stripe_choices),
              *rc::gen::inRange(1, factors[0] + 1),
              *rc::gen::inRange(1, 3),
              {}};
  const CollectiveKind kind =
      *rc::gen::elementOf(std::vector<CollectiveKind>(std::begin(kStandard), std::end(kStandard)));
  // Allreduce in a slice per rank, or in fewer slices than ranks.
  const int factor = kind == CollectiveKind::Allreduce
                         ? *rc::gen::elementOf(std::vector<int>{1, 2, ranks})
                         : *rc::gen::inRange(1, 3);
  RC_TAG(collective_kind_name(kind));
  auto topology = fully_connected(ranks);
  RC_ASSERT(topology.has_value());
  const std::string failure = lower_and_verify(kind, h, *topology, factor);
  if (!failure.empty())
    RC_FAIL(failure);
}

} // namespace
} // namespace syncoll::compose
