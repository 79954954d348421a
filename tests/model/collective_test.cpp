#include "model/collective.h"
#include "model/collective_traits.h"
#include "model/json_document.h"

#include <gtest/gtest.h>

namespace syncoll {
namespace {

TEST(CollectiveTest, AllgatherFollowsScclNumbering) {
  auto c = make_collective(CollectiveKind::Allgather, 4, 2);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->num_chunks(), 8);
  EXPECT_EQ(c->input_chunks(), 2);
  EXPECT_EQ(c->output_chunks(), 8);
  // Check that chunk i*P + n is rank n's i-th chunk and lands at output slot n*C + i everywhere.
  const ChunkSpec &ch = c->chunk(ChunkId(1 * 4 + 3));
  ASSERT_EQ(ch.pre.size(), 1u);
  EXPECT_EQ(ch.pre[0], (ChunkPlace{RankId(3), 1}));
  ASSERT_EQ(ch.post.size(), 4u);
  for (const auto &p : ch.post)
    EXPECT_EQ(p.slot, 3 * 2 + 1);
  EXPECT_FALSE(c->is_combining());
}

TEST(CollectiveTest, AlltoallIsTranspose) {
  auto c = make_collective("alltoall", 3, 1);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->num_chunks(), 9);
  for (int id = 0; id < 9; ++id) {
    // SCCL's relations: pre = Scattered (c mod P), post = Transpose (floor(c / P) mod P).
    const ChunkSpec &ch = c->chunk(ChunkId(id));
    EXPECT_EQ(ch.pre[0].rank.value(), id % 3);
    EXPECT_EQ(ch.post[0].rank.value(), (id / 3) % 3);
    EXPECT_EQ(ch.pre[0].slot, ch.post[0].rank.value());
    EXPECT_EQ(ch.post[0].slot, ch.pre[0].rank.value());
  }
}

TEST(CollectiveTest, ReduceScatterNeedsEveryContributionOnce) {
  auto c = make_collective(CollectiveKind::ReduceScatter, 4, 1);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->is_combining());
  auto expected = c->expected_value(ChunkId(2));
  ASSERT_EQ(expected.size(), 4u);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(expected[size_t(r)], (Contribution{ChunkId(2), RankId(r)}));
  EXPECT_EQ(c->chunk(ChunkId(2)).post[0], (ChunkPlace{RankId(2), 0}));
}

TEST(CollectiveTest, InPlaceAliasingFollowsMscclConventions) {
  using B = BufferKind;
  auto ag = make_collective(CollectiveKind::Allgather, 4, 2);
  EXPECT_EQ(in_place_slot(*ag, RankId(3), B::Input, 1), (AliasedSlot{B::Output, 3 * 2 + 1}));
  EXPECT_EQ(in_place_slot(*ag, RankId(3), B::Output, 1), (AliasedSlot{B::Output, 1}));
  auto rs = make_collective(CollectiveKind::ReduceScatter, 4, 2);
  // Output 1 of rank 1 is input 2*1+1.
  EXPECT_EQ(in_place_slot(*rs, RankId(1), B::Output, 1), (AliasedSlot{B::Input, 3}));
  auto ar = make_collective(CollectiveKind::Allreduce, 4, 2);
  EXPECT_EQ(in_place_slot(*ar, RankId(2), B::Output, 1), (AliasedSlot{B::Input, 1}));
  EXPECT_EQ(in_place_home(*ar, B::Output), B::Input);
  EXPECT_EQ(in_place_home(*ag, B::Input), B::Output);
  auto next = make_collective(CollectiveKind::AllToNext, 4, 2);
  EXPECT_EQ(in_place_slot(*next, RankId(2), B::Input, 1), (AliasedSlot{B::Input, 1}));
  EXPECT_EQ(in_place_slot(*next, RankId(2), B::Scratch, 1), (AliasedSlot{B::Scratch, 1}));
}

TEST(CollectiveTest, AllToNextSendsToTheNextRank) {
  auto c = make_collective(CollectiveKind::AllToNext, 3, 2);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->num_chunks(), 4);
  for (int id = 0; id < 4; ++id)
    EXPECT_EQ(c->chunk(ChunkId(id)).post[0].rank.value(),
              c->chunk(ChunkId(id)).pre[0].rank.value() + 1);
}

TEST(CollectiveTest, RootRules) {
  EXPECT_FALSE(make_collective(CollectiveKind::Broadcast, 4, 1));
  EXPECT_FALSE(make_collective(CollectiveKind::Allgather, 4, 1, 0));
  EXPECT_FALSE(make_collective(CollectiveKind::Reduce, 4, 1, 4));
  auto b = make_collective(CollectiveKind::Broadcast, 4, 2, 1);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->chunk(ChunkId(1)).pre[0], (ChunkPlace{RankId(1), 1}));
  EXPECT_FALSE(make_collective("nosuch", 4, 1));
}

TEST(CollectiveTest, CustomJsonRoundTrip) {
  const std::string text = R"({"kind": "custom", "name": "pairswap", "ranks": 2,
    "input_chunks": 1, "output_chunks": 2, "chunks": [
      {"pre": [[0, 0]], "post": [[1, 0]]}, {"pre": [[1, 0]], "post": [[0, 1]]},
      {"pre": [[0, 0], [1, 0]], "post": [[0, 0]], "reduce": true}]})";
  auto doc = JsonDocument::parse(text, "c.json");
  ASSERT_TRUE(doc);
  auto c = collective_from_json(doc->root());
  // Chunk 2 uses input slot 0 of both ranks, which chunks 0 and 1 already hold.
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().to_string().find("already holds chunk"), std::string::npos);

  // A rank twice among one chunk's post places is named with its place; once among the pre and
  // once among the post places of a chunk is fine.
  const std::string twice = R"({"kind": "custom", "name": "twice", "ranks": 2,
    "input_chunks": 1, "output_chunks": 2, "chunks": [
      {"pre": [[0, 0]], "post": [[0, 0], [1, 0], [0, 1]]}]})";
  auto twice_doc = JsonDocument::parse(twice, "t.json");
  ASSERT_TRUE(twice_doc);
  auto listed = collective_from_json(twice_doc->root());
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().to_string(), "t.json:3:50: chunk 0: rank 0 is listed twice\n");

  // Buffers too large for a flat table of owners are checked the same way.
  const std::string wide = R"({"kind": "custom", "name": "wide", "ranks": 2,
    "input_chunks": 1, "output_chunks": 16777216, "chunks": [
      {"pre": [[0, 0]], "post": [[1, 16777215]]}, {"pre": [[1, 0]], "post": [[1, 16777215]]}]})";
  auto wide_doc = JsonDocument::parse(wide, "w.json");
  ASSERT_TRUE(wide_doc);
  auto shared = collective_from_json(wide_doc->root());
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().to_string().find(
                "chunk 1: output slot 16777215 of rank 1 already holds chunk 0"),
            std::string::npos)
      << shared.error().to_string();

  const std::string ok = R"({"kind": "custom", "name": "pairswap", "ranks": 2,
    "input_chunks": 1, "output_chunks": 1, "in_place": "same", "chunks": [
      {"pre": [[0, 0]], "post": [[1, 0]]}, {"pre": [[1, 0]], "post": [[0, 0]]}]})";
  auto doc2 = JsonDocument::parse(ok, "c.json");
  auto c2 = collective_from_json(doc2->root());
  ASSERT_TRUE(c2) << c2.error().to_string();
  std::string out = to_canonical_json(collective_to_json(*c2));
  auto doc3 = JsonDocument::parse(out, "c2.json");
  auto c3 = collective_from_json(doc3->root());
  ASSERT_TRUE(c3);
  EXPECT_EQ(*c3, *c2);
  EXPECT_EQ(to_canonical_json(collective_to_json(*c3)), out);
}

} // namespace
} // namespace syncoll
