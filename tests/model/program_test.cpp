#include "model/mscclir.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace syncoll {
namespace {

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kRingPath = std::string(SYNCOLL_SOURCE_DIR) + "/examples/ir/ring_allreduce_4.xml";

TEST(ProgramXmlTest, ReadsRingAllreduce) {
  auto p = read_program_file(kRingPath);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_TRUE(p->warnings.empty());
  const Program &prog = p->value;
  EXPECT_EQ(prog.num_ranks(), 4);
  EXPECT_EQ(prog.collective(), "allreduce");
  EXPECT_TRUE(prog.in_place());
  const ThreadBlock &tb = prog.rank(RankId(2)).thread_blocks[0];
  EXPECT_EQ(tb.send_peer, RankId(3));
  EXPECT_EQ(tb.recv_peer, RankId(1));
  std::vector<OpType> ops;
  for (const auto &in : tb.steps)
    ops.push_back(in.op);
  EXPECT_EQ(ops, (std::vector<OpType>{OpType::Send, OpType::RecvReduceSend, OpType::RecvReduceSend,
                                      OpType::RecvReduceCopySend, OpType::RecvCopySend,
                                      OpType::RecvCopySend, OpType::Recv}));
}

TEST(ProgramXmlTest, WriterReproducesTheExampleByteForByte) {
  // Golden file: the example is in the writer's canonical form.
  auto p = read_program_file(kRingPath);
  ASSERT_TRUE(p);
  EXPECT_EQ(program_to_mscclir_xml(p->value), slurp(kRingPath));
}

TEST(ProgramXmlTest, OldRuntimeDialectIsAcceptedWithWarnings) {
  const std::string xml =
      R"(<algo name="x" proto="LL" nchannels="1" nchunksperloop="2" ngpus="2" coll="reduce_scatter" inplace="0">
  <gpu id="0" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";
  auto p = parse_mscclir_xml(xml, "old.xml");
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->value.collective(), "reducescatter");
  EXPECT_TRUE(p->value.out_of_place());
  // Check that the spelling and each missing executor attribute are all reported, located.
  std::string w = p->warnings.to_string();
  EXPECT_NE(w.find("old.xml:1:70: warning: collective 'reduce_scatter' is the old runtime's "
                   "spelling; the executor spells it 'reducescatter'"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("no 'outofplace'"), std::string::npos);
  EXPECT_NE(w.find("no 'minBytes'"), std::string::npos);
  EXPECT_NE(w.find("no 'maxBytes'"), std::string::npos);
  // Written back, it is in the executor dialect and reads without warnings.
  auto again = parse_mscclir_xml(program_to_mscclir_xml(p->value), "new.xml");
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->warnings.empty()) << again->warnings.to_string();
  EXPECT_EQ(again->value, p->value);
}

TEST(ProgramXmlTest, ThreadBlocksAreOrderedById) {
  const std::string xml =
      R"(<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="1" coll="allreduce" inplace="1" outofplace="0" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="1" s_chunks="1">
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="s" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="0" deps="0" hasdep="0"/>
    </tb>
    <tb id="0" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
  </gpu>
</algo>
)";
  auto p = parse_mscclir_xml(xml, "x.xml");
  ASSERT_TRUE(p) << p.error().to_string();
  const auto &tbs = p->value.rank(RankId(0)).thread_blocks;
  EXPECT_EQ(tbs[0].id, TbId(0));
  EXPECT_EQ(tbs[1].id, TbId(1));
  EXPECT_EQ(tbs[1].steps[0].dependency, (Dependency{TbId(0), StepIndex(0)}));
}

TEST(ProgramXmlTest, ExecutorRejectionsAreLocatedAtTheAttribute) {
  const std::string xml = "<algo name=\"x\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" "
                          "ngpus=\"2\" coll=\"allgather\" inplace=\"0\" outofplace=\"1\" "
                          "minBytes=\"0\" maxBytes=\"0\">\n"
                          "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
                          "    <tb id=\"0\" send=\"0\" recv=\"-1\" chan=\"0\"/>\n"
                          "  </gpu>\n"
                          "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n"
                          "</algo>\n";
  auto p = parse_mscclir_xml(xml, "self.xml");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().items().front().to_string(),
            "self.xml:3:16: rank 0 tb 0: send peer is the rank itself");
}

} // namespace
} // namespace syncoll
