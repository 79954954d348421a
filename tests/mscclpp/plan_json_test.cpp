// MSCCL++ execution plans read as the executor indexes them: every part of a plan in MSCCL++'s
// conventions reaches its value, and a malformed or inconsistent plan is one located error.
#include "mscclpp/mscclpp.h"

#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>

namespace syncoll::mscclpp {
namespace {

std::string data(const std::string &name) {
  return std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/mscclpp/" + name;
}

TEST(MscclppOpTableTest, OneRowPerOperationInOrderWithUniqueNames) {
  std::set<std::string_view> names;
  for (const OpTraits &t : all_op_traits()) {
    EXPECT_EQ(&op_traits(t.kind), &t);
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_EQ(find_op(t.name), &t);
    EXPECT_EQ(t.uses_channels, t.channel_kinds.front() != ChannelKind::None) << t.name;
  }
  EXPECT_EQ(find_op("putt"), nullptr);
}

TEST(MscclppPlanJsonTest, AnAllgatherOverMemoryChannelsReadsToItsParts) {
  auto plan = read_execution_plan_file(data("allgather_2gpu_memory.json"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->name, "allgather_2gpu_memory");
  EXPECT_EQ(plan->collective, CollectiveKind::Allgather);
  EXPECT_TRUE(plan->in_place);
  EXPECT_FALSE(plan->packets);
  EXPECT_EQ(plan->max_message_bytes, UINT64_MAX);
  ASSERT_EQ(plan->gpus.size(), 2u);
  const PlanGpu &g1 = plan->gpus[1];
  EXPECT_EQ(g1.output_chunks, 2);
  EXPECT_EQ(g1.channel_peer(ChannelKind::Memory, 0), 0);
  EXPECT_EQ(g1.channel_count(ChannelKind::Port), 0);
  ASSERT_EQ(g1.threadblocks.size(), 1u);
  const std::vector<PlanOp> &ops = g1.threadblocks[0].ops;
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0].kind, OpKind::RelaxedSignal);
  EXPECT_EQ(ops[2].kind, OpKind::Put);
  EXPECT_EQ(ops[2].src[0].local, PlanBuffer::Output);
  EXPECT_EQ(ops[2].src[0].index, 1);
  EXPECT_EQ(ops[2].dst[0].remote, 0);
  EXPECT_EQ(g1.remote_buffers[0].rank, 0);
  EXPECT_EQ(ops[4].kind, OpKind::Wait);
}

TEST(MscclppPlanJsonTest, PipelinesPortChannelsSemaphoresAndBarriersRead) {
  auto plan = read_execution_plan_file(data("reducescatter_2node_port_pipeline.json"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_TRUE(plan->double_scratch);
  EXPECT_EQ(plan->threads_per_block, 512);
  EXPECT_EQ(plan->min_message_bytes, 1024u);
  const PlanGpu &g0 = plan->gpus[0];
  EXPECT_EQ(g0.semaphores, std::vector<int>{0});
  const PlanOp &pipeline = g0.threadblocks[1].ops[0];
  EXPECT_EQ(pipeline.kind, OpKind::Pipeline);
  EXPECT_EQ(pipeline.pipeline_unit_bytes, 1 << 20);
  ASSERT_EQ(pipeline.ops.size(), 4u);
  EXPECT_EQ(pipeline.ops[0].semaphores, std::vector<int>{0});
  EXPECT_EQ(pipeline.ops[1].kind, OpKind::PutWithSignal);
  EXPECT_EQ(pipeline.ops[1].channel_kind, ChannelKind::Port);
  EXPECT_EQ(pipeline.ops[3].kind, OpKind::Flush);
  EXPECT_EQ(g0.threadblocks[1].ops[1].barrier_threadblocks, 2);
  EXPECT_EQ(g0.threadblocks[1].ops[2].src.size(), 2u);
  EXPECT_EQ(g0.output_chunks, 1);
}

// The allgather plan with one change, read back: its error, located at what the change broke.
std::string broken(const std::function<void(nlohmann::json &)> &change) {
  std::ifstream in(data("allgather_2gpu_memory.json"));
  nlohmann::json plan = nlohmann::json::parse(in);
  change(plan);
  auto read = read_execution_plan(plan.dump(1), "p.json");
  EXPECT_FALSE(read) << "the change was accepted";
  return read ? std::string() : read.error().to_string();
}

TEST(MscclppPlanJsonTest, MalformedAndInconsistentPlansAreOneLocatedError) {
  auto op = [](nlohmann::json &p, int k) -> nlohmann::json & {
    return p["gpus"][1]["threadblocks"][0]["ops"][k];
  };
  const std::pair<std::function<void(nlohmann::json &)>, std::string> cases[] = {
      {[&](nlohmann::json &p) { op(p, 2)["name"] = "putt"; }, "unknown operation 'putt'"},
      {[&](nlohmann::json &p) { op(p, 2)["channel_ids"] = {1}; },
       "thread block 0 has 1 memory channel(s); no channel 1"},
      {[&](nlohmann::json &p) { op(p, 2)["channel_type"] = "switch"; },
       "'put' runs on memory or port channels, not switch"},
      {[&](nlohmann::json &p) { op(p, 2)["dst_buff"][0]["index"] = 2; },
       "chunks 2 to 2 of GPU 0's buffer o, which has 2"},
      {[&](nlohmann::json &p) { op(p, 2)["src_buff"][0]["type"] = "x"; },
       "unknown buffer 'x' (i, o or s)"},
      {[&](nlohmann::json &p) { op(p, 2)["dst_buff"][0]["buffer_id"] = 3; },
       "thread block 0 has no remote buffer 3 through memory channels"},
      {[&](nlohmann::json &p) { p["gpus"][1]["id"] = 0; },
       "GPU 0 is listed at position 1: the executor reads GPU r from position r"},
      {[&](nlohmann::json &p) { p["gpus"][1]["channels"][0]["connected_to"] = {1}; },
       "GPU 1 has a channel to itself"},
      {[&](nlohmann::json &p) { p["collective"] = "gather"; },
       "collective 'gather' is none of MSCCL++'s"},
      {[&](nlohmann::json &p) {
         op(p, 0) = {{"name", "sem_release"}, {"semaphore_ids", {0}}};
       },
       "GPU 1 has 0 semaphore(s); no semaphore 0"},
      {[&](nlohmann::json &p) { p["protocol"] = "LL128"; }, "protocol 'LL128' (Simple or LL)"},
  };
  for (const auto &[change, message] : cases) {
    const std::string error = broken(change);
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_EQ(error.rfind("p.json:", 0), 0u) << error;
    EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << error;
  }
}

} // namespace
} // namespace syncoll::mscclpp
