#include "model/algorithm.h"
#include "model/json_document.h"
#include "model/topology_library.h"

#include <gtest/gtest.h>

namespace syncoll {
namespace {

Algorithm read_example(const std::string &name) {
  auto a = read_algorithm_file(std::string(SYNCOLL_SOURCE_DIR) + "/examples/algorithms/" + name);
  EXPECT_TRUE(a) << a.error().to_string();
  return *a;
}

bool has_kind(const AlgorithmCheck &c, AlgorithmViolation::Kind kind) {
  for (const auto &v : c.violations)
    if (v.kind == kind)
      return true;
  return false;
}

TEST(AlgorithmCheckTest, ExamplesHold) {
  auto ag = make_collective(CollectiveKind::Allgather, 8, 1);
  EXPECT_TRUE(check_algorithm(read_example("dgx1_allgather_ring.json"), dgx1(), *ag).holds());
  auto bc = make_collective(CollectiveKind::Broadcast, 4, 2, 0);
  EXPECT_TRUE(check_algorithm(read_example("line4_broadcast_s4r4.json"), *line(4), *bc).holds());
  auto ar = make_collective(CollectiveKind::Allreduce, 4, 4);
  EXPECT_TRUE(check_algorithm(read_example("ring4_allreduce.json"), *ring(4), *ar).holds());
}

TEST(AlgorithmCheckTest, MissingLinkAndAbsentSourceAreCaught) {
  auto bc = make_collective(CollectiveKind::Broadcast, 4, 1, 0);
  Algorithm a{"bad", {}, {{1, {{ChunkId(0), RankId(1), RankId(2), SendOp::Copy}}}}};
  auto check = check_algorithm(a, *line(4), *bc);
  // Check that rank 1 sending a chunk it does not hold yet is reported with its step.
  EXPECT_TRUE(has_kind(check, AlgorithmViolation::Kind::SourceLacksChunk));
  EXPECT_TRUE(has_kind(check, AlgorithmViolation::Kind::Postcondition));
  Algorithm b{"bad", {}, {{1, {{ChunkId(0), RankId(0), RankId(3), SendOp::Copy}}}}};
  EXPECT_TRUE(has_kind(check_algorithm(b, *line(4), *bc), AlgorithmViolation::Kind::MissingLink));
}

TEST(AlgorithmCheckTest, SendsInTheSameStepReadTheOldState) {
  // 0->1 and 1->2 in one step: rank 1 does not hold the chunk when the step starts.
  auto bc = make_collective(CollectiveKind::Broadcast, 3, 1, 0);
  Algorithm a{
      "chain", {}, {{2, {{ChunkId(0), RankId(0), RankId(1)}, {ChunkId(0), RankId(1), RankId(2)}}}}};
  EXPECT_TRUE(
      has_kind(check_algorithm(a, *line(3), *bc), AlgorithmViolation::Kind::SourceLacksChunk));
}

TEST(AlgorithmCheckTest, BandwidthIsScaledByRounds) {
  // Two chunks over the single NVLink 0->2 of the DGX-1 need two rounds.
  auto bc = make_collective(CollectiveKind::Broadcast, 8, 2, 0);
  Algorithm a{
      "two", {}, {{1, {{ChunkId(0), RankId(0), RankId(2)}, {ChunkId(1), RankId(0), RankId(2)}}}}};
  auto check = check_algorithm(a, dgx1(), *bc);
  EXPECT_TRUE(has_kind(check, AlgorithmViolation::Kind::LinkBandwidth));
  a.steps[0].rounds = 2;
  EXPECT_FALSE(has_kind(check_algorithm(a, dgx1(), *bc), AlgorithmViolation::Kind::LinkBandwidth));
  // The doubled NVLink 0->1 carries both in one round.
  Algorithm b{"double",
              {},
              {{1, {{ChunkId(0), RankId(0), RankId(1)}, {ChunkId(1), RankId(0), RankId(1)}}}}};
  EXPECT_FALSE(has_kind(check_algorithm(b, dgx1(), *bc), AlgorithmViolation::Kind::LinkBandwidth));
}

TEST(AlgorithmCheckTest, RelationsCapSwitchPorts) {
  // hub_and_spoke: rank 0 may send one chunk per round in total, to anyone.
  auto bc = make_collective(CollectiveKind::Broadcast, 3, 1, 0);
  Algorithm a{
      "fan", {}, {{1, {{ChunkId(0), RankId(0), RankId(1)}, {ChunkId(0), RankId(0), RankId(2)}}}}};
  EXPECT_TRUE(has_kind(check_algorithm(a, *hub_and_spoke(3), *bc),
                       AlgorithmViolation::Kind::RelationBandwidth));
  EXPECT_TRUE(check_algorithm(a, *fully_connected(3), *bc).holds());
}

TEST(AlgorithmCheckTest, DoubleCountedReductionIsCaught) {
  auto ar = make_collective(CollectiveKind::Allreduce, 4, 4);
  Algorithm a = read_example("ring4_allreduce.json");
  // Rank 1 reduces its partial of chunk 0 (ranks 0 and 1) into rank 2 twice in step 2; the
  // double count travels on to every rank.
  ASSERT_EQ(a.steps[1].sends[1], (Send{ChunkId(0), RankId(1), RankId(2), SendOp::Reduce}));
  a.steps[1].sends.push_back(a.steps[1].sends[1]);
  auto check = check_algorithm(a, *ring(4), *ar);
  ASSERT_TRUE(has_kind(check, AlgorithmViolation::Kind::Postcondition));
  bool names_multiset = false;
  for (const auto &v : check.violations)
    names_multiset = names_multiset || v.message.find("r0, r0") != std::string::npos;
  EXPECT_TRUE(names_multiset);
}

TEST(AlgorithmCheckTest, DroppedReductionIsCaught) {
  auto ar = make_collective(CollectiveKind::Allreduce, 4, 4);
  Algorithm a = read_example("ring4_allreduce.json");
  a.steps[0].sends.erase(a.steps[0].sends.begin());
  EXPECT_TRUE(has_kind(check_algorithm(a, *ring(4), *ar), AlgorithmViolation::Kind::Postcondition));
}

TEST(AlgorithmCheckTest, JsonRoundTrip) {
  Algorithm a = read_example("ring4_allreduce.json");
  std::string text = to_canonical_json(algorithm_to_json(a));
  auto doc = JsonDocument::parse(text, "a.json");
  auto back = algorithm_from_json(doc->root());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, a);
  EXPECT_EQ(to_canonical_json(algorithm_to_json(*back)), text);
}

} // namespace
} // namespace syncoll
