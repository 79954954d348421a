#include "tests/cli/run_cli.h"
#include "tests/support/golden.h"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace syncoll::testing {
namespace {

TEST(CliTest, TopoShowDgx1JsonHasScclCapacities) {
  CliRun run = run_cli("topo show dgx1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["ranks"], 8);
  // SCCL's DGX-1 multiplicities (msccl-tools' known topologies), symmetric.
  const int expected[8][8] = {{0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0},
                              {1, 1, 0, 2, 0, 0, 2, 0}, {1, 2, 2, 0, 0, 0, 0, 1},
                              {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
                              {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0}};
  int found[8][8] = {};
  for (const auto &l : j["links"])
    found[l["src"].get<int>()][l["dst"].get<int>()] = l["capacity"].get<int>();
  for (int s = 0; s < 8; ++s)
    for (int d = 0; d < 8; ++d)
      EXPECT_EQ(found[s][d], expected[s][d]) << s << "->" << d;
}

TEST(CliTest, MultinodeShowsSixteenRanksInTwoLevels) {
  CliRun run = run_cli("topo show multinode --nodes 2 --gpus 8 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["ranks"], 16);
  ASSERT_EQ(j["hierarchy"]["levels"].size(), 2u);
  EXPECT_EQ(j["hierarchy"]["levels"][0]["size"], 2);
  EXPECT_EQ(j["hierarchy"]["levels"][1]["size"], 8);
  CliRun text = run_cli("topo show multinode --nodes 2 --gpus 8");
  EXPECT_NE(text.out.find("16 ranks"), std::string::npos);
  EXPECT_NE(text.out.find("hierarchy: 2 node x 8 gpu (2 levels)"), std::string::npos);
}

TEST(CliTest, TopologyFileRoundTripsThroughShow) {
  CliRun run = run_cli("topo show examples/topologies/line4_custom.json --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            read_all(std::string(SYNCOLL_SOURCE_DIR) + "/examples/topologies/line4_custom.json"));
}

// NCCL's topology dump is a topology wherever one is taken; `topo show` adds the sockets, GPUs
// and NICs (golden: the PCIe server, whose GPUs meet through switches and sockets).
TEST(CliTest, NcclTopologyDumpsShowAndSimulateLikeTheLibrarysMachine) {
  for (const char *dump : {"dgx_h100", "dgx_a100", "pcie_server_8gpu", "workstation_4gpu",
                           "gb200_tray", "hgx_h100_vm"}) {
    CliRun run = run_cli(fmt::format("topo show examples/nccl_topo/{}.xml", dump));
    ASSERT_EQ(run.exit_code, 0) << dump << ": " << run.err;
    EXPECT_NE(run.out.find("NCCL topology: "), std::string::npos) << dump;
    if (std::string_view(dump) == "pcie_server_8gpu")
      expect_golden(run.out, "topo_show_nccl_pcie_server_8gpu.txt");
  }
  const std::string simulate = "simulate --baseline nccl-ring -c allreduce --size 256MiB -t ";
  CliRun dumped = run_cli(simulate + "examples/nccl_topo/dgx_h100.xml");
  CliRun library = run_cli(simulate + "dgx_h100");
  ASSERT_EQ(dumped.exit_code, 0) << dumped.err;
  EXPECT_EQ(dumped.out, library.out);
}

TEST(CliTest, AMalformedNcclTopologyDumpIsOneLocatedLine) {
  const std::string path = ::testing::TempDir() + "bad_node.xml";
  std::ofstream(path) << "<system version=\"1\">\n  <cpu numaid=\"zero\"/>\n</system>\n";
  CliRun run = run_cli("topo show " + path);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, path + ":2:8: attribute 'numaid' must be an integer, found 'zero'\n");
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(CliTest, EveryCommandHasHelp) {
  for (const char *cmd :
       {"", "topo", "topo list", "topo show", "algo", "algo check", "ir", "ir show", "ir convert",
        "verify", "simulate", "compare", "synth", "lower", "dot", "demo", "run"}) {
    CliRun run = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(run.exit_code, 0) << cmd;
    EXPECT_NE(run.out.find("Usage"), std::string::npos) << cmd;
  }
}

TEST(CliTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run_cli("").exit_code, 2);
  EXPECT_EQ(run_cli("nosuch").exit_code, 2);
  EXPECT_EQ(run_cli("topo show").exit_code, 2);
  EXPECT_EQ(run_cli("topo show dgx1 -n 4").exit_code, 2);
  CliRun unknown = run_cli("topo show nosuch");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.substr(0, 37), "syncoll: unknown topology 'nosuch' (k");
}

TEST(CliTest, AlgoCheckExitCodes) {
  CliRun ok = run_cli("algo check examples/algorithms/dgx1_allgather_ring.json");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("check: holds"), std::string::npos);
  // The same schedule against a ring of 8: most sends have no link.
  CliRun bad = run_cli("algo check examples/algorithms/dgx1_allgather_ring.json -t ring -n 8");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("has no link"), std::string::npos);
}

TEST(CliTest, IrConvertRoundTripsTheExample) {
  const auto tmp = std::filesystem::temp_directory_path() / "syncoll-ir-test";
  std::filesystem::create_directories(tmp);
  CliRun to_json =
      run_cli("ir convert examples/ir/ring_allreduce_4.xml -o " + (tmp / "ring.json").string());
  ASSERT_EQ(to_json.exit_code, 0) << to_json.err;
  CliRun to_xml =
      run_cli("ir convert " + (tmp / "ring.json").string() + " -o " + (tmp / "ring.xml").string());
  ASSERT_EQ(to_xml.exit_code, 0) << to_xml.err;
  EXPECT_EQ(read_all(tmp / "ring.xml"),
            read_all(std::string(SYNCOLL_SOURCE_DIR) + "/examples/ir/ring_allreduce_4.xml"));
  std::filesystem::remove_all(tmp);
}

// Every command that reads a program reads the JSON form `ir convert` writes exactly as it reads
// the XML: same verdict, same exit code, same output.
TEST(CliTest, EveryProgramCommandReadsTheJsonForm) {
  const std::pair<std::string, int> examples[] = {{"ring_allreduce_4", 4},
                                                  {"faulty/d1_head_to_head", 2}};
  for (const auto &[example, example_ranks] : examples) {
    const int ranks = example_ranks; // a lambda below uses it (clang 14 captures no bindings)
    const auto json = temp_file(std::filesystem::path(example).filename().string() + ".json");
    CliRun convert = run_cli("ir convert examples/ir/" + example + ".xml -o " + json.string());
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    const std::string xml = "examples/ir/" + example + ".xml";
    const auto drawn_xml = temp_file("from-xml.dot"), drawn_json = temp_file("from-json.dot");
    for (const std::string command :
         {"ir show {}", "verify {}", "verify {} --json", "simulate {} -t ring -n N -s 1MiB",
          "dot program {} -o {}", "dot counterexample {} -o {}",
          "dot timeline {} -t ring -n N -s 1MiB --format svg -o {}"}) {
      auto with = [&](const std::string &input, const std::filesystem::path &out) {
        std::string c = command;
        c.replace(c.find("{}"), 2, input);
        if (auto at = c.find(" N "); at != std::string::npos)
          c.replace(at + 1, 1, std::to_string(ranks));
        if (auto at = c.find("{}"); at != std::string::npos)
          c.replace(at, 2, out.string());
        return c;
      };
      CliRun from_xml = run_cli(with(xml, drawn_xml));
      CliRun from_json = run_cli(with(json.string(), drawn_json));
      EXPECT_NE(from_xml.exit_code, 2) << command << ": " << from_xml.err;
      EXPECT_EQ(from_json.exit_code, from_xml.exit_code) << command << ": " << from_json.err;
      std::string expected = from_xml.out;
      // Output that names its input file names the other one.
      for (size_t at; (at = expected.find(xml)) != std::string::npos;)
        expected.replace(at, xml.size(), json.string());
      EXPECT_EQ(from_json.out, expected) << command;
      if (std::filesystem::exists(drawn_xml)) {
        EXPECT_EQ(read_all(drawn_json), read_all(drawn_xml)) << command;
      }
      std::filesystem::remove(drawn_xml);
      std::filesystem::remove(drawn_json);
    }
    std::filesystem::remove(json);
  }
}

TEST(CliTest, IrShowSummarizes) {
  CliRun run = run_cli("ir show examples/ir/ring_allreduce_4.xml");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("allreduce on 4 ranks, protocol Simple, 1 channel(s)"), std::string::npos);
  EXPECT_NE(run.out.find("s rrs rrs rrcs rcs rcs r"), std::string::npos);
}

// The end-to-end tour: the frontier synthesized, lowered, verified and simulated against NCCL's
// own choice on the DGX-1 system; every file written, and the latency-optimal Allgather ahead at
// 1 KiB.
TEST(CliTest, DemoRunsEndToEnd) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("syncoll-demo-" + std::to_string(::getpid()));
  CliRun run = run_cli("demo -o " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("Pareto frontier: 2 points"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(ahead)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("NCCL's choice: AllGather: 1024 Bytes -> Algo RING proto LL"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.err.find("lowering (GC3 passes) and verifying allgather_c6_s3_r7"),
            std::string::npos);
  for (const char *file :
       {"allgather_c2_s2_r3_LL.xml", "allgather_c6_s3_r7_Simple.xml", "nccl_ring_allgather.xml",
        "allgather_dgx1.csv", "speedup.svg", "topology.svg", "latency_optimal_program.svg",
        "latency_optimal_timeline.svg", "allgather_c6_s3_r7_algorithm.svg"})
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  const std::string csv = read_all(dir / "allgather_dgx1.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 3 * 21); // header, 3 programs x 21 sizes
  // The row names its protocol, and the XML of that protocol is the program timed: simulate on
  // it prints the demo's time.
  const std::string reported = "latency-optimal Allgather at 1 KiB: ";
  const auto at = run.out.find(reported);
  ASSERT_NE(at, std::string::npos) << run.out;
  const std::string line = run.out.substr(at + reported.size());
  const double demo_us = std::stod(line);
  const auto file_at = line.find("(allgather_c2_s2_r3_");
  ASSERT_NE(file_at, std::string::npos) << line;
  const std::string xml = line.substr(file_at + 1, line.find(')', file_at) - file_at - 1);
  CliRun sim = run_cli("simulate " + (dir / xml).string() + " --system dgx1 -s 1KiB --csv -");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const std::string row = sim.out.substr(sim.out.rfind("1024,"));
  EXPECT_NEAR(std::stod(row.substr(5)), demo_us, 0.005) << xml;
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace syncoll::testing
