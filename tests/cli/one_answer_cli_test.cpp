// One answer per question, at the command line: a system's options build the machine they name or
// are refused; an algorithm file names its topology so every command rebuilds it; an output that
// cannot be written, a rank count that does not fit and a number out of range are bad input, one
// line, before any work; NCCL's lines say which number is its tuner's estimate.
#include "tests/cli/run_cli.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace syncoll::testing {
namespace {

// The time column of the CSV row of `size_bytes` in `out` (a `--csv -` run).
double csv_time_us(const std::string &out, int64_t size_bytes) {
  const auto at = out.rfind("\n" + std::to_string(size_bytes) + ",");
  EXPECT_NE(at, std::string::npos) << out;
  if (at == std::string::npos)
    return 0;
  std::stringstream fields(out.substr(at + 1));
  std::string field;
  std::getline(fields, field, ',');
  std::getline(fields, field, ',');
  return std::stod(field);
}

void expect_bad_input(const std::string &args) {
  CliRun run = run_cli(args);
  EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
  EXPECT_EQ(run.out, "") << args;
}

TEST(OneAnswerCliTest, NicOptionsBuildTheMachineNcclRunsOn) {
  auto ring_us = [](const std::string &extra) {
    CliRun run = run_cli("simulate --system dgx_h100 --nodes 2 --baseline nccl-ring -c allreduce "
                         "-s 1GiB --csv - " +
                         extra);
    EXPECT_EQ(run.exit_code, 0) << extra << run.err;
    return csv_time_us(run.out, int64_t(1) << 30);
  };
  const double eight = ring_us(""), four = ring_us("--nics 4"), one = ring_us("--nics 1");
  EXPECT_EQ(ring_us("--nics 8"), eight);
  EXPECT_GT(four, 1.5 * eight) << "half the NICs";
  EXPECT_GT(one, 3 * four) << "a quarter of those";
  EXPECT_GT(ring_us("--nic-bandwidth 5"), 5 * ring_us("--nic-bandwidth 50"));
}

TEST(OneAnswerCliTest, OptionsASystemDoesNotTakeAreRefused) {
  for (const char *args :
       {"simulate --system dgx_h100 --gpus 0 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --nics 2 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --nodes 2 --nics 9 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --nodes 2 --nic-bandwidth 0 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --nodes 0 --baseline nccl -c allreduce",
        "simulate --system b200x4_pytorch --baseline nccl -c allreduce",
        "simulate --system b200x4_pytorch --nodes 8 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 -n 4 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --shape 2x2 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --intra dgx1 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --tiers 3 --baseline nccl -c allreduce",
        "simulate --system dgx_h100 --switching store-and-forward --baseline nccl -c allreduce",
        "simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 --mode dataflow",
        "simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 -C 2",
        "simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 --channels 2"})
    expect_bad_input(args);
}

TEST(OneAnswerCliTest, AnAlgorithmFileNamesItsTopologyForEveryCommand) {
  const auto json = temp_file("torus.json"), xml = temp_file("torus.xml"),
             dot = temp_file("torus.dot");
  CliRun synth = run_cli("synth scale -t torus2d --shape 3x3 -c allgather -o " + json.string());
  ASSERT_EQ(synth.exit_code, 0) << synth.out << synth.err;
  EXPECT_NE(read_all(json).find("\"topology\": \"torus2d --shape 3x3\""), std::string::npos)
      << read_all(json);
  for (const std::string &args : std::vector<std::string>{
           "algo check " + json.string(), "lower " + json.string() + " -o " + xml.string(),
           "simulate " + json.string() + " -s 1MiB",
           "dot algo " + json.string() + " -o " + dot.string()}) {
    CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.out << run.err;
  }
  EXPECT_TRUE(std::filesystem::exists(xml));
  // An option on the command line still replaces the file's value of it.
  expect_bad_input("algo check " + json.string() + " --shape 4x4");
  for (const auto &f : {json, xml, dot})
    std::filesystem::remove(f);
}

TEST(OneAnswerCliTest, ARankCountThatDoesNotFitIsBadInput) {
  expect_bad_input("algo check examples/algorithms/dgx1_allgather_ring.json --topology ring -n 3");
  // A sized library topology named without its size takes the file's ranks.
  CliRun sized = run_cli("algo check examples/algorithms/dgx1_allgather_ring.json -t ring");
  EXPECT_EQ(sized.exit_code, 1) << sized.err; // a well-formed schedule that breaks the ring's links
  EXPECT_NE(sized.out.find("ring8"), std::string::npos) << sized.out;
  expect_bad_input("run examples/ir/ring_allreduce_4.xml --backend cpu --root 9");
  expect_bad_input("verify examples/ir/ring_allreduce_4.xml --root 2");
  expect_bad_input("verify examples/ir/ring_allreduce_4.xml --sm-budget -4");
}

TEST(OneAnswerCliTest, NumbersOutOfRangeSayTheirBoundsReadably) {
  CliRun run = run_cli("synth instance -t dgx1 -c allgather -C 1 -S 2 -R 2 --time-limit -5");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "syncoll: --time-limit: must be at least 0, got -5 (see --help)\n");
  expect_bad_input("simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 --sharing-window -1");
  expect_bad_input("simulate --bogus");
}

TEST(OneAnswerCliTest, AnOutputThatCannotBeWrittenIsRefusedBeforeAnyWork) {
  const std::string nowhere = "/nonexistent-syncoll-folder/";
  for (const std::string &args : std::vector<std::string>{
           "synth instance -t dgx1 -c allgather -C 6 -S 3 -R 7 -o " + nowhere + "ag.json",
           "synth pareto -t dgx1 -c allgather -o " + nowhere + "a/b",
           "synth scale -t torus2d --shape 3x3 -c allgather -o " + nowhere + "ag.json",
           "lower --example ring_allreduce -n 4 -o " + nowhere + "ring.xml",
           "lower --example ring_allreduce -n 4 -o examples",
           "simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 --csv " + nowhere + "x.csv",
           "simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 --trace " + nowhere + "t.json",
           "dot topo dgx1 -o " + nowhere + "dgx1.dot",
           "ir convert examples/ir/ring_allreduce_4.xml -o " + nowhere + "x.json",
           "demo -o " + nowhere + "a/demo",
           "study examples/studies/nics_per_node.json --quick -o " + nowhere + "a/out",
           "check --family broken_allpairs_allreduce -o " + nowhere + "case.xml"})
    expect_bad_input(args);
}

TEST(OneAnswerCliTest, NcclLinesLabelTheTunersEstimateAndAFasterForcedAlgorithm) {
  CliRun run = run_cli("simulate --system dgx_h100 --nodes 2 --baseline nccl -c allreduce -s 1MiB");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"time\": its tuner's estimate in us, not the simulated time"),
            std::string::npos)
      << run.out;
  // Two DGX H100 nodes at 1 MiB: the model's NVLS tree beats NCCL's pick, its tree
  // (docs/cost-model.md says why this one is the model's).
  EXPECT_NE(run.out.find("note: at 1 MiB NCCL_ALGO=NVLSTREE (Simple) simulates 1."),
            std::string::npos)
      << run.out;
  // The comparison runs under the run's own settings: with NCCL_NVLS_ENABLE=0 on a GB200 rack,
  // where NVLS would beat NCCL's ring, there is no NVLS to force and so no note.
  const std::string rack = "simulate --system gb200_nvl72 --baseline nccl -c allreduce -s 1GiB";
  CliRun nvls_on = run_cli(rack);
  ASSERT_EQ(nvls_on.exit_code, 0) << nvls_on.err;
  EXPECT_NE(nvls_on.out.find("Algo NVLS proto Simple"), std::string::npos) << nvls_on.out;
  CliRun nvls_off = run_cli(rack + " --no-nvls");
  ASSERT_EQ(nvls_off.exit_code, 0) << nvls_off.err;
  EXPECT_NE(nvls_off.out.find("Algo RING"), std::string::npos) << nvls_off.out;
  EXPECT_EQ(nvls_off.out.find("NCCL_ALGO=NVLS"), std::string::npos) << nvls_off.out;
  // A forced algorithm is what was asked: no comparison.
  CliRun forced =
      run_cli("simulate --system dgx_h100 --nodes 2 --baseline nccl-ring -c allreduce -s 1GiB");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.out.find("note:"), std::string::npos) << forced.out;
}

TEST(OneAnswerCliTest, AnOldSpellingWorksOnceMoreWithANotice) {
  CliRun old_name = run_cli("compose -c allgather --system dgx_h100 --nodes 2 -s 1MiB "
                            "--nic-gbps 25");
  CliRun new_name = run_cli("compose -c allgather --system dgx_h100 --nodes 2 -s 1MiB "
                            "--nic-bandwidth 25");
  ASSERT_EQ(old_name.exit_code, 0) << old_name.err;
  EXPECT_EQ(old_name.out, new_name.out);
  EXPECT_EQ(old_name.err,
            "syncoll: --nic-gbps is now --nic-bandwidth; the old spelling goes in the next "
            "release\n");
}

} // namespace
} // namespace syncoll::testing
