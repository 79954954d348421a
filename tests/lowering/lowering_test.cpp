// The lowering pipeline: DSL errors, fusion and thread-block shapes, the example programs
// (lowered, verified in every aliasing mode they claim, simulated), golden XML.
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/invariant.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "tests/support/golden.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace syncoll::lowering {
namespace {

std::string op_sequence(const ThreadBlock &tb) {
  std::string out;
  for (const Instruction &in : tb.steps) {
    out += std::string(out.empty() ? "" : " ") + std::string(op_type_name(in.op));
  }
  return out;
}

Lowered lower_example(const std::string &name, int ranks, bool in_place, int instances = 1) {
  const auto *example = examples::find_program_example(name);
  SYNCOLL_INVARIANT(example != nullptr, "unknown example");
  examples::ExampleParams params;
  params.ranks = ranks;
  params.options.in_place = in_place;
  auto dsl = example->build(params);
  SYNCOLL_INVARIANT(dsl.has_value(), "example failed to build");
  LowerOptions o;
  o.instances = instances;
  auto lowered = lower(*dsl, o);
  SYNCOLL_INVARIANT(lowered.has_value(), "example failed to lower");
  return std::move(*lowered);
}

TEST(LoweringTest, RingAllreduceIsOneFusedThreadBlockPerRank) {
  const Lowered l = lower_example("ring_allreduce", 4, true);
  ASSERT_TRUE(l.verified.has_value()) << l.verified.error().to_text();
  for (const RankProgram &rp : l.program.ranks()) {
    ASSERT_EQ(rp.thread_blocks.size(), 1u);
    EXPECT_EQ(op_sequence(rp.thread_blocks[0]), "s rrs rrs rrcs rcs rcs r");
  }
}

TEST(LoweringTest, EveryExampleLowersVerifiesAndSimulates) {
  for (const auto &example : examples::program_examples())
    for (bool in_place : example.in_place_modes)
      for (int ranks : {4, 8}) {
        SCOPED_TRACE(example.name + (in_place ? " in place " : " out of place ") +
                     std::to_string(ranks));
        const Lowered l = lower_example(example.name, ranks, in_place);
        ASSERT_TRUE(l.verified.has_value()) << l.verified.error().to_text();
        examples::ExampleParams params;
        params.ranks = ranks;
        auto dsl = example.build(params);
        ASSERT_TRUE(dsl);
        simulator::ProgramSimOptions so;
        so.size_bytes = 1 << 20;
        so.collective = &l.collective;
        so.in_place = in_place;
        auto sim = simulator::simulate_program(l.program, dsl->topology(), so);
        ASSERT_TRUE(sim) << sim.error().to_string();
        EXPECT_FALSE(sim->deadlocked);
        EXPECT_GT(sim->result.completion, 0);
      }
}

using testing::expect_golden;
using testing::slurp;

TEST(LoweringGoldenTest, RingAllreduceXml) {
  const Lowered l = lower_example("ring_allreduce", 4, true);
  ASSERT_TRUE(l.verified.has_value()) << l.verified.error().to_text();
  expect_golden(write_deployment_xml(*l.verified), "lowering_ring_allreduce_4.xml");
}

// All-pairs Allreduce: rank j's sum waits for its partials from other thread blocks, and the
// sends of the sum wait for the last reduction: cross-thread-block dependencies.
TEST(LoweringGoldenTest, CrossThreadBlockDependenciesXml) {
  const Lowered l = lower_example("allpairs_allreduce", 3, true);
  ASSERT_TRUE(l.verified.has_value()) << l.verified.error().to_text();
  const std::string xml = write_deployment_xml(*l.verified);
  EXPECT_NE(xml.find("hasdep=\"1\""), std::string::npos);
  expect_golden(xml, "lowering_allpairs_allreduce_3.xml");
  // What is written reads back as the same program.
  auto back = parse_mscclir_xml(xml, "golden.xml");
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->value, l.program);
}

Expected<DslProgram> allgather_on(Expected<Topology> t, int P, bool in_place = false) {
  SYNCOLL_TRY(c, make_collective(CollectiveKind::Allgather, P, 1));
  DslOptions o;
  o.in_place = in_place;
  return DslProgram::create("test", std::move(*t), std::move(c), o);
}

// Recursive doubling on 8 ranks: a send in round 3 waits for the receives of rounds 1 and 2,
// which sit in two other thread blocks: one wait rides on a nop in front of it.
TEST(LoweringGoldenTest, SeveralDependenciesGoThroughNopsXml) {
  const Lowered l = lower_example("recursive_doubling_allgather", 8, true);
  ASSERT_TRUE(l.verified.has_value()) << l.verified.error().to_text();
  const std::string xml = write_deployment_xml(*l.verified);
  EXPECT_NE(xml.find("type=\"nop\""), std::string::npos);
  expect_golden(xml, "lowering_recursive_doubling_allgather_8.xml");
}

TEST(DslTest, UninitializedSlotIsAnError) {
  auto p = allgather_on(ring(4), 4);
  ASSERT_TRUE(p);
  auto r = p->chunk(1, Buffer::output(), 0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("uninitialized"), std::string::npos)
      << r.error().to_string();
  auto s = p->chunk(1, Buffer::named("tmp"), 0);
  ASSERT_FALSE(s);
}

TEST(DslTest, StaleReferenceIsAnError) {
  auto p = allgather_on(ring(4), 4);
  ASSERT_TRUE(p);
  auto a = p->chunk(0, Buffer::input(), 0);
  ASSERT_TRUE(a);
  auto b = p->copy(*a, 1, Buffer::named("tmp"), 0);
  ASSERT_TRUE(b);
  auto c = p->chunk(1, Buffer::input(), 0);
  ASSERT_TRUE(c);
  ASSERT_TRUE(p->copy(*c, 1, Buffer::named("tmp"), 0)); // overwrites what b refers to
  auto use = p->copy(*b, 2, Buffer::output(), 0);
  ASSERT_FALSE(use);
  EXPECT_NE(use.error().to_string().find("stale"), std::string::npos) << use.error().to_string();
}

TEST(DslTest, CopyOverAMissingLinkIsAnError) {
  auto p = allgather_on(line(4), 4);
  ASSERT_TRUE(p);
  auto a = p->chunk(0, Buffer::input(), 0);
  ASSERT_TRUE(a);
  auto far = p->copy(*a, 2, Buffer::output(), 0);
  ASSERT_FALSE(far);
  EXPECT_NE(far.error().to_string().find("no such link"), std::string::npos);
  auto past = p->copy(*a, 1, Buffer::output(), 4);
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().to_string().find("runs past"), std::string::npos);
}

TEST(DslTest, InPlaceNeedsAnInPlaceForm) {
  auto c = make_collective(CollectiveKind::AllToNext, 4, 1);
  ASSERT_TRUE(c);
  DslOptions o;
  o.in_place = true;
  EXPECT_FALSE(DslProgram::create("x", *line(4), *c, o));
}

// A program that forgets a copy lowers, and the verifier says what is missing: the deployment
// XML writer cannot be reached with it.
TEST(LoweringTest, AWrongProgramIsCaughtByTheVerifier) {
  auto p = allgather_on(ring(3), 3, /*in_place=*/true);
  ASSERT_TRUE(p);
  for (int r = 0; r < 3; ++r) {
    auto c = p->chunk(r, Buffer::input(), 0);
    ASSERT_TRUE(c);
    ASSERT_TRUE(p->copy(*c, (r + 1) % 3, Buffer::output(), r)); // one hop only
  }
  auto l = lower(*p);
  ASSERT_TRUE(l);
  ASSERT_FALSE(l->verified.has_value());
  EXPECT_EQ(l->verified.error().verdict(verifier::Property::Postcondition).kind,
            verifier::VerdictKind::Violated);
}

TEST(LoweringTest, ConflictingThreadBlockHintsAreAnError) {
  auto p = allgather_on(ring(3), 3, /*in_place=*/true);
  ASSERT_TRUE(p);
  auto c0 = p->chunk(0, Buffer::input(), 0);
  auto c2 = p->chunk(0, Buffer::input(), 0);
  ASSERT_TRUE(c0 && c2);
  CopyOptions same_tb;
  same_tb.send_tb = 5;
  ASSERT_TRUE(p->copy(*c0, 1, Buffer::output(), 0, same_tb));
  ASSERT_TRUE(p->copy(*c2, 2, Buffer::output(), 0, same_tb)); // thread block 5 sends to 1 and 2
  auto l = lower(*p);
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().to_string().find("thread block 5"), std::string::npos)
      << l.error().to_string();
}

TEST(LoweringTest, InstancesReplicateOntoMoreChannelsAndChunks) {
  const Lowered one = lower_example("ring_allreduce", 4, true);
  const Lowered two = lower_example("ring_allreduce", 4, true, /*instances=*/2);
  ASSERT_TRUE(two.verified.has_value()) << two.verified.error().to_text();
  EXPECT_EQ(two.program.num_channels(), 2 * one.program.num_channels());
  EXPECT_EQ(two.program.chunks_per_loop(), 2 * one.program.chunks_per_loop());
  EXPECT_EQ(two.collective.chunk_factor(), 8);
  for (const RankProgram &rp : two.program.ranks())
    EXPECT_EQ(rp.thread_blocks.size(), 2u);
  // Aggregated (multi-chunk) steps are split when replicated, and still verify.
  const Lowered rd = lower_example("recursive_doubling_allgather", 8, true, /*instances=*/3);
  ASSERT_TRUE(rd.verified.has_value()) << rd.verified.error().to_text();
}

TEST(LoweringTest, ProtocolIsCarriedAndVerified) {
  const auto *example = examples::find_program_example("ring_allreduce");
  examples::ExampleParams params;
  params.ranks = 8;
  params.options.protocol = Protocol::LL128;
  auto dsl = example->build(params);
  ASSERT_TRUE(dsl);
  auto l = lower(*dsl);
  ASSERT_TRUE(l);
  ASSERT_TRUE(l->verified.has_value());
  EXPECT_EQ(l->program.protocol(), Protocol::LL128);
}

} // namespace
} // namespace syncoll::lowering
