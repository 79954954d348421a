// MSCCL++ plans verified: a correct plan in MSCCL++'s conventions holds on every property, and
// each known-bad plan is flagged for its own reason with a counterexample a person can read.
#include "mscclpp/mscclpp.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace syncoll::mscclpp {
namespace {

using verifier::Property;
using verifier::VerdictKind;

nlohmann::json plan_json(const std::string &name) {
  std::ifstream in(std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/mscclpp/" + name);
  return nlohmann::json::parse(in);
}

PlanReport verify_json(const nlohmann::json &plan) {
  auto read = read_execution_plan(plan.dump(1), "p.json");
  EXPECT_TRUE(read) << read.error().to_string();
  return read ? verify_plan(*read) : PlanReport{};
}

std::string first_line(const PlanReport &r, Property p) {
  const PlanVerdict &v = r.verdict(p);
  return v.counterexample.empty() ? std::string() : v.counterexample.front();
}

nlohmann::json &ops(nlohmann::json &plan, int gpu) {
  return plan["gpus"][gpu]["threadblocks"][0]["ops"];
}

// The correct corpus (tests/data/mscclpp/): plans in MSCCL++'s conventions, over memory and
// port channels, in and out of place, with pipelines, semaphores and barriers. No false alarm.
TEST(MscclppVerifyTest, EveryPlanOfTheCorrectCorpusHoldsOnEveryProperty) {
  int plans = 0;
  for (const auto &entry : std::filesystem::directory_iterator(std::string(SYNCOLL_SOURCE_DIR) +
                                                               "/tests/data/mscclpp")) {
    if (entry.path().extension() != ".json")
      continue;
    auto plan = read_execution_plan_file(entry.path().string());
    ASSERT_TRUE(plan) << plan.error().to_string();
    const PlanReport r = verify_plan(*plan);
    EXPECT_TRUE(r.all_hold()) << entry.path() << "\n" << r.to_text();
    ++plans;
  }
  EXPECT_GE(plans, 6);
}

TEST(MscclppVerifyTest, AnAllgatherInMscclppsConventionsHoldsOnEveryProperty) {
  const PlanReport r = verify_json(plan_json("allgather_2gpu_memory.json"));
  EXPECT_TRUE(r.all_hold()) << r.to_text();
  EXPECT_NE(r.coverage.find("allgather on 2 GPUs, protocol Simple, in place"), std::string::npos);
}

TEST(MscclppVerifyTest, AMissingSignalDeadlocksAtTheWaitItLeavesUnanswered) {
  nlohmann::json plan = plan_json("allgather_2gpu_memory.json");
  ops(plan, 0).erase(3); // GPU 0's signal after its put
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::DeadlockFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_EQ(first_line(r, Property::DeadlockFreedom),
            "GPU 1 tb 0 blocked at op 4 (wait) on memory channel 0 from GPU 0: signalled 1 "
            "time(s), this is wait 2");
  EXPECT_EQ(r.verdict(Property::Postcondition).kind, VerdictKind::Violated);
}

// The known-bad plans of examples/mscclpp/faulty/, each flagged for its own reason.
TEST(MscclppVerifyTest, EachKnownBadPlanIsFlaggedForItsOwnReason) {
  const struct {
    const char *file;
    Property property;
    const char *first_line;
  } cases[] = {
      {"missing_signal.json", Property::DeadlockFreedom,
       "GPU 0 tb 0 blocked at op 5 (wait) on memory channel 1 from GPU 2"},
      {"put_racing_local_read.json", Property::RaceFreedom,
       "GPU 0 tb 0 op 3 (put) writes GPU 1's o chunk 0 and GPU 1 tb 0 op 5 (put) reads GPU 1's o "
       "chunk 0"},
      {"scratch_reuse.json", Property::RaceFreedom,
       "GPU 0 tb 3 op 1 (copy) reads GPU 0's s chunk 4 and GPU 1 tb 0 op 4 (put) writes GPU 0's s "
       "chunk 4"},
      {"wrong_chunk.json", Property::Postcondition, "GPU 0 output chunk 2: expected"},
  };
  for (const auto &c : cases) {
    auto plan = read_execution_plan_file(std::string(SYNCOLL_SOURCE_DIR) +
                                         "/examples/mscclpp/faulty/" + c.file);
    ASSERT_TRUE(plan) << plan.error().to_string();
    const PlanReport r = verify_plan(*plan);
    EXPECT_EQ(r.verdict(c.property).kind, VerdictKind::Violated) << c.file << r.to_text();
    EXPECT_EQ(first_line(r, c.property).rfind(c.first_line, 0), 0u) << c.file << r.to_text();
  }
}

// Found by the plan campaign (plan_campaign_test.cpp): a wait naming one channel twice waits
// for two of its signals, so the channel it no longer names leaves its peer's signal unused
// and the wait short of one.
TEST(MscclppVerifyTest, AWaitNamingAChannelTwiceWaitsForTwoSignals) {
  nlohmann::json plan = plan_json("allreduce_allpairs_4gpu_memory.json");
  plan["gpus"][2]["threadblocks"][0]["ops"][5]["channel_ids"] = {1, 1, 2};
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::DeadlockFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(first_line(r, Property::DeadlockFreedom).find("GPU 2 tb 0 blocked at op 5 (wait)"),
            std::string::npos)
      << r.to_text();
}

TEST(MscclppVerifyTest, ARelaxedSignalAfterAPutLeavesTheWriteRacingTheKernelsEnd) {
  nlohmann::json plan = plan_json("allgather_2gpu_memory.json");
  ops(plan, 0)[3]["name"] = "rlxsignal"; // no fence: GPU 1 may finish before the data lands
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::RaceFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(first_line(r, Property::RaceFreedom)
                .find("GPU 0 tb 0 op 2 (put) writes GPU 1's o chunk 0 and GPU 1's user reading "
                      "output chunk 0 after its kernel"),
            std::string::npos)
      << r.to_text();
}

TEST(MscclppVerifyTest, APutBeforeThePeerIsReadyRacesItsBuffersLastUse) {
  nlohmann::json plan = plan_json("allgather_2gpu_memory.json");
  ops(plan, 0).erase(1); // GPU 0 no longer waits for GPU 1's "ready" before writing into it
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::RaceFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(r.to_text().find("GPU 1's last use of its buffers before its kernel (reads o chunk 0) "
                             "and GPU 0 tb 0 op 1 (put) writes GPU 1's o chunk 0: nothing "
                             "orders the read before the write"),
            std::string::npos)
      << r.to_text();
}

TEST(MscclppVerifyTest, AWrongChunkBreaksThePostconditionNamingTheSlot) {
  nlohmann::json plan = plan_json("allgather_2gpu_memory.json");
  ops(plan, 1)[2]["dst_buff"][0]["index"] = 0; // GPU 1 puts its chunk over GPU 0's own
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::Postcondition).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_EQ(first_line(r, Property::Postcondition),
            "GPU 0 output chunk 0: expected GPU 0 input chunk 0, found GPU 1 input chunk 0");
}

TEST(MscclppVerifyTest, APortPutsSourceRewrittenBeforeItsFlushIsARace) {
  nlohmann::json plan = plan_json("reducescatter_2node_port_pipeline.json");
  const PlanReport good = verify_json(plan);
  EXPECT_TRUE(good.all_hold()) << good.to_text();
  // Move GPU 0's flush after a copy that overwrites the put's source: the proxy may still read.
  nlohmann::json &body = plan["gpus"][0]["threadblocks"][1]["ops"][0]["ops"];
  nlohmann::json flush = body[3];
  body.erase(3);
  body.push_back({{"name", "copy"},
                  {"src_buff", {{{"type", "i"}, {"index", 0}, {"size", 1}}}},
                  {"dst_buff", {{{"type", "s"}, {"index", 0}, {"size", 1}}}}});
  body.push_back(flush);
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::RaceFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(r.to_text().find("the proxy may still be reading the put's source"), std::string::npos)
      << r.to_text();
}

// LL: a packet is read once its flag says it arrived, and only its own data is ordered by it.
TEST(MscclppVerifyTest, APacketNeverSentLeavesItsReaderWaiting) {
  nlohmann::json plan = plan_json("allreduce_packets_4gpu_memory.json");
  ops(plan, 0).erase(0); // GPU 0 never puts its packets
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::DeadlockFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(r.to_text().find("GPU 1 tb 0 blocked at op 1 (respkt) waits for packets in GPU 1's s "
                             "chunk 0: none written"),
            std::string::npos)
      << r.to_text();
}

TEST(MscclppVerifyTest, ANonPacketReadOfAPacketsChunkIsARace) {
  nlohmann::json plan = plan_json("allreduce_packets_4gpu_memory.json");
  // GPU 1 copies out a peer's packet chunk with a plain copy: no flag, no order.
  nlohmann::json copy = nlohmann::json::object();
  copy["name"] = "copy";
  copy["src_buff"] = nlohmann::json::array({{{"type", "s"}, {"index", 0}, {"size", 1}}});
  copy["dst_buff"] = nlohmann::json::array({{{"type", "s"}, {"index", 7}, {"size", 1}}});
  ops(plan, 1).insert(ops(plan, 1).begin() + 1, copy);
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::RaceFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(first_line(r, Property::RaceFreedom)
                .find("GPU 0 tb 0 op 0 (ppkt) writes GPU 1's s chunk 0 and GPU 1 tb 0 op 1 (copy) "
                      "reads GPU 1's s chunk 0"),
            std::string::npos)
      << r.to_text();
}

// NVLS: a multimem load reads the chunk on every GPU of the group, so it must follow every
// GPU's launch (its user's input written); MSCCL++ orders multimem operations with relaxed
// signals, which is enough here, but GPU 0 no longer waits for the others before loading.
TEST(MscclppVerifyTest, AnNvlsLoadBeforeThePeersStartedRaces) {
  nlohmann::json plan = plan_json("allreduce_nvls_4gpu_switch.json");
  for (int gpu = 0; gpu < 4; ++gpu)
    for (int k : {0, 1, 3, 4})
      ops(plan, gpu)[k]["name"] = k == 0 || k == 3 ? "rlxsignal" : "rlxwait";
  EXPECT_TRUE(verify_json(plan).all_hold()) << verify_json(plan).to_text();
  ops(plan, 0).erase(1);
  const PlanReport r = verify_json(plan);
  EXPECT_EQ(r.verdict(Property::RaceFreedom).kind, VerdictKind::Violated) << r.to_text();
  EXPECT_NE(r.to_text().find("GPU 1's user writing its input before its kernel (writes i chunk 0) "
                             "and GPU 0 tb 0 op 1 (glres) reads GPU 1's i chunk 0: nothing orders "
                             "it after the write"),
            std::string::npos)
      << r.to_text();
}

} // namespace
} // namespace syncoll::mscclpp
