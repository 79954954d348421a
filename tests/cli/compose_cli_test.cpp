// `syncoll compose`: a standard collective factorized, verified, simulated and written; a
// composition file; the plan drawn the same way twice; the search with NCCL's choice beside it;
// bad parameters (transports a level cannot use among them) one line and exit 2.
#include "tests/cli/run_cli.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace syncoll::testing {
namespace {

std::string temp(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("syncoll-compose-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ComposeCliTest, AFactorizedAllreduceVerifiesAndIsWritten) {
  const std::string xml = temp("ar.xml"), dot = temp("ar.dot"), dot2 = temp("ar2.dot");
  const std::string args = "compose -c allreduce --system dgx_h100 --nodes 2 --stripes 2 "
                           "--pipeline 2 -s 16MiB";
  CliRun run = run_cli(args + " -o " + xml + " --dot " + dot);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("plan: factors 2x8 stripes 2 ring 1 pipeline 2"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("verified; simulated"), std::string::npos) << run.out;
  EXPECT_NE(slurp(xml).find("<algo"), std::string::npos);
  CliRun again = run_cli(args + " --dot " + dot2);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(slurp(dot), slurp(dot2)) << "the same plan drew differently";
  EXPECT_NE(slurp(dot).find("subgraph cluster_1"), std::string::npos);
  for (const std::string &f : {xml, dot, dot2})
    std::filesystem::remove(f);
}

TEST(ComposeCliTest, EachLevelsTransportIsPrintedAndDrawn) {
  const std::string dot = temp("transports.dot");
  CliRun run = run_cli("compose -c allgather --system dgx_h100 --nodes 2 --transports net,p2p "
                       "-s 16MiB --dot " +
                       dot);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("transports net,p2p"), std::string::npos) << run.out;
  const std::string drawn = slurp(dot);
  EXPECT_NE(drawn.find("label=\"L0 net"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("label=\"L1 p2p"), std::string::npos) << drawn;
  std::filesystem::remove(dot);
}

TEST(ComposeCliTest, SimulateOnTheWrittenPlanPrintsComposesTime) {
  // One machine per system: `simulate PLAN.xml --system` runs the program on the machine compose
  // timed it on (ports shared max-min fairly) without being told; --sharing fifo is a what-if,
  // said in the output, and slower for traffic to many peers at once.
  const std::string xml = temp("fair.xml");
  CliRun plan = run_cli("compose -c allgather --system dgx_h100 --nodes 2 -s 64MiB -o " + xml);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto at = plan.out.find("simulated ");
  ASSERT_NE(at, std::string::npos) << plan.out;
  const double composed_us = std::stod(plan.out.substr(at + 10));
  auto simulated_us = [&](const std::string &extra) {
    CliRun run =
        run_cli("simulate " + xml + " --system dgx_h100 --nodes 2 -s 64MiB --csv - " + extra);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const std::string last = run.out.substr(run.out.rfind("67108864,"));
    return std::stod(last.substr(last.find(',') + 1));
  };
  EXPECT_NEAR(simulated_us(""), composed_us, 0.05);
  EXPECT_GT(simulated_us("--sharing fifo"), composed_us);
  CliRun fifo = run_cli("simulate " + xml + " --system dgx_h100 --nodes 2 -s 64MiB --sharing fifo");
  EXPECT_NE(fifo.out.find("(--sharing fifo)"), std::string::npos) << fifo.out;
  std::filesystem::remove(xml);
}

TEST(ComposeCliTest, TheSearchWritesTheBestPlanItTimed) {
  const std::string xml = temp("best.xml"), dot = temp("best.dot");
  CliRun run = run_cli("compose -c allreduce --system dgx_h100 --nodes 2 -s 16MiB --search -o " +
                       xml + " --dot " + dot);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto best = run.out.find("best: ");
  ASSERT_NE(best, std::string::npos) << run.out;
  const double best_us = std::stod(run.out.substr(run.out.find(": ", best + 6) + 2));
  EXPECT_NE(slurp(xml).find("<algo"), std::string::npos);
  EXPECT_NE(slurp(dot).find("digraph"), std::string::npos);
  CliRun sim = run_cli("simulate " + xml + " --system dgx_h100 --nodes 2 -s 16MiB --csv -");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const std::string last = sim.out.substr(sim.out.rfind("16777216,"));
  EXPECT_NEAR(std::stod(last.substr(last.find(',') + 1)), best_us, 0.05) << run.out << sim.out;
  for (const std::string &f : {xml, dot})
    std::filesystem::remove(f);
}

TEST(ComposeCliTest, AnOutputThatCannotBeWrittenIsRefusedBeforeTheSearch) {
  for (const char *output :
       {"-o /nonexistent-folder/plan.xml", "--dot /nonexistent-folder/p.dot", "-o tests"}) {
    CliRun run =
        run_cli(std::string("compose -c allreduce --system dgx_h100 --nodes 2 --search ") + output);
    EXPECT_EQ(run.exit_code, 2) << output << run.out << run.err;
    EXPECT_EQ(run.out, "") << output;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

TEST(ComposeCliTest, ACompositionFileIsItsOwnSpecification) {
  CliRun run = run_cli("compose --file examples/compositions/allreduce_2.json --system dgx_h100 "
                       "--gpus 2 -s 1MiB");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("verified"), std::string::npos) << run.out;
}

TEST(ComposeCliTest, TheSearchSetsTheBestPlanBesideNccl) {
  CliRun run = run_cli("compose -c broadcast --system dgx_h100 --nodes 2 -s 4MiB --search");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("best: factors"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("NCCL's choice:"), std::string::npos) << run.out;
  // The NCCL release its choice was made under, as simulate's header names it.
  EXPECT_NE(run.out.find("(the tuner's estimate; NCCL 2.29.7)"), std::string::npos) << run.out;
}

// --nics rebuilds the machine with that many NICs per node: NCCL's rings, which all cross the
// nodes, slow down when one NIC carries them all.
TEST(ComposeCliTest, FewerNicsSlowNcclsRingsAcrossNodes) {
  auto nccl_us = [](const std::string &extra) {
    CliRun run =
        run_cli("compose -c allgather --system dgx_h100 --nodes 2 -s 64MiB --search" + extra);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    const size_t at = run.out.find("NCCL's choice:");
    const size_t simulated = run.out.find("simulated ", at);
    return at == std::string::npos || simulated == std::string::npos
               ? 0.0
               : std::stod(run.out.substr(simulated + 10));
  };
  const double eight = nccl_us(""), one = nccl_us(" --nics 1");
  EXPECT_GT(eight, 0);
  EXPECT_GT(one, 2 * eight) << "one NIC per node instead of eight";
}

TEST(ComposeCliTest, BadParametersAreOneLineAndExitTwo) {
  for (const char *args :
       {"compose -c allreduce --system dgx_h100 --nodes 2 --stripes 3",
        "compose -c allreduce --system dgx_h100 --nodes 2 --factors 3,8",
        "compose -c allreduce --system dgx_h100 --nodes 2 --factors 2,x",
        "compose -c allreduce --system dgx_h100 --nodes 2 --transports net",
        "compose -c allreduce --system dgx_h100 --nodes 2 --transports auto,ipc",
        "compose -c allreduce --system dgx_h100 --nodes 2 --transports p2p,auto",
        "compose -c allreduce --system dgx_h100 --nodes 2 --transports auto,net",
        "compose -c allreduce --system nowhere",
        "compose -c allreduce --file examples/compositions/allreduce_2.json --system dgx_h100",
        "compose --file examples/compositions/allreduce_2.json --system dgx_h100 --nodes 2",
        "compose -c allreduce --system dgx_h100 --nics 2",
        "compose -c allreduce --system dgx_h100 --nodes 2 --nics 9",
        "compose -c allreduce --system dgx_h100 --nodes 2 --gpus 0",
        "compose -c allreduce --system dgx_h100 --nodes 2 --shape 2x2",
        "compose -c allreduce --system dgx_h100 --nodes 2 -s 1MiB..4MiB"}) {
    CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
}

} // namespace
} // namespace syncoll::testing
