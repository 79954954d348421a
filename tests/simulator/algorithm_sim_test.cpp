// Closed forms as oracles for the algorithm simulator (docs/architecture.md, "Simulation"):
// k-synchronous algorithms without contention take S*alpha + (R/C)*L*beta exactly, ring Allreduce
// 2(N-1)(alpha + L/(N*B)); time is monotone in alpha, 1/bandwidth and size; bytes are conserved;
// symmetric algorithms on vertex-transitive topologies finish every rank together.
#include "model/topology_library.h"
#include "nccl/steps.h"
#include "simulator/algorithm_sim.h"
#include "simulator/network.h"
#include "tests/support/topologies.h"

#include <gtest/gtest.h>
#include <map>
#include <rapidcheck/gtest.h>

namespace syncoll::simulator {
namespace {

using testing::uniform_fully_connected;

// Ring Allreduce as an Algorithm: reduce-scatter then allgather, one chunk per rank and step.
Algorithm ring_allreduce(int n) {
  Algorithm a;
  a.name = "ring-allreduce";
  for (int s = 0; s < n - 1; ++s) {
    AlgorithmStep step;
    for (int r = 0; r < n; ++r)
      step.sends.push_back(
          {ChunkId(((r - s) % n + n) % n), RankId(r), RankId((r + 1) % n), SendOp::Reduce});
    a.steps.push_back(step);
  }
  for (int s = 0; s < n - 1; ++s) {
    AlgorithmStep step;
    for (int r = 0; r < n; ++r)
      step.sends.push_back({ChunkId(((r + 1 - s) % n + n) % n), RankId(r), RankId((r + 1) % n)});
    a.steps.push_back(step);
  }
  return a;
}

RC_GTEST_PROP(AlgorithmSimProperty, KSynchronousClosedFormIsExact, ()) {
  const int n = *rc::gen::inRange(2, 7);
  const int capacity = *rc::gen::inRange(1, 3);
  const double alpha = *rc::gen::inRange(0, 5000);
  const double unit = *rc::gen::element(1.0, 2.0, 4.0);
  const Topology t = uniform_fully_connected(n, capacity, alpha, unit);
  auto collective = make_collective(CollectiveKind::Allgather, n, *rc::gen::inRange(1, 4));
  const int64_t chunk = 1024 * *rc::gen::inRange(1, 64);
  // Each step saturates one link with capacity x rounds sends and loads others below that.
  Algorithm a;
  const int steps = *rc::gen::inRange(1, 6);
  int rounds = 0;
  for (int s = 0; s < steps; ++s) {
    AlgorithmStep step;
    step.rounds = *rc::gen::inRange(1, 4);
    rounds += step.rounds;
    const int src = *rc::gen::inRange(0, n), dst = (src + *rc::gen::inRange(1, n)) % n;
    for (int k = 0; k < capacity * step.rounds; ++k)
      step.sends.push_back({ChunkId(0), RankId(src), RankId(dst)});
    const int others = *rc::gen::inRange(0, 4);
    for (int k = 0; k < others; ++k) {
      const int a2 = *rc::gen::inRange(0, n), b2 = (a2 + *rc::gen::inRange(1, n)) % n;
      if (a2 == src && b2 == dst)
        continue;
      step.sends.push_back({ChunkId(0), RankId(a2), RankId(b2)});
    }
    // Keep every other link at or below capacity x rounds.
    std::map<std::pair<int, int>, int> load;
    std::vector<Send> kept;
    for (const Send &snd : step.sends)
      if (++load[{snd.src.value(), snd.dst.value()}] <= capacity * step.rounds)
        kept.push_back(snd);
    step.sends = kept;
    a.steps.push_back(step);
  }
  const int64_t size = chunk * collective->input_chunks();
  auto r = simulate_algorithm(a, t, *collective, size, {});
  RC_ASSERT(r.has_value());
  // S*alpha + (R/C)*L*beta with L/C = one chunk and beta = 1 / unit bandwidth (ps).
  const Picoseconds expected =
      steps * Picoseconds(alpha * 1000) + rounds * chunk * 1000 / Picoseconds(unit);
  RC_ASSERT(r->completion == expected);
}

RC_GTEST_PROP(AlgorithmSimProperty, RingAllreduceMatchesTheFormula, ()) {
  const int n = *rc::gen::inRange(2, 13);
  const double alpha = *rc::gen::inRange(0, 10000);
  const double bandwidth = *rc::gen::element(1.0, 2.0, 5.0, 10.0, 20.0, 25.0, 50.0);
  TopologyDraft d = ring(n)->to_draft();
  for (Link &l : d.links)
    l.alpha = Nanoseconds{alpha}, l.bandwidth = BytesPerNs{bandwidth};
  const Topology t = *Topology::create(d);
  auto collective = make_collective(CollectiveKind::Allreduce, n, n);
  const int64_t size = int64_t(n) * 1000 * *rc::gen::inRange(1, 1000);
  for (auto timing : {AlgorithmTiming::StepSynchronous, AlgorithmTiming::Dataflow}) {
    auto r = simulate_algorithm(ring_allreduce(n), t, *collective, size,
                                {timing, 1.0, false, Switching::CutThrough, {}});
    RC_ASSERT(r.has_value());
    // 2(N-1)(alpha + L/(N*B))
    const Picoseconds per_step =
        Picoseconds(alpha * 1000) + Picoseconds(double(size / n) * 1000 / bandwidth + 0.5);
    RC_ASSERT(r->completion == 2 * (n - 1) * per_step);
    // Symmetric algorithm on a vertex-transitive topology: every rank is equally busy.
    for (Picoseconds idle : r->rank_idle)
      RC_ASSERT(idle == r->rank_idle.front());
  }
}

RC_GTEST_PROP(AlgorithmSimProperty, TimeIsMonotoneAndBytesAreConserved, ()) {
  const int n = *rc::gen::inRange(3, 9);
  auto collective = make_collective(CollectiveKind::Allreduce, n, n);
  const Algorithm a = ring_allreduce(n);
  const int64_t size = int64_t(n) * *rc::gen::inRange(1, 100000);
  auto topology_links = [](int ranks) { return size_t(ranks) * size_t(ranks - 1); };
  auto topo = [&](double alpha, double bw) {
    TopologyDraft d = fully_connected(n)->to_draft();
    for (Link &l : d.links)
      l.alpha = Nanoseconds{alpha}, l.bandwidth = BytesPerNs{bw};
    return *Topology::create(d);
  };
  const double alpha = *rc::gen::inRange(0, 3000), bw = *rc::gen::inRange(1, 100);
  for (auto timing : {AlgorithmTiming::StepSynchronous, AlgorithmTiming::Dataflow}) {
    const AlgorithmSimOptions o{timing, 1.0, false, Switching::CutThrough, {}};
    auto base = simulate_algorithm(a, topo(alpha, bw), *collective, size, o);
    auto slower_alpha = simulate_algorithm(a, topo(alpha + 100, bw), *collective, size, o);
    auto slower_bw = simulate_algorithm(a, topo(alpha, bw / 2), *collective, size, o);
    auto bigger = simulate_algorithm(a, topo(alpha, bw), *collective, size * 2, o);
    RC_ASSERT(base->completion <= slower_alpha->completion);
    RC_ASSERT(base->completion <= slower_bw->completion);
    RC_ASSERT(base->completion <= bigger->completion);
    RC_ASSERT(base->total_link_bytes() == int64_t(a.num_sends()) * (size / n));
    // One report per link, whatever the timing.
    RC_ASSERT(base->links.size() == topology_links(n));
  }
}

TEST(AlgorithmSimTest, DataflowOverlapsWhatStepsSerialize) {
  // Broadcast of 2 chunks down a line of 4 in 4 steps. Step-synchronous: 4 x (alpha + d) with
  // alpha = 500 ns and d = 1 MiB at 50 GB/s = 20,971.52 ns. Dataflow: chunk 1 leaves the root as
  // soon as the link has serialized chunk 0, without waiting a step: one alpha less.
  auto bc = make_collective(CollectiveKind::Broadcast, 4, 2, 0);
  auto a = read_algorithm_file(std::string(SYNCOLL_SOURCE_DIR) +
                               "/examples/algorithms/line4_broadcast_s4r4.json");
  ASSERT_TRUE(a);
  auto sync =
      simulate_algorithm(*a, *line(4), *bc, 2 << 20,
                         {AlgorithmTiming::StepSynchronous, 1.0, false, Switching::CutThrough, {}});
  auto flow =
      simulate_algorithm(*a, *line(4), *bc, 2 << 20,
                         {AlgorithmTiming::Dataflow, 1.0, false, Switching::CutThrough, {}});
  ASSERT_TRUE(sync && flow);
  EXPECT_EQ(sync->completion, 4 * (500'000 + 20'971'520));
  EXPECT_EQ(flow->completion, 3 * 500'000 + 4 * 20'971'520);
}

TEST(AlgorithmSimTest, ExecutorCostsAddALaunchAStepCostAndCombinesThatTakeTurns) {
  // The line broadcast as above, under a launch of 7 us and 2 us before every step.
  auto bc = make_collective(CollectiveKind::Broadcast, 4, 2, 0);
  auto a = read_algorithm_file(std::string(SYNCOLL_SOURCE_DIR) +
                               "/examples/algorithms/line4_broadcast_s4r4.json");
  ASSERT_TRUE(a);
  AlgorithmSimOptions o;
  o.costs = {7'000'000, 2'000'000, 0};
  auto sync = simulate_algorithm(*a, *line(4), *bc, 2 << 20, o);
  ASSERT_TRUE(sync);
  EXPECT_EQ(sync->completion, 7'000'000 + 4 * (2'000'000 + 500'000 + 20'971'520));
  // Dataflow: every send waits 2 us after its chunk is there; chunk 1 trails chunk 0 by one
  // serialization on the last link.
  o.timing = AlgorithmTiming::Dataflow;
  auto flow = simulate_algorithm(*a, *line(4), *bc, 2 << 20, o);
  ASSERT_TRUE(flow);
  EXPECT_EQ(flow->completion, 7'000'000 + 3 * (2'000'000 + 500'000 + 20'971'520) + 20'971'520);

  // Ranks 1 and 2 reduce chunk 0 into rank 0 in one step: the two combines take turns after
  // both arrived (alpha 500 ns + 1,000 bytes at 1 GB/s).
  auto reduce = make_collective(CollectiveKind::Reduce, 3, 1, 0);
  ASSERT_TRUE(reduce);
  const Topology t = uniform_fully_connected(3, 1, 500, 1);
  const Algorithm into_one{"into-one",
                           {},
                           {{1,
                             {{ChunkId(0), RankId(1), RankId(0), SendOp::Reduce},
                              {ChunkId(0), RankId(2), RankId(0), SendOp::Reduce}}}}};
  for (AlgorithmTiming timing : {AlgorithmTiming::StepSynchronous, AlgorithmTiming::Dataflow}) {
    AlgorithmSimOptions c;
    c.timing = timing;
    c.costs.combine = 300'000; // picoseconds, as every time here
    auto r = simulate_algorithm(into_one, t, *reduce, 1000, c);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->completion, 500'000 + 1'000'000 + 2 * 300'000);
    // Without combines the same step ends with its arrivals.
    c.costs.combine = 0;
    auto bare = simulate_algorithm(into_one, t, *reduce, 1000, c);
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->completion, 500'000 + 1'000'000);
  }
}

TEST(AlgorithmSimTest, RelationsSerializeSwitchPorts) {
  // hub_and_spoke(3): rank 0 sends one chunk to each of 1 and 2; its out-port relation makes
  // the second wait for the first.
  auto bc = make_collective(CollectiveKind::Broadcast, 3, 1, 0);
  Algorithm a{
      "fan", {}, {{2, {{ChunkId(0), RankId(0), RankId(1)}, {ChunkId(0), RankId(0), RankId(2)}}}}};
  auto hub = simulate_algorithm(a, *hub_and_spoke(3), *bc, 50'000, {});
  auto direct = simulate_algorithm(a, *fully_connected(3), *bc, 50'000, {});
  ASSERT_TRUE(hub && direct);
  EXPECT_EQ(direct->completion, 500'000 + 1'000'000);
  EXPECT_EQ(hub->completion, 500'000 + 2 * 1'000'000);
}

TEST(AlgorithmSimTest, UnreachableRankIsAnError) {
  // Two ranks linked one way only: rank 1 cannot reach rank 0.
  TopologyDraft d{"oneway", 2, {}, {{RankId(0), RankId(1), 1, {500}, {50}}}, {}, {}};
  auto bc = make_collective(CollectiveKind::Broadcast, 2, 1, 1);
  Algorithm a{"back", {}, {{1, {{ChunkId(0), RankId(1), RankId(0)}}}}};
  auto r = simulate_algorithm(a, *Topology::create(d), *bc, 1024, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("rank 1 cannot reach rank 0"), std::string::npos);
}

TEST(AlgorithmSimTest, TwoHopsThroughASwitchCostOneLatencyOrOneSerialization) {
  // star(3): 1 -> 0 is one hop, 1 -> 2 goes through rank 0. 500 ns links of 50 GB/s; 1 MB
  // serializes in 20,000 ns.
  const Topology t = *star(3);
  auto bc = make_collective(CollectiveKind::Broadcast, 3, 1, 1);
  Algorithm one{"1hop", {}, {{1, {{ChunkId(0), RankId(1), RankId(0)}}}}};
  Algorithm two{"2hop", {}, {{1, {{ChunkId(0), RankId(1), RankId(2)}}}}};
  const int64_t mb = 1'000'000;
  const Picoseconds alpha = 500'000, serialization = 20'000'000;
  for (auto timing : {AlgorithmTiming::StepSynchronous, AlgorithmTiming::Dataflow}) {
    AlgorithmSimOptions cut{timing, 1.0, false, Switching::CutThrough, {}};
    AlgorithmSimOptions store{timing, 1.0, false, Switching::StoreAndForward, {}};
    auto one_hop = simulate_algorithm(one, t, *bc, mb, cut);
    auto two_cut = simulate_algorithm(two, t, *bc, mb, cut);
    auto two_store = simulate_algorithm(two, t, *bc, mb, store);
    ASSERT_TRUE(one_hop && two_cut && two_store);
    EXPECT_EQ(one_hop->completion, alpha + serialization);
    EXPECT_EQ(two_cut->completion - one_hop->completion, alpha);
    EXPECT_EQ(two_store->completion - one_hop->completion, alpha + serialization);
    // Both links of the route carried the chunk.
    EXPECT_EQ(two_cut->total_link_bytes(), 2 * mb);
  }
}

RC_GTEST_PROP(AlgorithmSimProperty, HopByHopAlltoallOnARingTakesItsBusiestLinksLoad, ()) {
  // All chunks start at once over shortest routes of a bidirectional ring. Taking each hop when
  // it gets there keeps the busiest links busy from the start to their last chunk, which then
  // arrives one latency later: the busiest link's load is the whole time.
  const int n = *rc::gen::inRange(3, 33);
  // Chunks long enough that a link's queue outlasts a route's latencies.
  const int64_t chunk = *rc::gen::inRange<int64_t>(1 << 16, 1 << 22);
  const double alpha_ns = *rc::gen::element(0.0, 500.0);
  const double gbps = *rc::gen::element(25.0, 50.0, 53.687);
  TopologyDraft draft = ring(n)->to_draft();
  for (Link &link : draft.links) {
    link.alpha = Nanoseconds{alpha_ns};
    link.bandwidth = BytesPerNs{gbps};
  }
  const Topology t = *Topology::create(draft);
  auto r = simulate_steps(nccl::AlltoallSteps(n), t, chunk, 1.0);
  RC_ASSERT(r.has_value());
  int64_t busiest = 0;
  for (const LinkReport &link : r->links)
    busiest = std::max(busiest, link.bytes);
  RC_ASSERT(r->completion ==
            (busiest / chunk) * transfer_ps(chunk, gbps) + std::llround(alpha_ns * 1000));
}

TEST(AlgorithmSimTest, TransfersTakeEachHopWhenTheyReachIt) {
  // star(3), all sent at once in this order: C 1 -> 0, then A 1 -> 2 through rank 0, then B
  // 0 -> 2. A waits behind C on link 1 -> 0 and reaches link 0 -> 2 only at ser + alpha; B is
  // there at 0 and goes first. Booking A's whole route when it started would have held 0 -> 2
  // for A and kept B waiting behind it until 2 ser + alpha.
  const Topology t = *star(3);
  auto bc = make_collective(CollectiveKind::Broadcast, 3, 1, 1);
  Algorithm a{"gap",
              {},
              {{1,
                {{ChunkId(0), RankId(1), RankId(0)},
                 {ChunkId(0), RankId(1), RankId(2)},
                 {ChunkId(0), RankId(0), RankId(2)}}}}};
  const int64_t mb = 1'000'000;
  const Picoseconds alpha = 500'000, ser = 20'000'000;
  for (auto timing : {AlgorithmTiming::StepSynchronous, AlgorithmTiming::Dataflow}) {
    auto r = simulate_algorithm(a, t, *bc, mb, {timing, 1.0, false, Switching::CutThrough, {}});
    ASSERT_TRUE(r) << r.error().to_string();
    // A: 1 -> 0 over [ser, 2 ser], 0 -> 2 over [ser + alpha, 2 ser + alpha], in at 2 ser + 2 alpha.
    EXPECT_EQ(r->completion, 2 * ser + 2 * alpha);
  }
}

} // namespace
} // namespace syncoll::simulator
