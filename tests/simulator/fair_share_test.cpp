// Max-min fair bandwidth relations (docs/cost-model.md, "Bandwidth relations"): overlapping
// transfers share a fair relation at once, each up to its own cap, and the relation stays work
// conserving, so a batch that starts together ends when the FIFO policy would end it.
#include "model/collective.h"
#include "model/topology_library.h"
#include "simulator/algorithm_sim.h"
#include "simulator/network.h"
#include "simulator/program_sim.h"
#include "testing/programs.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <limits>
#include <numeric>
#include <rapidcheck/gtest.h>

namespace syncoll::simulator {
namespace {

// Rank 0 with a link of `gbps` and 500 ns to each of ranks 1..n-1, all behind one out-port
// relation of capacity 1 (so the port carries `gbps` in all), shared as `sharing`.
Topology fan_out(int n, double gbps, RelationSharing sharing) {
  TopologyDraft d;
  d.name = "fan";
  d.num_ranks = n;
  TopologyDraft::Relation port{"port0", {}, 1, sharing};
  for (int r = 1; r < n; ++r) {
    d.links.push_back({RankId(0), RankId(r), 1, Nanoseconds{500}, BytesPerNs{gbps}});
    port.links.emplace_back(RankId(0), RankId(r));
  }
  d.relations.push_back(port);
  return *Topology::create(d);
}

std::map<uint32_t, Delivery> run_all(Network &network) {
  std::vector<Delivery> delivered;
  network.advance(kNever, delivered);
  std::map<uint32_t, Delivery> by_tag;
  for (const Delivery &d : delivered)
    if (d.arrived) // each transfer's release comes first; its arrival has all its times
      by_tag[d.tag] = d;
  return by_tag;
}

TEST(FairShareTest, OverlappingTransfersSplitTheRelationUntilOneEnds) {
  // 1 MB to rank 1 and 3 MB to rank 2 behind a 50 GB/s port: 25 GB/s each until the first is
  // through at 40 us, then the second alone at 50 GB/s for its last 2 MB (40 us more).
  const Topology t = fan_out(3, 50, RelationSharing::Fair);
  Network network(t, 1.0);
  EXPECT_FALSE(
      network.start(network.route(RankId(0), RankId(1)), 1'000'000, 0, Switching::CutThrough, 7));
  EXPECT_FALSE(
      network.start(network.route(RankId(0), RankId(2)), 3'000'000, 0, Switching::CutThrough, 8));
  EXPECT_EQ(network.next_event(), 0);
  auto d = run_all(network);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[7].times.start, 0);
  EXPECT_EQ(d[7].times.arrival, 40'000'000 + 500'000);
  EXPECT_EQ(d[8].times.arrival, 80'000'000 + 500'000);
  EXPECT_EQ(d[8].first_hop_end, 80'000'000);
  EXPECT_EQ(network.next_event(), kNever);
  EXPECT_EQ(network.usage()[1].bytes, 3'000'000);
  EXPECT_EQ(network.usage()[1].busy, 80'000'000);
}

// 1 MB to rank 1 at 0 and 1 MB to rank 2 at 10 us behind a 50 GB/s port: shared exactly, the
// first is alone for 10 us, then both share the port until the first is through at 30 us and
// the second finishes alone at 40 us.
std::map<uint32_t, Delivery> staggered_pair(Picoseconds window, int hop_ratio = 0) {
  const Topology t = fan_out(3, 50, RelationSharing::Fair);
  Network network(t, 1.0);
  network.set_sharing_window(window, hop_ratio);
  EXPECT_FALSE(
      network.start(network.route(RankId(0), RankId(1)), 1'000'000, 0, Switching::CutThrough, 7));
  EXPECT_FALSE(network.start(network.route(RankId(0), RankId(2)), 1'000'000, 10'000'000,
                             Switching::CutThrough, 8));
  return run_all(network);
}

TEST(FairShareTest, EventsFartherApartThanTheSharingWindowAreSharedExactly) {
  for (Picoseconds window : {Picoseconds(0), Picoseconds(5'000'000)}) {
    auto d = staggered_pair(window);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[7].times.arrival, 30'000'000 + 500'000) << window;
    EXPECT_EQ(d[8].times.arrival, 40'000'000 + 500'000) << window;
  }
}

TEST(FairShareTest, ASharingWindowDefersTheRatesOfWhatStartsInsideIt) {
  // With a 20 us window the second start falls inside the first one's window: neither has a
  // rate until the window's events are through (at 10 us), then both share the port to the end
  // (20 and 10 us late).
  auto d = staggered_pair(20'000'000);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[7].times.arrival, 50'000'000 + 500'000);
  EXPECT_EQ(d[8].times.arrival, 50'000'000 + 500'000);
}

TEST(FairShareTest, AWindowHoldsOnlyWhileTheTypicalHopLastsTheRatioOfWindows) {
  // The first transfer alone takes 20 us. Under a 20 us window that must fit ten times into a
  // typical hop the sharing stays exact; one that must fit once holds: the second start, at
  // 10 us, gets no rate while the first keeps the whole port until it is through at 20 us.
  for (int ratio : {0, 10}) {
    auto exact = ratio == 0 ? staggered_pair(0) : staggered_pair(20'000'000, ratio);
    ASSERT_EQ(exact.size(), 2u);
    EXPECT_EQ(exact[7].times.arrival, 30'000'000 + 500'000) << ratio;
    EXPECT_EQ(exact[8].times.arrival, 40'000'000 + 500'000) << ratio;
  }
  auto windowed = staggered_pair(20'000'000, 1);
  ASSERT_EQ(windowed.size(), 2u);
  EXPECT_EQ(windowed[7].times.arrival, 20'000'000 + 500'000);
  EXPECT_EQ(windowed[8].times.arrival, 40'000'000 + 500'000);
  // The window is the typical hop over the ratio: 2 us asked, ratio 1, so a 20 us window again.
  auto scaled = staggered_pair(2'000'000, 1);
  EXPECT_EQ(scaled[7].times.arrival, 20'000'000 + 500'000);
}

TEST(FairShareTest, FifoRelationServesOneTransferAfterTheOther) {
  const Topology t = fan_out(3, 50, RelationSharing::Fifo);
  Network network(t, 1.0);
  auto first =
      network.start(network.route(RankId(0), RankId(1)), 1'000'000, 0, Switching::CutThrough, 7);
  auto second =
      network.start(network.route(RankId(0), RankId(2)), 3'000'000, 0, Switching::CutThrough, 8);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->arrival, 20'000'000 + 500'000);
  EXPECT_EQ(second->start, 20'000'000);
  EXPECT_EQ(second->arrival, 80'000'000 + 500'000);
}

TEST(FairShareTest, ACappedTransferLeavesItsShareToTheOthers) {
  // Three 1 MB transfers behind a 50 GB/s port; one sender copies at only 5 GB/s. Max-min
  // fairness gives it 5 and the other two (50 - 5) / 2 = 22.5 each, not 50 / 3.
  const Topology t = fan_out(4, 50, RelationSharing::Fair);
  Network network(t, 1.0);
  for (int r = 1; r <= 3; ++r)
    EXPECT_FALSE(network.start(network.route(RankId(0), RankId(r)), 1'000'000, 0,
                               Switching::CutThrough, uint32_t(r), r == 3 ? 5.0 : 0.0));
  auto d = run_all(network);
  ASSERT_EQ(d.size(), 3u);
  const Picoseconds fast = std::llround(1e6 * 1000 / 22.5);
  EXPECT_EQ(d[1].first_hop_end, fast);
  EXPECT_EQ(d[2].first_hop_end, fast);
  EXPECT_EQ(d[3].first_hop_end, 200'000'000); // its cap binds throughout
}

TEST(FairShareTest, AFairLinkSharesItselfAmongItsTransfers) {
  // Two transfers on the same link of a fair relation share the link at once: 25 GB/s each
  // while both are on it. A third on another link of the port takes its share of the port.
  const Topology t = fan_out(3, 50, RelationSharing::Fair);
  Network network(t, 1.0);
  const auto route = network.route(RankId(0), RankId(1));
  EXPECT_FALSE(network.start(route, 1'000'000, 0, Switching::CutThrough, 1));
  EXPECT_FALSE(network.start(route, 1'000'000, 0, Switching::CutThrough, 2));
  auto d = run_all(network);
  EXPECT_EQ(d[1].times.start, 0);
  EXPECT_EQ(d[2].times.start, 0);
  EXPECT_EQ(d[1].times.arrival, 40'500'000);
  EXPECT_EQ(d[2].times.arrival, 40'500'000);
  // Busy time counts the link's time carrying anything, not each transfer's.
  EXPECT_EQ(network.usage()[0].busy, 40'000'000);
  EXPECT_EQ(network.usage()[0].bytes, 2'000'000);

  Network three(t, 1.0);
  EXPECT_FALSE(three.start(route, 1'000'000, 0, Switching::CutThrough, 1));
  EXPECT_FALSE(three.start(route, 1'000'000, 0, Switching::CutThrough, 2));
  EXPECT_FALSE(
      three.start(three.route(RankId(0), RankId(2)), 1'000'000, 0, Switching::CutThrough, 3));
  auto e = run_all(three);
  // The port's 50 GB/s over three transfers: all end at 60 us.
  for (uint32_t tag : {1u, 2u, 3u})
    EXPECT_EQ(e[tag].times.arrival, 60'500'000) << tag;
}

TEST(FairShareTest, OnlyTheChangedComponentIsSharedAgain) {
  // Two ports that share nothing: a transfer starting behind port 1 leaves the rate, and the
  // end, of the one behind port 0 as they were.
  TopologyDraft d;
  d.name = "two_ports";
  d.num_ranks = 4;
  for (int p = 0; p < 2; ++p) {
    d.links.push_back({RankId(2 * p), RankId(2 * p + 1), 1, Nanoseconds{0}, BytesPerNs{50}});
    d.relations.push_back({"port" + std::to_string(p),
                           {{RankId(2 * p), RankId(2 * p + 1)}},
                           1,
                           RelationSharing::Fair});
  }
  const Topology t = *Topology::create(d);
  Network network(t, 1.0);
  EXPECT_FALSE(
      network.start(network.route(RankId(0), RankId(1)), 1'000'000, 0, Switching::CutThrough, 1));
  std::vector<Delivery> delivered;
  network.advance(5'000'000, delivered);
  EXPECT_FALSE(network.start(network.route(RankId(2), RankId(3)), 1'000'000, 5'000'000,
                             Switching::CutThrough, 2));
  network.advance(kNever, delivered);
  std::erase_if(delivered, [](const Delivery &report) { return !report.arrived; });
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_EQ(delivered[0].tag, 1u);
  EXPECT_EQ(delivered[0].times.arrival, 20'000'000);
  EXPECT_EQ(delivered[1].times.arrival, 25'000'000);
}

RC_GTEST_PROP(FairShareProperty, ABatchEndsWhenFifoWouldAndSmallerEndsFirst, ()) {
  // Transfers that start together on distinct links of one port: the port is the bottleneck
  // under both policies and never idles, so the last arrival is the same (to the picosecond
  // per transfer, from rounding); under fair sharing a smaller transfer never ends later.
  const int n = *rc::gen::inRange(2, 8);
  const auto sizes = *rc::gen::container<std::vector<int64_t>>(
      size_t(n - 1),
      rc::gen::map(rc::gen::inRange(1, 5000), [](int k) { return int64_t(k) * 1000; }));
  const double gbps = *rc::gen::element(10.0, 25.0, 50.0, 100.0);
  Picoseconds last[2] = {0, 0};
  std::vector<Picoseconds> fair_end(sizes.size());
  for (RelationSharing sharing : {RelationSharing::Fifo, RelationSharing::Fair}) {
    const Topology t = fan_out(n, gbps, sharing);
    Network network(t, 1.0);
    std::vector<Delivery> delivered;
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto times = network.start(network.route(RankId(0), RankId(int(i) + 1)), sizes[i], 0,
                                 Switching::CutThrough, uint32_t(i));
      if (times)
        delivered.push_back({uint32_t(i), *times, times->arrival - 500'000});
    }
    network.advance(kNever, delivered);
    std::erase_if(delivered, [](const Delivery &report) { return !report.arrived; });
    RC_ASSERT(delivered.size() == sizes.size());
    for (const Delivery &d : delivered) {
      last[int(sharing)] = std::max(last[int(sharing)], d.times.arrival);
      if (sharing == RelationSharing::Fair)
        fair_end[d.tag] = d.first_hop_end;
    }
    int64_t bytes = 0;
    for (const LinkUsage &u : network.usage())
      bytes += u.bytes;
    RC_ASSERT(bytes == std::accumulate(sizes.begin(), sizes.end(), int64_t(0)));
  }
  RC_ASSERT(std::abs(last[0] - last[1]) <= Picoseconds(n));
  for (size_t i = 0; i < sizes.size(); ++i)
    for (size_t j = 0; j < sizes.size(); ++j)
      if (sizes[i] < sizes[j])
        RC_ASSERT(fair_end[i] <= fair_end[j]);
}

// Max-min fair rates of `flows` (each a link, and a cap; 0 for none) under the links' own
// bandwidths and the fair relations' rates, by plain progressive filling over every flow: the
// definition, recomputed from scratch, without the network's bookkeeping.
std::vector<double> max_min_rates(const Topology &t,
                                  const std::vector<std::pair<size_t, double>> &flows) {
  std::vector<double> rate(flows.size(), 0);
  std::vector<bool> frozen(flows.size(), false);
  std::vector<double> link_left(t.links().size());
  for (size_t l = 0; l < t.links().size(); ++l)
    link_left[l] = t.links()[l].bandwidth.value;
  std::vector<double> relation_left;
  for (const BandwidthRelation &r : t.relations()) {
    double unit = std::numeric_limits<double>::infinity();
    for (LinkId l : r.links)
      unit = std::min(unit, t.link(l).bandwidth.value / t.link(l).capacity);
    relation_left.push_back(unit * r.capacity);
  }
  auto in_relation = [&](size_t r, size_t link) {
    const auto &links = t.relations()[r].links;
    return std::find(links.begin(), links.end(), LinkId(int32_t(link))) != links.end();
  };
  for (size_t left = flows.size(); left > 0;) {
    // The next level: the smallest cap, link share or relation share among unfrozen flows.
    double level = std::numeric_limits<double>::infinity();
    std::vector<int> on_link(t.links().size(), 0), on_relation(t.relations().size(), 0);
    for (size_t f = 0; f < flows.size(); ++f)
      if (!frozen[f]) {
        ++on_link[flows[f].first];
        for (size_t r = 0; r < relation_left.size(); ++r)
          on_relation[r] += in_relation(r, flows[f].first);
        if (flows[f].second > 0)
          level = std::min(level, flows[f].second);
      }
    for (size_t l = 0; l < on_link.size(); ++l)
      if (on_link[l] > 0)
        level = std::min(level, link_left[l] / on_link[l]);
    for (size_t r = 0; r < on_relation.size(); ++r)
      if (on_relation[r] > 0)
        level = std::min(level, relation_left[r] / on_relation[r]);
    std::vector<size_t> freeze;
    for (size_t f = 0; f < flows.size(); ++f) {
      if (frozen[f])
        continue;
      const double slack = level * 1e-12;
      bool bound = (flows[f].second > 0 && flows[f].second <= level + slack) ||
                   link_left[flows[f].first] / on_link[flows[f].first] <= level + slack;
      for (size_t r = 0; r < relation_left.size(); ++r)
        bound = bound || (in_relation(r, flows[f].first) &&
                          relation_left[r] / on_relation[r] <= level + slack);
      if (bound)
        freeze.push_back(f);
    }
    for (size_t f : freeze) {
      frozen[f] = true;
      rate[f] = level;
      --left;
      link_left[flows[f].first] -= level;
      for (size_t r = 0; r < relation_left.size(); ++r)
        if (in_relation(r, flows[f].first))
          relation_left[r] -= level;
    }
  }
  return rate;
}

RC_GTEST_PROP(FairShareProperty, EndsAreThoseOfMaxMinRatesRecomputedFromScratch, ()) {
  // Random links behind random overlapping fair relations (every link in at least one), and
  // one-link transfers that start at random times, some with a cap: the network shares again
  // only where a change can move a rate, and must end every transfer when a fluid run that
  // recomputes every rate at every start and end does.
  const int n = *rc::gen::inRange(3, 6);
  TopologyDraft d;
  d.name = "random_ports";
  d.num_ranks = n;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      // A ring, so there are links at every size, and others at random.
      if (a != b && (b == (a + 1) % n || *rc::gen::inRange(0, 3) > 0))
        d.links.push_back({RankId(a), RankId(b), 1, Nanoseconds{0},
                           BytesPerNs{*rc::gen::element(10.0, 25.0, 50.0)}});
  std::vector<bool> covered(d.links.size(), false);
  const int relations = *rc::gen::inRange(1, 5);
  for (int r = 0; r < relations; ++r) {
    TopologyDraft::Relation rel{
        "rel" + std::to_string(r), {}, *rc::gen::inRange(1, 4), RelationSharing::Fair};
    for (size_t l = 0; l < d.links.size(); ++l)
      if (*rc::gen::inRange(0, 2) == 0) {
        rel.links.emplace_back(d.links[l].src, d.links[l].dst);
        covered[l] = true;
      }
    if (!rel.links.empty())
      d.relations.push_back(rel);
  }
  for (size_t l = 0; l < d.links.size(); ++l)
    if (!covered[l])
      d.relations.push_back({"self" + std::to_string(l),
                             {{d.links[l].src, d.links[l].dst}},
                             1,
                             RelationSharing::Fair});
  const Topology t = *Topology::create(d);

  struct Flow {
    size_t link = 0;
    int64_t bytes = 0;
    Picoseconds start = 0;
    double cap = 0;
  };
  const size_t count = *rc::gen::inRange<size_t>(1, 14);
  std::vector<Flow> flows;
  for (size_t i = 0; i < count; ++i)
    flows.push_back({*rc::gen::inRange<size_t>(0, t.links().size()),
                     int64_t(*rc::gen::inRange(1, 2000)) * 1000,
                     Picoseconds(*rc::gen::inRange(0, 40)) * 1'000'000,
                     *rc::gen::element(0.0, 0.0, 4.0, 12.0, 30.0)});
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return flows[a].start < flows[b].start; });

  Network network(t, 1.0);
  std::vector<Delivery> delivered;
  for (size_t i : order) {
    network.advance(flows[i].start, delivered);
    const Link &link = t.links()[flows[i].link];
    RC_ASSERT(!network.start(network.route(link.src, link.dst), flows[i].bytes, flows[i].start,
                             Switching::CutThrough, uint32_t(i), flows[i].cap));
  }
  network.advance(kNever, delivered);
  std::vector<Picoseconds> got(count, -1);
  for (const Delivery &report : delivered)
    if (report.arrived)
      got[report.tag] = report.times.arrival;

  // The reference: from one start or end to the next, every active flow at its max-min rate.
  std::vector<double> expected(count, -1), remaining(count);
  for (size_t i = 0; i < count; ++i)
    remaining[i] = double(flows[i].bytes);
  double now = 0;
  size_t next = 0, done = 0;
  std::vector<size_t> active;
  while (done < count) {
    while (next < count && double(flows[order[next]].start) <= now)
      active.push_back(order[next++]);
    std::vector<std::pair<size_t, double>> demand;
    for (size_t i : active)
      demand.emplace_back(flows[i].link, flows[i].cap);
    const std::vector<double> rate = max_min_rates(t, demand);
    double step = next < count ? double(flows[order[next]].start) - now
                               : std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < active.size(); ++k)
      step = std::min(step, remaining[active[k]] * 1000.0 / rate[k]);
    now += step;
    std::vector<size_t> still;
    for (size_t k = 0; k < active.size(); ++k) {
      remaining[active[k]] -= rate[k] * step / 1000.0;
      if (remaining[active[k]] <= 1e-6 * double(flows[active[k]].bytes)) {
        expected[active[k]] = now;
        ++done;
      } else {
        still.push_back(active[k]);
      }
    }
    active = still;
  }
  for (size_t i = 0; i < count; ++i) {
    RC_ASSERT(got[i] >= 0);
    RC_LOG() << "transfer " << i << ": network " << got[i] << " ps, reference " << expected[i]
             << " ps\n";
    RC_ASSERT(std::abs(double(got[i]) - expected[i]) <= 1000.0 + 1e-6 * expected[i]);
  }
}

TEST(FairShareTest, AlgorithmsRunOverFairRelationsInBothTimings) {
  // Rank 0 broadcasts one chunk to ranks 1 and 2 at once: with a fair port both arrive
  // together after 2 serializations; FIFO delivers one after 1 and the other after 2.
  auto bc = make_collective(CollectiveKind::Broadcast, 3, 1, 0);
  Algorithm a{
      "fan", {}, {{2, {{ChunkId(0), RankId(0), RankId(1)}, {ChunkId(0), RankId(0), RankId(2)}}}}};
  for (auto timing : {AlgorithmTiming::StepSynchronous, AlgorithmTiming::Dataflow}) {
    AlgorithmSimOptions o{timing, 1.0, true, Switching::CutThrough, {}};
    auto fair = simulate_algorithm(a, fan_out(3, 50, RelationSharing::Fair), *bc, 1'000'000, o);
    auto fifo = simulate_algorithm(a, fan_out(3, 50, RelationSharing::Fifo), *bc, 1'000'000, o);
    ASSERT_TRUE(fair && fifo);
    EXPECT_EQ(fair->completion, 40'500'000);
    EXPECT_EQ(fifo->completion, 40'500'000);
    ASSERT_EQ(fair->trace.size(), 2u);
    for (const TraceSpan &s : fair->trace)
      EXPECT_EQ(s.start + s.duration, 40'500'000);
    std::vector<Picoseconds> fifo_ends;
    for (const TraceSpan &s : fifo->trace)
      fifo_ends.push_back(s.start + s.duration);
    std::sort(fifo_ends.begin(), fifo_ends.end());
    EXPECT_EQ(fifo_ends, (std::vector<Picoseconds>{20'500'000, 40'500'000}));
    EXPECT_EQ(fair->total_link_bytes(), 2'000'000);
  }
}

// fully_connected(n) with each rank's out-links behind one port relation shared as `sharing`.
Topology ported_fully_connected(int n, RelationSharing sharing) {
  TopologyDraft d = fully_connected(n)->to_draft();
  for (int r = 0; r < n; ++r) {
    TopologyDraft::Relation port{"port" + std::to_string(r), {}, 1, sharing};
    for (const Link &l : d.links)
      if (l.src == RankId(r))
        port.links.emplace_back(l.src, l.dst);
    d.relations.push_back(port);
  }
  return *Topology::create(d);
}

TEST(FairShareTest, ProgramsRunOverFairRelations) {
  // Ring Allreduce uses one out-link per rank, so a fair port changes nothing; all-pairs
  // Allreduce sends to every peer at once and shares the port. Both policies end with the
  // Allreduce in every output and the same bytes on the wire.
  const int n = 4;
  auto ar = make_collective(CollectiveKind::Allreduce, n, n);
  ASSERT_TRUE(ar);
  for (const Program &p :
       {testing::ring_allreduce_program(n, 1), testing::allpairs_allreduce_program(n)}) {
    SCOPED_TRACE(p.name());
    ProgramSimOptions o;
    o.size_bytes = 4 << 20;
    o.collective = &*ar;
    o.in_place = !p.out_of_place();
    o.trace = true;
    auto fair = simulate_program(p, ported_fully_connected(n, RelationSharing::Fair), o);
    auto fifo = simulate_program(p, ported_fully_connected(n, RelationSharing::Fifo), o);
    ASSERT_TRUE(fair && fifo);
    EXPECT_FALSE(fair->deadlocked);
    EXPECT_FALSE(fifo->deadlocked);
    EXPECT_EQ(fair->outputs, fifo->outputs);
    for (const auto &rank : fair->outputs)
      for (const SymbolicSlot &slot : rank) {
        EXPECT_TRUE(slot.defined);
        EXPECT_EQ(slot.parts.size(), size_t(n));
      }
    EXPECT_EQ(fair->result.total_link_bytes(), fifo->result.total_link_bytes());
    if (p.name() == testing::ring_allreduce_program(n, 1).name()) {
      EXPECT_EQ(fair->result.completion, fifo->result.completion);
    }
  }
}

} // namespace
} // namespace syncoll::simulator
