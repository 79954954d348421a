// Known failure modes of MSCCL programs (deadlocks D1-D6, races
// R1-R6, semantic errors M1-M3): each must be caught with the right kind of counterexample, and
// its fixed variant must pass.
#include "tests/verifier/program_builder.h"
#include "verifier/verify.h"

#include <gtest/gtest.h>

namespace syncoll::verifier {
namespace {

using testing::Gpu;
using testing::make_program;
using testing::St;
using testing::Tb;

const Verdict &check(const Report &r, Property p) {
  return r.verdict(p);
}

Report run(const Program &p, VerifyOptions options = {}) {
  Report r = verify(p, options);
  SCOPED_TRACE(r.to_text());
  return r;
}

void expect_all_hold(const Program &p, VerifyOptions options = {}) {
  Report r = verify(p, options);
  EXPECT_TRUE(r.all_hold()) << r.to_text();
}

const DeadlockCounterexample &deadlock_of(const Report &r) {
  const Verdict &v = check(r, Property::DeadlockFreedom);
  EXPECT_EQ(v.kind, VerdictKind::Violated) << r.to_text();
  static const DeadlockCounterexample kNone;
  auto *ce = std::get_if<DeadlockCounterexample>(&v.counterexample);
  return ce ? *ce : kNone;
}

const std::vector<RaceCounterexample> &races_of(const Report &r) {
  const Verdict &v = check(r, Property::RaceFreedom);
  EXPECT_EQ(v.kind, VerdictKind::Violated) << r.to_text();
  static const std::vector<RaceCounterexample> kNone;
  auto *ce = std::get_if<std::vector<RaceCounterexample>>(&v.counterexample);
  return ce ? *ce : kNone;
}

bool has_issue(const Report &r, Property p, const std::string &code) {
  auto *issues = std::get_if<std::vector<StructuralIssue>>(&check(r, p).counterexample);
  if (!issues)
    return false;
  for (const auto &i : *issues)
    if (i.code == code)
      return true;
  return false;
}

// --- Deadlocks -------------------------------------------------------------------------------

Program d1(bool fixed) {
  std::vector<St> r0 = {{"cpy", "i0", "o0"}, {"r", "i0", "o1"}, {"s", "i0", "o0"}};
  if (fixed)
    r0 = {{"cpy", "i0", "o0"}, {"s", "i0", "o0"}, {"r", "i0", "o1"}};
  return make_program(
      "allgather", 2, false, true,
      {{0, 1, 2, 0, {{0, 1, 1, 0, r0}}},
       {1, 1, 2, 0, {{0, 0, 0, 0, {{"cpy", "i0", "o1"}, {"r", "i0", "o0"}, {"s", "i0", "o1"}}}}}});
}

TEST(ScenarioTest, D1HeadToHeadReceive) {
  Report r = run(d1(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  // Check that the counterexample is the two-rank wait-for cycle on the first receives.
  ASSERT_EQ(ce.cycle.size(), 2u);
  EXPECT_FALSE(ce.lost_wakeup);
  EXPECT_EQ(ce.cycle[0].waiter.step, 1);
  EXPECT_NE(ce.cycle[0].reason.find("FIFO is empty"), std::string::npos);
  EXPECT_NE(ce.cycle[0].waiter.rank, ce.cycle[1].waiter.rank);
  expect_all_hold(d1(true));
}

Program d2(bool fixed) {
  std::vector<Gpu> gpus;
  for (int r = 0; r < 2; ++r) {
    St send{"s", "i0", "o0"};
    if (!fixed)
      send.depid = 1, send.deps = 0;
    const std::string other = "o" + std::to_string(1 - r), own = "o" + std::to_string(r);
    static std::string names[4];
    names[2 * r] = other, names[2 * r + 1] = own;
    gpus.push_back({r,
                    1,
                    2,
                    0,
                    {{0, 1 - r, -1, 0, {send}},
                     {1, -1, 1 - r, 0, {{"r", "i0", names[2 * r].c_str(), 1, -1, -1, 1}}},
                     {2, -1, -1, 0, {{"cpy", "i0", names[2 * r + 1].c_str()}}}}});
  }
  return make_program("allgather", 2, false, true, gpus);
}

TEST(ScenarioTest, D2CycleThroughDependencyAndMessage) {
  Report r = run(d2(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  // Check that the cycle alternates a dependency wait and a receive across both ranks.
  ASSERT_EQ(ce.cycle.size(), 4u);
  int dependency_waits = 0;
  for (const Wait &w : ce.cycle)
    dependency_waits += w.reason.find("to publish") != std::string::npos;
  EXPECT_EQ(dependency_waits, 2);
  expect_all_hold(d2(true));
}

Program d3(bool fixed, Protocol proto = Protocol::Simple) {
  std::vector<St> r1 = {{"cpy", "i0", "o3", 3}, {"s", "i0", "o3"}, {"s", "i1", "o4"},
                        {"s", "i2", "o5"},      {"r", "i0", "o0"}, {"r", "i0", "o1"},
                        {"r", "i0", "o2"}};
  if (fixed)
    r1 = {{"cpy", "i0", "o3", 3}, {"r", "i0", "o0"}, {"r", "i0", "o1"}, {"r", "i0", "o2"},
          {"s", "i0", "o3"},      {"s", "i1", "o4"}, {"s", "i2", "o5"}};
  return make_program("allgather", 6, false, true,
                      {{0,
                        3,
                        6,
                        0,
                        {{0,
                          1,
                          1,
                          0,
                          {{"cpy", "i0", "o0", 3},
                           {"s", "i0", "o0"},
                           {"s", "i1", "o1"},
                           {"s", "i2", "o2"},
                           {"r", "i0", "o3"},
                           {"r", "i0", "o4"},
                           {"r", "i0", "o5"}}}}},
                       {1, 3, 6, 0, {{0, 0, 0, 0, r1}}}},
                      proto);
}

TEST(ScenarioTest, D3FifoCapacity) {
  Report r = run(d3(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  // Check that both ranks block on their third send into a full Simple FIFO.
  ASSERT_EQ(ce.cycle.size(), 2u);
  for (const Wait &w : ce.cycle) {
    EXPECT_EQ(w.waiter.step, 3);
    EXPECT_NE(w.reason.find("FIFO is full (2 messages)"), std::string::npos);
  }
  // LL holds 8 messages: the same shape is fine.
  expect_all_hold(d3(false, Protocol::LL));
  VerifyOptions as_ll;
  as_ll.protocol = Protocol::LL;
  expect_all_hold(d3(false), as_ll);
  expect_all_hold(d3(true));
}

TEST(ScenarioTest, D3SizeDependentCountSplitting) {
  auto make = [](bool fixed) {
    std::vector<St> r1 = {{"cpy", "i0", "o3", 3}, {"s", "i0", "o3", 3}, {"r", "i0", "o0", 3}};
    if (fixed)
      r1 = {{"cpy", "i0", "o3", 3}, {"r", "i0", "o0", 3}, {"s", "i0", "o3", 3}};
    return make_program(
        "allgather", 6, false, true,
        {{0,
          3,
          6,
          0,
          {{0, 1, 1, 0, {{"cpy", "i0", "o0", 3}, {"s", "i0", "o0", 3}, {"r", "i0", "o3", 3}}}}},
         {1, 3, 6, 0, {{0, 0, 0, 0, r1}}}});
  };
  Report r = run(make(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  // Fine for small messages (one transfer per step); three transfers each for large ones.
  EXPECT_NE(ce.regime.find("large messages"), std::string::npos);
  EXPECT_NE(ce.cycle.at(0).reason.find("message 3/3"), std::string::npos);
  expect_all_hold(make(true));
}

Program d4(bool fixed) {
  std::vector<Gpu> gpus;
  static const char *own[] = {"o0", "o1", "o2"};
  for (int r = 0; r < 3; ++r) {
    const int next = (r + 1) % 3, prev = (r + 2) % 3;
    std::vector<St> steps = {{"cpy", "i0", own[r]}};
    if (fixed)
      steps.push_back({"s", "i0", "o0"});
    steps.push_back({"rcs", "i0", own[prev]});
    steps.push_back({fixed ? "r" : "rcs", "i0", own[next]});
    gpus.push_back({r, 1, 3, 0, {{0, next, prev, 0, steps}}});
  }
  return make_program("allgather", 3, false, true, gpus);
}

TEST(ScenarioTest, D4FusedOperationRing) {
  Report r = run(d4(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  ASSERT_EQ(ce.cycle.size(), 3u);
  for (const Wait &w : ce.cycle)
    EXPECT_NE(w.reason.find("receives from"), std::string::npos);
  expect_all_hold(d4(true));
}

Program d5(bool fixed) {
  return make_program("allreduce", 1, false, true,
                      {{0,
                        1,
                        1,
                        1,
                        {{0, -1, -1, 0, {{"cpy", "i0", "s0", 1, -1, -1, fixed ? 1 : 0}}},
                         {1, -1, -1, 0, {{"cpy", "s0", "o0", 1, 0, 0}}}}}});
}

TEST(ScenarioTest, D5LostWakeUp) {
  Report r = run(d5(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  EXPECT_TRUE(ce.lost_wakeup);
  ASSERT_EQ(ce.cycle.size(), 1u);
  EXPECT_NE(ce.cycle[0].reason.find("has finished all its iterations"), std::string::npos);
  EXPECT_TRUE(has_issue(r, Property::Structure, "dep-unpublished"));
  expect_all_hold(d5(true));
}

TEST(ScenarioTest, D5NopWithoutDependencyShiftsFlags) {
  Program p =
      make_program("allreduce", 1, false, true,
                   {{0,
                     1,
                     1,
                     1,
                     {{0, -1, -1, 0, {{"nop", "i0", "i0", 0}, {"cpy", "i0", "s0", 1, -1, -1, 1}}},
                      {1, -1, -1, 0, {{"cpy", "s0", "o0", 1, 0, 1}}}}}});
  Report r = run(p);
  EXPECT_TRUE(has_issue(r, Property::Structure, "nop-without-dep"));
}

Program d6(bool fixed) {
  auto dep = [&](int tb) { return fixed ? -1 : tb; };
  return make_program(
      "allreduce", 2, false, true,
      {{0,
        2,
        2,
        2,
        {{0,
          -1,
          -1,
          0,
          {{"cpy", "i0", "s0", 1, dep(1), fixed ? -1 : 1}, {"cpy", "s0", "o0", 1, -1, -1, 1}}},
         {1,
          -1,
          -1,
          0,
          {{"cpy", "i1", "s1", 1, dep(0), fixed ? -1 : 1}, {"cpy", "s1", "o1", 1, -1, -1, 1}}}}}});
}

TEST(ScenarioTest, D6IntraRankCycleThroughProgramOrder) {
  Report r = run(d6(false));
  const DeadlockCounterexample &ce = deadlock_of(r);
  ASSERT_EQ(ce.cycle.size(), 2u);
  EXPECT_EQ(ce.cycle[0].waiter.rank, ce.cycle[1].waiter.rank);
  EXPECT_NE(ce.cycle[0].reason.find("to publish step 1"), std::string::npos);
  expect_all_hold(d6(true));
}

// --- Races -----------------------------------------------------------------------------------

Program r1(bool fixed) {
  const int hd = fixed ? 1 : 0, dep = fixed ? 0 : -1, deps = fixed ? 0 : -1;
  return make_program(
      "broadcast", 1, false, true,
      {{0,
        1,
        1,
        1,
        {{0, -1, 1, 0, {{"r", "i0", "s0", 1, -1, -1, hd}}},
         {1, 2, -1, 0, {{"s", "s0", "o0", 1, dep, deps}}},
         {2, -1, -1, 0, {{"cpy", "s0", "o0", 1, dep, deps}}}}},
       {1, 1, 1, 0, {{0, 0, -1, 0, {{"s", "i0", "o0"}}}, {1, -1, -1, 0, {{"cpy", "i0", "o0"}}}}},
       {2, 1, 1, 0, {{0, -1, 0, 0, {{"r", "i0", "o0"}}}}}});
}

TEST(ScenarioTest, R1ReadAfterWriteAcrossThreadBlocks) {
  VerifyOptions root1;
  root1.root = 1;
  Report r = run(r1(false), root1);
  const auto &races = races_of(r);
  ASSERT_FALSE(races.empty());
  // Check that the pair is the receive writing s[0] and a thread block reading it.
  EXPECT_EQ(races[0].first.step.rank, RankId(0));
  EXPECT_TRUE(races[0].first.writes || races[0].second.writes);
  EXPECT_EQ(races[0].first.buffer, BufferKind::Scratch);
  EXPECT_NE(races[0].why.find("no chain of program order and dependency edges"), std::string::npos);
  expect_all_hold(r1(true), root1);
}

Program r2(bool fixed) {
  std::vector<Tb> rank0;
  if (fixed)
    rank0 = {
        {0, 1, 1, 0, {{"cpy", "i0", "o0"}, {"s", "i0", "o0", 1, -1, -1, 1}, {"r", "i0", "o1"}}},
        {1, -1, -1, 0, {{"cpy", "s0", "i0", 1, 0, 1}}}};
  else
    rank0 = {{0, 1, 1, 0, {{"s", "i0", "o0"}, {"r", "i0", "o1"}}},
             {1, -1, -1, 0, {{"cpy", "i0", "o0"}}},
             {2, -1, -1, 0, {{"cpy", "s0", "i0"}}}};
  return make_program("allgather", 2, false, true,
                      {{0, 1, 2, 1, rank0},
                       {1,
                        1,
                        2,
                        0,
                        {{0, 0, 0, 0, {{"r", "i0", "o0"}, {"s", "i0", "o1"}}},
                         {1, -1, -1, 0, {{"cpy", "i0", "o1"}}}}}});
}

TEST(ScenarioTest, R2WriteAfterRead) {
  Report r = run(r2(false));
  const auto &races = races_of(r);
  ASSERT_FALSE(races.empty());
  bool send_vs_overwrite = false;
  for (const auto &race : races)
    send_vs_overwrite =
        send_vs_overwrite || (race.first.op == OpType::Send && race.second.op == OpType::Copy &&
                              race.second.writes && race.second.buffer == BufferKind::Input);
  EXPECT_TRUE(send_vs_overwrite);
  expect_all_hold(r2(true));
}

Program r3(bool in_place) {
  return make_program("alltoall", 2, in_place, !in_place,
                      {{0,
                        2,
                        2,
                        0,
                        {{0, -1, 1, 0, {{"r", "i0", "o1"}}},
                         {1, 1, -1, 0, {{"s", "i1", "o0"}}},
                         {2, -1, -1, 0, {{"cpy", "i0", "o0"}}}}},
                       {1,
                        2,
                        2,
                        0,
                        {{0, -1, 0, 0, {{"r", "i0", "o0"}}},
                         {1, 0, -1, 0, {{"s", "i0", "o1"}}},
                         {2, -1, -1, 0, {{"cpy", "i1", "o1"}}}}}});
}

TEST(ScenarioTest, R3AliasingInPlace) {
  Report r = run(r3(true));
  const auto &races = races_of(r);
  ASSERT_FALSE(races.empty());
  // Check that the race is between o[1] and i[1], which are one memory in place.
  EXPECT_NE(races[0].first.buffer, races[0].second.buffer);
  EXPECT_NE(races[0].why.find("same memory in place"), std::string::npos);
  expect_all_hold(r3(false));
}

Program r4(bool fixed) {
  return make_program(
      "allreduce", 1, false, true,
      {{0,
        1,
        1,
        2,
        {{0, -1, -1, 0, {{"re", "s0", "i0", 1, -1, -1, fixed ? 1 : 0}}},
         {1, -1, -1, 0, {{"re", "s1", "i0", 1, fixed ? 0 : -1, fixed ? 0 : -1}}}}}});
}

TEST(ScenarioTest, R4LostUpdateOnReduce) {
  Report r = run(r4(false));
  const auto &races = races_of(r);
  ASSERT_FALSE(races.empty());
  EXPECT_TRUE(races[0].first.writes && races[0].second.writes);
  Report fixed = run(r4(true));
  EXPECT_EQ(check(fixed, Property::RaceFreedom).kind, VerdictKind::Holds) << fixed.to_text();
}

Program r5(bool fixed) {
  return make_program(
      "alltoall", 2, false, true,
      {{0,
        2,
        2,
        0,
        {{0, 1, -1, 0, {{"s", "i1", "o0"}}}, {1, 1, -1, fixed ? 1 : 0, {{"s", "i1", "o0"}}}}},
       {1,
        2,
        2,
        0,
        {{0, -1, 0, 0, {{"r", "i0", "o0"}}}, {1, -1, 0, fixed ? 1 : 0, {{"r", "i0", "o0"}}}}}});
}

TEST(ScenarioTest, R5SharedConnection) {
  Report r = run(r5(false));
  EXPECT_TRUE(has_issue(r, Property::Structure, "conn-shared"));
  // Only the model checker is sound for such a program.
  EXPECT_EQ(check(r, Property::DeadlockFreedom).decided_by, "model checker");
  Report fixed = run(r5(true));
  EXPECT_EQ(check(fixed, Property::Structure).kind, VerdictKind::Holds) << fixed.to_text();
  EXPECT_EQ(check(fixed, Property::DeadlockFreedom).decided_by, "linear check");
}

Program r6() {
  return make_program("allgather", 2, false, true,
                      {{0,
                        1,
                        2,
                        1,
                        {{0, 1, -1, 0, {{"cpy", "i0", "o0"}, {"s", "i0", "o0"}}},
                         {1, -1, 1, 0, {{"r", "i0", "o1"}, {"cpy", "o0", "s0"}}}}},
                       {1,
                        1,
                        2,
                        0,
                        {{0, 0, 0, 0, {{"r", "i0", "o0"}, {"s", "i0", "o1"}}},
                         {1, -1, -1, 0, {{"cpy", "i0", "o1"}}}}}});
}

TEST(ScenarioTest, R6OrderedOnlyThroughMessages) {
  Report strict = run(r6());
  const auto &races = races_of(strict);
  ASSERT_EQ(races.size(), 1u);
  EXPECT_NE(races[0].why.find("ordered only through messages"), std::string::npos);
  VerifyOptions relaxed;
  relaxed.race_mode = RaceMode::Relaxed;
  expect_all_hold(r6(), relaxed);
}

// --- Semantic errors -------------------------------------------------------------------------

Program m1() {
  return make_program("alltoall", 2, false, true,
                      {{0, 2, 2, 0, {{0, 1, -1, 0, {{"s", "i0", "o0", 2}}}}},
                       {1, 2, 2, 0, {{0, -1, 0, 0, {{"r", "i0", "o0"}, {"r", "i0", "o1"}}}}}});
}

TEST(ScenarioTest, M1CountMismatch) {
  Report r = run(m1());
  EXPECT_TRUE(has_issue(r, Property::Structure, "message-count"));
  // One cnt=2 message for small sizes, so the second receive never gets data.
  const DeadlockCounterexample &ce = deadlock_of(r);
  EXPECT_NE(ce.regime.find("small messages"), std::string::npos);
}

// The same program run only for sizes whose chunks travel one per transfer: the cnt=2 send is
// then two transfers, one for each cnt=1 receive, and nothing is wrong with the pairing.
TEST(ScenarioTest, M1CountMismatchOutsideItsWindowIsNoIssue) {
  ProgramDraft d = m1().draft();
  d.min_bytes = int64_t(64) << 20; // chunks of 16 MiB: large messages only
  const Program large_only = *Program::create(d);
  Report r = run(large_only);
  EXPECT_EQ(r.verdict(Property::Structure).kind, VerdictKind::Holds) << r.to_text();
  EXPECT_EQ(r.verdict(Property::DeadlockFreedom).kind, VerdictKind::Holds) << r.to_text();
  ASSERT_EQ(r.coverage.regimes.size(), 1u);
  EXPECT_EQ(r.coverage.regimes[0].max_chunks, 1);
}

Program allreduce2(const char *rank1_rrc_src, const char *rank0_last) {
  return make_program(
      "allreduce", 2, true, false,
      {{0,
        2,
        2,
        0,
        {{0,
          1,
          1,
          0,
          {{"s", "i1", "i1"}, {"rrc", "i0", "i0"}, {"s", "i0", "i0"}, {rank0_last, "i1", "i1"}}}}},
       {1,
        2,
        2,
        0,
        {{0,
          0,
          0,
          0,
          {{"s", "i0", "i0"},
           {"rrc", rank1_rrc_src, "i1"},
           {"s", "i1", "i1"},
           {"r", "i0", "i0"}}}}}});
}

TEST(ScenarioTest, M2ReduceOperandIsTheLocalSource) {
  expect_all_hold(allreduce2("i1", "r"));
  // msccl-tools writes the sender's location as src; the runtime reduces with the local i[0].
  Report r = run(allreduce2("i0", "r"));
  const Verdict &v = check(r, Property::Postcondition);
  ASSERT_EQ(v.kind, VerdictKind::Violated) << r.to_text();
  const auto &slots = std::get<PostconditionCounterexample>(v.counterexample).slots;
  ASSERT_FALSE(slots.empty());
  EXPECT_EQ(slots[0].rank, RankId(0));
  EXPECT_EQ(slots[0].output_slot, 1);
  EXPECT_EQ(slots[0].expected, "chunk 1 from ranks {0,1}");
  EXPECT_EQ(slots[0].found, "chunk 0 from ranks {1} + chunk 1 from ranks {0}");
}

TEST(ScenarioTest, M3DoubleCountedContribution) {
  // Rank 0 reduces the finished chunk 1 into its own partial again instead of receiving it.
  Report r = run(allreduce2("i1", "rrc"));
  const Verdict &v = check(r, Property::Postcondition);
  ASSERT_EQ(v.kind, VerdictKind::Violated) << r.to_text();
  const auto &slots = std::get<PostconditionCounterexample>(v.counterexample).slots;
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].found, "chunk 1 from ranks {0,0,1}");
}

TEST(ScenarioTest, M3InPlaceAndOutOfPlaceBothChecked) {
  auto rank = [](int r) {
    const char *own = r == 0 ? "o0" : "o1", *other = r == 0 ? "o1" : "o0";
    return Gpu{r,
               2,
               2,
               0,
               {{0,
                 1 - r,
                 1 - r,
                 0,
                 {{"cpy", "i0", "o0", 2},
                  {"s", other, other},
                  {"rrc", own, own},
                  {"s", own, own},
                  {"r", other, other}}}}};
  };
  Program both = make_program("allreduce", 2, true, true, {rank(0), rank(1)});
  Report r = run(both);
  EXPECT_TRUE(r.all_hold()) << r.to_text();
  EXPECT_NE(check(r, Property::Postcondition).summary.find("in place and out of place"),
            std::string::npos);
  // Working on the input in place but reading the output out of place is right only in place.
  auto wrong = [](int k) {
    const char *own = k == 0 ? "i0" : "i1", *other = k == 0 ? "i1" : "i0";
    return Gpu{k,
               2,
               2,
               0,
               {{0,
                 1 - k,
                 1 - k,
                 0,
                 {{"s", other, other}, {"rrc", own, own}, {"s", own, own}, {"r", other, other}}}}};
  };
  Program in_place_only = make_program("allreduce", 2, true, true, {wrong(0), wrong(1)});
  Report w = run(in_place_only);
  const Verdict &v = check(w, Property::Postcondition);
  ASSERT_EQ(v.kind, VerdictKind::Violated) << w.to_text();
  EXPECT_EQ(std::get<PostconditionCounterexample>(v.counterexample).mode, "out of place");
}

} // namespace
} // namespace syncoll::verifier
