// The lowering pipeline: DSL errors, fusion and thread-block shapes, the example programs
// (lowered, verified in every aliasing mode they claim, simulated), golden XML.
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/invariant.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace syncoll::lowering {
namespace {

std::string op_sequence(const ThreadBlock &tb) {
  std::string out;
  for (const Instruction &in : tb.steps) {
    static const char *kNames[] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};
    out += std::string(out.empty() ? "" : " ") + kNames[static_cast<int>(in.op)];
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

} // namespace
} // namespace syncoll::lowering
