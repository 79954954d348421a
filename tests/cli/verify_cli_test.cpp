#include "tests/cli/run_cli.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

namespace syncoll::testing {
namespace {

TEST(VerifyCliTest, CorrectProgramExitsZero) {
  CliRun run = run_cli("verify examples/ir/ring_allreduce_4.xml");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("every property holds"), std::string::npos);
  EXPECT_NE(run.out.find("postcondition:    holds: allreduce with chunk factor 4, in place"),
            std::string::npos)
      << run.out;
}

TEST(VerifyCliTest, DeadlockExitsOneWithTheCycle) {
  CliRun run = run_cli("verify examples/ir/faulty/d1_head_to_head.xml");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("wait-for cycle:"), std::string::npos);
  EXPECT_NE(run.out.find("rank 0 tb 0 step 1 receives from rank 1 on channel 0, but the FIFO is "
                         "empty -> waits for rank 1 tb 0"),
            std::string::npos)
      << run.out;
}

TEST(VerifyCliTest, RaceInPlaceOnlyAndJson) {
  CliRun run = run_cli("verify examples/ir/faulty/r3_alltoall_in_place.xml --json");
  EXPECT_EQ(run.exit_code, 1);
  auto j = nlohmann::json::parse(run.out);
  EXPECT_FALSE(j["all_hold"].get<bool>());
  bool race_violated = false;
  for (const auto &p : j["properties"])
    race_violated =
        race_violated || (p["property"] == "race freedom" && p["verdict"] == "violated");
  EXPECT_TRUE(race_violated);
}

// An MSCCL++ execution plan: its verdicts, the wait a missing signal leaves unanswered, and the
// MSCCL-IR options refused for it in one line.
TEST(VerifyCliTest, MscclppPlansGetTheirVerdictsAndRefuseMscclIrOptions) {
  CliRun good = run_cli("verify examples/mscclpp/allreduce_allpairs_4gpu.json");
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("MSCCL++ plan 'allreduce_allpairs', 4 GPUs, every property holds"),
            std::string::npos)
      << good.out;
  CliRun bad = run_cli("verify examples/mscclpp/faulty/missing_signal.json");
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("deadlock freedom: violated: 3 thread block(s) never finish"),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("GPU 0 tb 0 blocked at op 5 (wait) on memory channel 1 from GPU 2: "
                         "signalled 1 time(s), this is wait 2"),
            std::string::npos)
      << bad.out;
  // A malformed plan: one located line, exit 2, nothing on stdout.
  std::ifstream in(std::string(SYNCOLL_SOURCE_DIR) +
                   "/examples/mscclpp/allreduce_allpairs_4gpu.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\"rre\""), 5, "\"rrx\"");
  const std::string malformed = ::testing::TempDir() + "malformed_plan.json";
  std::ofstream(malformed) << text;
  CliRun bad_input = run_cli("verify " + malformed);
  EXPECT_EQ(bad_input.exit_code, 2);
  EXPECT_TRUE(bad_input.out.empty()) << bad_input.out;
  EXPECT_EQ(std::count(bad_input.err.begin(), bad_input.err.end(), '\n'), 1) << bad_input.err;
  EXPECT_NE(bad_input.err.find(malformed + ":"), std::string::npos) << bad_input.err;
  EXPECT_NE(bad_input.err.find("unknown operation 'rrx'"), std::string::npos) << bad_input.err;
  CliRun option = run_cli("verify examples/mscclpp/allreduce_allpairs_4gpu.json --mode relaxed");
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_TRUE(option.out.empty());
  EXPECT_NE(option.err.find("--mode applies to MSCCL-IR programs"), std::string::npos)
      << option.err;
}

// Every DSL example of an MSCCL++ collective, and a composed plan, lowers to an MSCCL++ plan
// that verifies, written by `--format mscclpp` and read back by `verify`; a custom collective is
// refused.
TEST(VerifyCliTest, EveryDslExampleLowersToAnMscclppPlanThatVerifies) {
  for (const char *example :
       {"ring_allgather", "ring_allreduce", "allpairs_allreduce", "recursive_doubling_allgather",
        "hierarchical_allreduce", "two_step_alltoall"}) {
    const std::string plan = ::testing::TempDir() + example + ".plan.json";
    CliRun lowered =
        run_cli(fmt::format("lower --example {} -n 8 --format mscclpp -o {}", example, plan));
    ASSERT_EQ(lowered.exit_code, 0) << example << lowered.out << lowered.err;
    EXPECT_NE(lowered.out.find("MSCCL++ plan verified"), std::string::npos) << lowered.out;
    // The hierarchical examples' two nodes reach each other through port channels (a proxy's
    // put, signal and flush), GPUs of a node through memory channels.
    const bool across_nodes = std::string(example) == "hierarchical_allreduce" ||
                              std::string(example) == "two_step_alltoall";
    EXPECT_EQ(lowered.out.find(" 0 port channels") == std::string::npos, across_nodes)
        << example << lowered.out;
    if (across_nodes) {
      std::ifstream in(plan);
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      EXPECT_NE(text.find("\"pwsf\""), std::string::npos) << example;
      EXPECT_NE(text.find("\"port\""), std::string::npos) << example;
    }
    CliRun verified = run_cli("verify " + plan);
    EXPECT_EQ(verified.exit_code, 0) << example << verified.out;
  }
  // A composed plan across two DGX H100 nodes goes the same way.
  const std::string composed = ::testing::TempDir() + "composed.plan.json";
  CliRun compose =
      run_cli("compose -c allreduce --system dgx_h100 --nodes 2 --format mscclpp -o " + composed);
  ASSERT_EQ(compose.exit_code, 0) << compose.out << compose.err;
  EXPECT_EQ(run_cli("verify " + composed).exit_code, 0);
  CliRun ll = run_cli("lower --example ring_allreduce -n 4 --protocol LL --format mscclpp");
  EXPECT_EQ(ll.exit_code, 2);
  EXPECT_NE(ll.err.find("lower it with --protocol Simple"), std::string::npos) << ll.err;
  CliRun custom = run_cli("lower --example alltonext -n 4 --format mscclpp");
  EXPECT_EQ(custom.exit_code, 2);
  EXPECT_NE(custom.err.find("MSCCL++'s executor runs allreduce"), std::string::npos) << custom.err;
}

TEST(VerifyCliTest, OptionsAreChecked) {
  EXPECT_EQ(run_cli("verify examples/ir/ring_allreduce_4.xml --mode loose").exit_code, 2);
  EXPECT_EQ(run_cli("verify examples/ir/ring_allreduce_4.xml --protocol LL64").exit_code, 2);
  EXPECT_EQ(run_cli("verify examples/ir/ring_allreduce_4.xml --collective nosuch").exit_code, 2);
  // A budget below one is an impossible parameter; a program over a possible one is a verdict.
  EXPECT_EQ(run_cli("verify examples/ir/ring_allreduce_4.xml --sm-budget 0").exit_code, 2);
  CliRun budget = run_cli("verify examples/ir/dgx1_allgather_637.xml --sm-budget 1");
  EXPECT_EQ(budget.exit_code, 1);
  EXPECT_NE(budget.out.find("[sm-budget]"), std::string::npos);
  // A wrong collective is a wrong result, not bad input.
  CliRun wrong = run_cli("verify examples/ir/ring_allreduce_4.xml --collective allgather");
  EXPECT_EQ(wrong.exit_code, 1);
}

// A well-formed program beyond a runtime limit is a resources verdict (exit 1) naming the limit
// and where it is broken, not bad input; every other property is still decided.
TEST(VerifyCliTest, RuntimeLimitsAreResourcesVerdicts) {
  struct Case {
    std::string file, rule, message;
  };
  for (const Case &c :
       {Case{"nchannels_48.xml", "[channels]", "nchannels 48 exceeds the limit of 32"},
        Case{"nchannels_48.xml", "[channel-limit]",
             "rank 0 tb 0: channel 47 is beyond the runtime's 32 channels"},
        Case{"channel_33.xml", "[channel-limit]", "channel 33 is beyond the runtime's 32"},
        Case{"count_72.xml", "[count-limit]",
             "rank 0 tb 0 step 0: cnt 72 is beyond the "
             "executor's 71"}}) {
    CliRun run = run_cli("verify tests/data/limits/" + c.file);
    EXPECT_EQ(run.exit_code, 1) << c.file << run.err;
    EXPECT_NE(run.out.find("resources:        violated"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(c.rule), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(c.message), std::string::npos) << run.out;
  }
  // Beyond the channel limit, the 48-channel allgather is correct in every other respect.
  CliRun run = run_cli("verify tests/data/limits/nchannels_48.xml --json");
  ASSERT_EQ(run.exit_code, 1);
  const auto report = nlohmann::json::parse(run.out);
  for (const auto &p : report["properties"])
    EXPECT_EQ(p["verdict"], p["property"] == "resources" ? "violated" : "holds") << p;
}

// Old-runtime `custom` programs (GC3's AllToNext): structure, deadlock and races are decided
// without a collective; the postcondition is unknown (exit 3, never success) until --collective
// gives one, and then decided either way.
TEST(VerifyCliTest, CustomProgramsTakeTheirCollectiveFromAFile) {
  const std::string program = "verify examples/ir/old_runtime/alltonext_4.xml";
  CliRun alone = run_cli(program);
  EXPECT_EQ(alone.exit_code, 3) << alone.out << alone.err;
  EXPECT_NE(alone.out.find("deadlock freedom: holds"), std::string::npos) << alone.out;
  EXPECT_NE(alone.out.find("postcondition:    unknown: collective 'custom' has no standard "
                           "specification; give one with --collective"),
            std::string::npos)
      << alone.out;
  CliRun right = run_cli(program + " --collective examples/collectives/alltonext4.json");
  EXPECT_EQ(right.exit_code, 0) << right.out << right.err;
  EXPECT_NE(right.out.find("postcondition:    holds: alltonext4"), std::string::npos);
  CliRun wrong = run_cli(program + " --collective examples/collectives/alltoprev4.json");
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  EXPECT_NE(wrong.out.find("rank 2 output slot 0 (out of place): expected chunk 2, found chunk 0"),
            std::string::npos)
      << wrong.out;
}

// Head-to-head sends of 3 chunks: one transfer each while chunks are small, two up to 2 MiB
// chunks (both fit Simple's FIFO), three from 1 MiB + 1 B chunks (the third waits forever).
// The verdict covers the program's size window, or the one asked for, and says which regimes.
TEST(VerifyCliTest, DeadlocksOnlyInRegimesTheWindowReaches) {
  const std::string dir = "tests/data/windows/";
  CliRun unlimited = run_cli("verify " + dir + "head_to_head_cnt3.xml");
  EXPECT_EQ(unlimited.exit_code, 1) << unlimited.out;
  EXPECT_NE(unlimited.out.find("stuck (large messages (one transfer per chunk), from 6291462 B)"),
            std::string::npos)
      << unlimited.out;
  // maxBytes 6 MiB keeps every chunk at 1 MiB or below: no size reaches the deadlock.
  CliRun window = run_cli("verify " + dir + "head_to_head_cnt3_window.xml");
  EXPECT_EQ(window.exit_code, 0) << window.out;
  EXPECT_NE(window.out.find("message sizes 0 B .. 6291456 B (the program's minBytes and "
                            "maxBytes)"),
            std::string::npos)
      << window.out;
  EXPECT_NE(window.out.find("messages of up to 2 chunks per transfer, from 4194306 B"),
            std::string::npos);
  EXPECT_EQ(window.out.find("large messages"), std::string::npos);
  // The user's window narrows the program's, either way.
  EXPECT_EQ(run_cli("verify " + dir + "head_to_head_cnt3.xml --sizes 1KiB..4MiB").exit_code, 0);
  EXPECT_EQ(run_cli("verify " + dir + "head_to_head_cnt3.xml --sizes 7MiB..8MiB").exit_code, 1);
  EXPECT_EQ(run_cli("verify " + dir + "head_to_head_cnt3.xml --size 7MiB..").exit_code, 1);
  EXPECT_EQ(run_cli("verify " + dir + "head_to_head_cnt3_window.xml --sizes 7MiB..").exit_code, 0);
  EXPECT_EQ(run_cli("verify " + dir + "head_to_head_cnt3.xml --sizes 5MiB..1MiB").exit_code, 2);
  // JSON states the window and every regime checked.
  CliRun json = run_cli("verify " + dir + "head_to_head_cnt3_window.xml --json");
  const auto coverage = nlohmann::json::parse(json.out)["coverage"];
  EXPECT_EQ(coverage["min_bytes"], 0);
  EXPECT_EQ(coverage["max_bytes"], 6291456);
  ASSERT_EQ(coverage["regimes"].size(), 2u);
  EXPECT_EQ(coverage["regimes"][1]["max_chunks_per_transfer"], 2);
  EXPECT_EQ(coverage["regimes"][1]["from_bytes"], 4194306);
  // A regime is a distinct split of the program's own counts: a 72-chunk step splits into
  // ceil(72 / m) transfers, 15 distinct numbers for m = 71 .. 1.
  CliRun big = run_cli("verify tests/data/limits/count_72.xml --json");
  const auto big_report = nlohmann::json::parse(big.out);
  EXPECT_EQ(big_report["coverage"]["regimes"].size(), 15u);
}

TEST(VerifyCliTest, BadXmlIsBadInput) {
  CliRun run = run_cli("verify tests/data/malformed/ir_missing_cnt.xml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.substr(0, 42), "tests/data/malformed/ir_missing_cnt.xml:4:");
}

} // namespace
} // namespace syncoll::testing
