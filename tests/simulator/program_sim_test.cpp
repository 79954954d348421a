// The program simulator against closed forms and against the verifier (docs/architecture.md,
// "Simulation"): both finish or both deadlock, and race-free programs end with the same buffer
// contents.
#include "model/topology_library.h"
#include "simulator/network.h"
#include "simulator/program_sim.h"
#include "testing/generators.h"
#include "testing/programs.h"
#include "verifier/detail/connections.h"
#include "verifier/detail/execution.h"
#include "verifier/detail/races.h"
#include "verifier/detail/symbolic.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::simulator {
namespace {

Topology ring_with(int n, double alpha, double bandwidth) {
  TopologyDraft d = ring(n)->to_draft();
  for (Link &l : d.links)
    l.alpha = Nanoseconds{alpha}, l.bandwidth = BytesPerNs{bandwidth};
  return *Topology::create(d);
}

RC_GTEST_PROP(ProgramSimProperty, RingAllreduceMatchesTheFormula, ()) {
  const int n = *rc::gen::inRange(2, 17);
  const double alpha = *rc::gen::inRange(0, 5000);
  const double bandwidth = *rc::gen::element(5.0, 10.0, 20.0, 25.0, 50.0, 100.0);
  // L/N below one pipeline iteration, so each step is one message per chunk.
  const int64_t per_chunk = 1000 * *rc::gen::inRange(1, 1000);
  const Program p = testing::ring_allreduce_program(n, 1);
  ProgramSimOptions o;
  o.size_bytes = per_chunk * n;
  auto sim = simulate_program(p, ring_with(n, alpha, bandwidth), o);
  RC_ASSERT(sim.has_value());
  RC_ASSERT(!sim->deadlocked);
  const Picoseconds hop = Picoseconds(alpha * 1000) + transfer_ps(per_chunk, bandwidth);
  RC_ASSERT(sim->result.completion == 2 * (n - 1) * hop);
  // Bytes conserved: each rank sends 2(N-1) chunks.
  RC_ASSERT(sim->result.total_link_bytes() == int64_t(n) * 2 * (n - 1) * per_chunk);
}

// The host's launch delays everything by itself; the executor's per-step cost adds at least one
// step's worth and at most one per step a thread block runs (2N-1 steps per pipeline iteration
// in ring Allreduce: the critical path runs through every step of some thread block, waiting on
// others in between).
RC_GTEST_PROP(ProgramSimProperty, LaunchAndStepOverheadAddWhatTheyCharge, ()) {
  const int n = *rc::gen::inRange(2, 9);
  const Program p = testing::ring_allreduce_program(n, 1);
  const Topology t = ring_with(n, 700, 25);
  ProgramSimOptions o;
  o.size_bytes = int64_t(1000) * *rc::gen::inRange(1, 4000);
  const auto plain = simulate_program(p, t, o);
  o.model.launch = *rc::gen::inRange(0, 50'000'000);
  const auto launched = simulate_program(p, t, o);
  RC_ASSERT(plain && launched && !launched->deadlocked);
  RC_ASSERT(launched->result.completion == plain->result.completion + o.model.launch);
  o.model.launch = 0;
  o.model.step_overhead = *rc::gen::inRange(1, 5'000'000);
  const auto interpreted = simulate_program(p, t, o);
  RC_ASSERT(interpreted && !interpreted->deadlocked);
  const Picoseconds extra = interpreted->result.completion - plain->result.completion;
  RC_LOG() << n << " ranks, " << o.size_bytes << " B, plain " << plain->result.completion
           << " ps, step " << o.model.step_overhead << " ps, extra " << extra << " ps\n";
  RC_ASSERT(extra >= o.model.step_overhead);
  RC_ASSERT(extra <= (2 * n - 1) * interpreted->iterations * o.model.step_overhead);
}

TEST(ProgramSimTest, LastIterationMovesOnlyTheRemainder) {
  // 4 ranks of 3 MiB chunks: a full 2 MiB piece (Simple's tile), then half of one; the links
  // carry exactly each rank's 2(N-1) chunks.
  const Program p = testing::ring_allreduce_program(4, 1);
  ProgramSimOptions o;
  o.size_bytes = 4 * (int64_t(3) << 20);
  auto sim = simulate_program(p, ring_with(4, 1000, 20), o);
  ASSERT_TRUE(sim && !sim->deadlocked);
  EXPECT_EQ(sim->iterations, 2);
  EXPECT_EQ(sim->result.total_link_bytes(), int64_t(4) * 2 * 3 * (int64_t(3) << 20));
}

TEST(ProgramSimTest, ProtocolEfficiencyAndPipelining) {
  const Program p = testing::ring_allreduce_program(4, 1);
  const Topology t = ring_with(4, 1000, 20);
  ProgramSimOptions o;
  o.size_bytes = 64 << 20; // 16 MiB chunks: 8 pipeline iterations of 2 MiB
  auto simple = simulate_program(p, t, o);
  o.protocol = Protocol::LL;
  auto ll = simulate_program(p, t, o);
  ASSERT_TRUE(simple && ll);
  EXPECT_EQ(simple->iterations, 8);
  EXPECT_FALSE(simple->deadlocked);
  // LL carries half the payload per byte on the wire: slower for large messages.
  EXPECT_GT(ll->result.completion, simple->result.completion);
  EXPECT_GT(simple->result.busbw_gbps, 0);
  EXPECT_LE(simple->result.busbw_gbps, 20.0 * 1.0001);
}

TEST(ProgramSimTest, ReportsDeadlockOfTheHeadToHeadScenario) {
  // Both ranks send a cnt=3 step before receiving: small messages move it in one transfer, large
  // ones in three, of which only two fit a Simple FIFO (scenario D3 of the reference).
  ProgramDraft d;
  d.name = "d3";
  d.collective = "allgather";
  d.num_ranks = 2;
  d.chunks_per_loop = 6;
  for (int r = 0; r < 2; ++r) {
    ThreadBlock tb;
    tb.id = TbId(0);
    tb.send_peer = RankId(1 - r);
    tb.recv_peer = RankId(1 - r);
    tb.channel = ChannelId(0);
    Instruction s;
    s.op = OpType::Send;
    s.src = {BufferKind::Input, 0};
    s.dst = {BufferKind::Output, 0};
    s.count = 3;
    Instruction rv = s;
    rv.op = OpType::Recv;
    rv.declared_index = 1;
    tb.steps = {s, rv};
    d.ranks.push_back({RankId(r), 3, 6, 0, {tb}});
  }
  const Program p = *Program::create(d);
  ProgramSimOptions o;
  o.size_bytes = 6 << 10; // small: one transfer per step
  auto small = simulate_program(p, *fully_connected(2), o);
  o.size_bytes = 12 << 20; // large: chunks fill Simple's 2 MiB tile, three transfers, two fit
  auto large = simulate_program(p, *fully_connected(2), o);
  ASSERT_TRUE(small && large);
  EXPECT_FALSE(small->deadlocked);
  EXPECT_TRUE(large->deadlocked);
}

RC_GTEST_PROP(ProgramSimProperty, AgreesWithTheVerifier, ()) {
  const Program p = *testing::gen_connected_program(false);
  const Topology t = *fully_connected(p.num_ranks());
  auto collective = make_collective(CollectiveKind::Allreduce, p.num_ranks(), 4);
  const auto cm = verifier::detail::map_connections(p);
  // Both aliasing modes: in place, both executors resolve slots through the collective's alias.
  for (bool in_place : {false, true}) {
    verifier::detail::SymbolicMemory cells(p, &*collective, in_place);
    const bool race_free =
        verifier::detail::find_races(p, cm, cells, verifier::RaceMode::Strict, "", 1).empty();
    // Small messages: one transfer per step, one iteration. Large: split, two iterations.
    for (bool large : {false, true}) {
      ProgramSimOptions o;
      o.size_bytes = large ? int64_t(4) * 2 * o.model.iteration_bytes[0] : 4096;
      o.collective = &*collective;
      o.in_place = in_place;
      auto sim = simulate_program(p, t, o);
      RC_ASSERT(sim.has_value());
      verifier::detail::SymbolicMemory memory(p, &*collective, in_place);
      auto ver = verifier::detail::execute(p, cm, {2, large ? 1 : kMaxStepCount, sim->iterations},
                                           &memory);
      RC_TAG(ver.completed ? "finishes" : "deadlocks");
      RC_ASSERT(sim->deadlocked == !ver.completed);
      if (!ver.completed || !race_free)
        continue;
      for (const RankProgram &rp : p.ranks())
        for (size_t k = 0; k < sim->outputs[rp.rank.index()].size(); ++k) {
          const auto v = memory.read(rp.rank, BufferKind::Output, int(k));
          const SymbolicSlot &s = sim->outputs[rp.rank.index()][k];
          RC_ASSERT(s.defined == v.defined);
          RC_ASSERT(s.parts == v.parts);
        }
    }
  }
}

} // namespace
} // namespace syncoll::simulator
