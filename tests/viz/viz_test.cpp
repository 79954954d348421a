// viz/: golden DOT for small cases, every SVG well-formed XML with an <svg> root, and the
// counterexample drawings mark what the verifier found.
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "lowering/dag_dot.h"
#include "model/algorithm.h"
#include "model/invariant.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "mscclpp/mscclpp.h"
#include "simulator/program_sim.h"
#include "tests/support/golden.h"
#include "tests/viz/shared_renderer.h"
#include "verifier/verify.h"
#include "viz/charts.h"
#include "viz/dot.h"
#include "viz/plan_dot.h"
#include "viz/render.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <pugixml.hpp>
#include <sstream>

namespace syncoll::viz {
namespace {

const std::string kRoot = SYNCOLL_SOURCE_DIR;

using testing::expect_golden;
using testing::slurp;

void expect_svg(const std::string &svg, const std::string &what) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(svg.c_str());
  EXPECT_TRUE(parsed) << what << ": " << parsed.description() << " at " << parsed.offset;
  EXPECT_STREQ(doc.document_element().name(), "svg") << what;
}

Program program_file(const std::string &rel) {
  auto p = read_program_file(kRoot + "/" + rel);
  SYNCOLL_INVARIANT(p.has_value(), "example program");
  return p->value;
}

TEST(VizGoldenTest, SmallCasesAsDot) {
  expect_golden(topology_dot(*line(3)), "viz_topology_line3.dot");
  auto algo = read_algorithm_file(kRoot + "/examples/algorithms/line4_broadcast_s4r4.json");
  ASSERT_TRUE(algo);
  expect_golden(algorithm_dot(*algo), "viz_algorithm_line4_broadcast.dot");
  expect_golden(program_dot(program_file("examples/ir/ring_allreduce_4.xml")),
                "viz_program_ring_allreduce_4.dot");
  const Program d1 = program_file("examples/ir/faulty/d1_head_to_head.xml");
  auto cex = counterexample_dot(d1, verifier::verify(d1, {}));
  ASSERT_TRUE(cex);
  expect_golden(*cex, "viz_counterexample_d1.dot");
  auto plan =
      mscclpp::read_execution_plan_file(kRoot + "/examples/mscclpp/faulty/scratch_reuse.json");
  ASSERT_TRUE(plan);
  auto plan_cex = plan_counterexample_dot(*plan, mscclpp::verify_plan(*plan));
  ASSERT_TRUE(plan_cex);
  expect_golden(*plan_cex, "viz_plan_counterexample_scratch_reuse.dot");
  const auto *example = examples::find_program_example("ring_allreduce");
  examples::ExampleParams params;
  params.ranks = 3;
  auto dsl = example->build(params);
  ASSERT_TRUE(dsl);
  auto lowered = lowering::lower(*dsl);
  ASSERT_TRUE(lowered);
  expect_golden(lowering::chunk_dag_dot(lowered->chunk_dag, "ring_allreduce"),
                "viz_chunk_dag_ring_allreduce_3.dot");
  expect_golden(lowering::instruction_dag_dot(lowered->instruction_dag, "ring_allreduce"),
                "viz_instruction_dag_ring_allreduce_3.dot");
}

TEST(VizTest, TopologyShowsCapacitiesRelationsAndHierarchy) {
  const std::string dgx = topology_dot(dgx1());
  EXPECT_NE(dgx.find("label=\"x2\""), std::string::npos);
  auto mn = multinode(2, *ring(4), 2, BytesPerNs{25});
  ASSERT_TRUE(mn);
  const std::string dot = topology_dot(*mn);
  EXPECT_NE(dot.find("subgraph cluster_node1"), std::string::npos);
  // The NICs collapse into one box per node, saying their count, rate and port caps; the 32
  // links between the nodes into one edge per node.
  EXPECT_NE(dot.find("nic1 [shape=box3d, style=\"\", label=\"2 NICs, 25 GB/s each\\n4 port caps "
                     "of 1/round\"]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("nic0 -> direct [dir=both, label=\"16 links each way\\n25 GB/s\""),
            std::string::npos)
      << dot;
  // A group's uplink cap spans nodes: drawn apart, joined to what it caps.
  LeafGroups groups{2, 2.0};
  auto grouped = multinode(4, *fully_connected(2), 1, BytesPerNs{25}, groups);
  ASSERT_TRUE(grouped);
  EXPECT_NE(topology_dot(*grouped).find("subgraph cluster_relation"), std::string::npos);
}

TEST(VizTest, TopologyDrawsSwitchesByName) {
  FatTree fabric;
  fabric.nodes_per_leaf = 2;
  auto ft = fat_tree(4, *fully_connected(2), fabric);
  ASSERT_TRUE(ft);
  const std::string dot = topology_dot(*ft);
  EXPECT_NE(dot.find("8 ranks, 4 switches"), std::string::npos);
  EXPECT_NE(dot.find("label=\"spine1\""), std::string::npos);
  // The switches are vertices 8 and up; node 0's NIC cables go to leaf0, vertex 8, as one edge.
  EXPECT_NE(dot.find("nic0 -> r8 [dir=both"), std::string::npos) << dot;
}

TEST(VizTest, RaceCounterexampleMarksBothSteps) {
  const Program p = program_file("examples/ir/faulty/r3_alltoall_in_place.xml");
  auto dot = counterexample_dot(p, verifier::verify(p, {}));
  ASSERT_TRUE(dot);
  EXPECT_NE(dot->find("races with"), std::string::npos);
  EXPECT_NE(dot->find("color=red"), std::string::npos);
  const Program good = program_file("examples/ir/ring_allreduce_4.xml");
  EXPECT_FALSE(counterexample_dot(good, verifier::verify(good, {})));
}

// An MSCCL++ plan's counterexample marks what verify_plan found: the blocked waits of a
// deadlock, the last writers of wrong output; a plan that holds has nothing to draw.
TEST(VizTest, PlanCounterexamplesMarkTheOperationsTheVerdictNames) {
  auto draw = [](const std::string &file) {
    auto plan = mscclpp::read_execution_plan_file(kRoot + "/examples/mscclpp/" + file);
    SYNCOLL_INVARIANT(plan.has_value(), "example plan");
    return plan_counterexample_dot(*plan, mscclpp::verify_plan(*plan));
  };
  const auto deadlock = draw("faulty/missing_signal.json");
  ASSERT_TRUE(deadlock);
  EXPECT_NE(deadlock->find("g0_t0_op_5 [label=\"op 5: wait\", color=red"), std::string::npos)
      << *deadlock;
  EXPECT_NE(deadlock->find("deadlock freedom violated"), std::string::npos);
  const auto wrong = draw("faulty/wrong_chunk.json");
  ASSERT_TRUE(wrong);
  EXPECT_NE(wrong->find("races with"), std::string::npos); // race freedom is the first violated
  EXPECT_FALSE(draw("allreduce_allpairs_4gpu.json").has_value());
}

TEST(VizTest, EverySvgIsWellFormed) {
  const Program ring = program_file("examples/ir/ring_allreduce_4.xml");
  for (const auto &[what, dot] : std::vector<std::pair<std::string, std::string>>{
           {"topology", topology_dot(dgx1())}, {"program", program_dot(ring)}}) {
    auto svg = shared_renderer().render(dot, ImageFormat::Svg);
    ASSERT_TRUE(svg) << svg.error().to_string();
    expect_svg(*svg, what);
    auto png = shared_renderer().render(dot, ImageFormat::Png);
    ASSERT_TRUE(png);
    EXPECT_EQ(png->substr(1, 3), "PNG");
  }
  simulator::ProgramSimOptions o;
  o.trace = true;
  o.size_bytes = 1 << 16;
  auto sim = simulator::simulate_program(ring, *syncoll::ring(4), o);
  ASSERT_TRUE(sim);
  const std::string timeline = timeline_svg(sim->result, "ring <allreduce> & co");
  expect_svg(timeline, "timeline");
  EXPECT_NE(timeline.find("&lt;allreduce&gt; &amp; co"), std::string::npos);
  expect_svg(speedup_svg({1024, 2048, 4096}, {{"a", {1, 2, 4}}, {"b", {0.5, 1, 1}}}, "t", "y"),
             "speedup");
  EXPECT_FALSE(shared_renderer().render("digraph { a -> ", ImageFormat::Svg));
}

TEST(VizTest, DrawingsAreDeterministic) {
  const Program ring = program_file("examples/ir/ring_allreduce_4.xml");
  EXPECT_EQ(program_dot(ring), program_dot(ring));
  auto a = shared_renderer().render(topology_dot(dgx1()), ImageFormat::Svg);
  auto b = shared_renderer().render(topology_dot(dgx1()), ImageFormat::Svg);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
}

} // namespace
} // namespace syncoll::viz
