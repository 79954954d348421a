#include "model/hardware.h"
#include "model/text.h"
#include "tests/cli/run_cli.h"
#include "tests/support/golden.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace syncoll::testing {
namespace {

TEST(SimulateCliTest, BaselineSweepWithCsv) {
  const auto csv = std::filesystem::temp_directory_path() / "syncoll-sim.csv";
  std::filesystem::remove(csv);
  CliRun run = run_cli("simulate --baseline nccl-ring -c allreduce -t ring -n 4 --sizes 1KiB..1MiB "
                       "--csv " +
                       csv.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("NCCL ring allreduce"), std::string::npos);
  const std::string text = read_all(csv);
  EXPECT_EQ(text.substr(0, 49), "size_bytes,time_us,algbw_gbps,busbw_gbps,deadlock");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 11); // header + 1 KiB .. 1 MiB
  std::filesystem::remove(csv);
}

TEST(SimulateCliTest, TreeBaseline) {
  CliRun run = run_cli("simulate --baseline nccl-tree -c allreduce -t dgx1 -s 1KiB");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("NCCL tree allreduce"), std::string::npos);
  EXPECT_EQ(run_cli("simulate --baseline nccl-tree -c allgather -t dgx1").exit_code, 2);
}

TEST(SimulateCliTest, BaselinesCrossAFatTreeOfSwitches) {
  const std::string fabric = "-t fat_tree --nodes 4 --gpus 4 --nics 4 --nic-bandwidth 50 "
                             "--nodes-per-leaf 2 -s 16MiB";
  CliRun ring = run_cli("simulate --baseline nccl-ring -c allreduce " + fabric);
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_NE(ring.out.find("on fat_tree4x4_fully_connected4 (16 ranks)"), std::string::npos);
  CliRun tree = run_cli("simulate --baseline nccl-tree -c allreduce " + fabric);
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  // The streamed ring would step at the pace of its slowest hop where NCCL's ranks do not, and
  // the streamed tree is another schedule than NCCL's: both refused, each saying why.
  CliRun streamed_ring =
      run_cli("simulate --streamed -c allreduce --baseline nccl-ring --channels 1 " + fabric);
  EXPECT_EQ(streamed_ring.exit_code, 2);
  EXPECT_NE(streamed_ring.err.find("differ in latency or bandwidth"), std::string::npos)
      << streamed_ring.err;
  CliRun streamed_tree = run_cli("simulate --streamed -c allreduce --baseline nccl-tree " + fabric);
  EXPECT_EQ(streamed_tree.exit_code, 2);
  EXPECT_NE(streamed_tree.err.find("--streamed runs NCCL's ring"), std::string::npos)
      << streamed_tree.err;
  // Where it runs, it prints the ring program's time.
  const std::string torus = "simulate -c allgather --baseline nccl-ring -t torus2d --shape 4x4 "
                            "-s 4MiB --channels 1";
  CliRun program = run_cli(torus), streamed = run_cli(torus + " --streamed");
  ASSERT_EQ(program.exit_code, 0) << program.err;
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  EXPECT_NE(streamed.out.find("streamed step-synchronous"), std::string::npos) << streamed.out;
  const auto time_line = [](const std::string &out) {
    return out.substr(out.find("4 MiB"), out.find('\n', out.find("4 MiB")) - out.find("4 MiB"));
  };
  EXPECT_EQ(time_line(program.out), time_line(streamed.out)) << program.out << streamed.out;
  EXPECT_EQ(run_cli("simulate --streamed --baseline nccl --system dgx_h100 -c allreduce").exit_code,
            2);
  // Synthesis counts chunks on rank-to-rank links: a fabric of switches is refused, not mangled.
  CliRun synth = run_cli("synth instance -c allgather -t fat_tree --nodes 2 --gpus 2 -C 1 "
                         "--steps 3 --rounds 3");
  EXPECT_EQ(synth.exit_code, 2);
  EXPECT_NE(synth.err.find("routes through switches"), std::string::npos) << synth.err;
}

TEST(SimulateCliTest, AlgorithmWithTraceOpensAsChromeTrace) {
  const auto trace = std::filesystem::temp_directory_path() / "syncoll-trace.json";
  CliRun run = run_cli("simulate examples/algorithms/ring4_allreduce.json -t ring -n 4 -s 4MiB "
                       "--mode dataflow --trace " +
                       trace.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(read_all(trace));
  EXPECT_EQ(j["traceEvents"][0]["ph"], "X");
  EXPECT_GT(j["traceEvents"].size(), 24u); // 24 sends plus thread names
  std::filesystem::remove(trace);
}

// NCCL's run on a system has its program's timeline too; a closed form (NVLS here) has none,
// and says so instead of writing an empty trace.
TEST(SimulateCliTest, NcclOnASystemWritesItsTrace) {
  const auto trace = std::filesystem::temp_directory_path() / "syncoll-system-trace.json";
  std::filesystem::remove(trace);
  CliRun ring = run_cli("simulate --system dgx_h100 --nodes 2 --baseline nccl-ring -c allreduce "
                        "-s 4MiB --trace " +
                        trace.string());
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  auto j = nlohmann::json::parse(read_all(trace));
  EXPECT_GT(j["traceEvents"].size(), 16u * 2 * 15); // 16 channels, 2(n-1) steps
  std::filesystem::remove(trace);
  CliRun nvls = run_cli("simulate --system dgx_h100 --baseline nccl -c allreduce -s 1GiB --trace " +
                        trace.string());
  EXPECT_EQ(nvls.exit_code, 2);
  EXPECT_NE(nvls.err.find("closed form"), std::string::npos) << nvls.err;
  EXPECT_FALSE(std::filesystem::exists(trace));
}

TEST(SimulateCliTest, ProgramDeadlockExitsOne) {
  CliRun ok = run_cli("simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 -s 1MiB");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  CliRun stuck = run_cli("simulate examples/ir/faulty/d1_head_to_head.xml -t ring -n 2 -s 1MiB");
  EXPECT_EQ(stuck.exit_code, 1);
  EXPECT_NE(stuck.out.find("deadlock"), std::string::npos);
}

TEST(SimulateCliTest, BadArgumentsExitTwo) {
  EXPECT_EQ(run_cli("simulate -t dgx1").exit_code, 2);                      // nothing to simulate
  EXPECT_EQ(run_cli("simulate --baseline nccl-ring -t dgx1").exit_code, 2); // no collective
  EXPECT_EQ(run_cli("simulate --baseline nccl-ring -c allreduce -t star -n 4").exit_code, 2);
  EXPECT_EQ(run_cli("simulate --baseline nccl-ring -c allreduce -t dgx1 -s 12XB").exit_code, 2);
  // SCCL's lowerings time algorithms; NCCL's kernels are its own (the option is not ignored).
  CliRun lowered = run_cli("simulate --system dgx_h100 --baseline nccl-ring -c allreduce "
                           "--lowering copy-engine");
  EXPECT_EQ(lowered.exit_code, 2);
  EXPECT_NE(lowered.err.find("--lowering"), std::string::npos) << lowered.err;
  // A line of 4 has no link 3->0: that send is routed through ranks 2 and 1, and costs more.
  CliRun ring = run_cli("simulate examples/algorithms/ring4_allreduce.json -t ring -n 4 --csv -");
  CliRun line = run_cli("simulate examples/algorithms/ring4_allreduce.json -t line -n 4 --csv -");
  EXPECT_EQ(line.exit_code, 0) << line.err;
  EXPECT_NE(ring.out, line.out);
}

} // namespace
} // namespace syncoll::testing

namespace syncoll::testing {
namespace {

TEST(SimulateCliTest, SharingOverridesEveryRelation) {
  // The tree's root sends to five children through one switch port: FIFO serves them one after
  // another, max-min fair sharing all at once, so the timelines differ (the port is work
  // conserving, so the totals need not).
  const auto dir = std::filesystem::temp_directory_path();
  std::string traces[2];
  for (int i = 0; i < 2; ++i) {
    const auto trace = dir / ("syncoll-sharing-" + std::to_string(i) + ".json");
    CliRun run = run_cli(std::string("simulate --baseline nccl-tree -c allreduce -t "
                                     "hub_and_spoke -n 6 -s 64KiB --sharing ") +
                         (i == 0 ? "fifo" : "fair") + " --trace " + trace.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    traces[i] = read_all(trace);
    std::filesystem::remove(trace);
  }
  EXPECT_NE(traces[0], traces[1]);
  EXPECT_EQ(run_cli("simulate --baseline nccl-tree -c allreduce -t hub_and_spoke -n 6 "
                    "--sharing fast")
                .exit_code,
            2);
  // On a system the what-if reaches NCCL's own runs too: a broadcast ring's 16 channels share
  // each NVSwitch port at once instead of one transfer after another.
  std::string csv[2];
  for (int i = 0; i < 2; ++i) {
    CliRun run = run_cli(std::string("simulate --system dgx_h100 --nodes 2 --baseline nccl -c "
                                     "broadcast -s 64MiB --csv - --sharing ") +
                         (i == 0 ? "fifo" : "fair"));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    csv[i] = run.out;
  }
  EXPECT_NE(csv[0], csv[1]);
}

// NCCL's own choice on a calibrated system, reported per size as NCCL_DEBUG=INFO would.
TEST(SimulateCliTest, NcclChoiceOnASystem) {
  CliRun run =
      run_cli("simulate --system dgx_h100 --baseline nccl -c allreduce --sizes 64KiB..256MiB");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("system dgx_h100"), std::string::npos) << run.out;
  // A small ring LL call runs on a channel per 32 KiB (512 threads x 8 B x 8 ranks), a large one
  // on all 24.
  EXPECT_NE(run.out.find("NCCL INFO AllReduce: 65536 Bytes -> Algo RING proto LL channels 2 "),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL channels 24 "),
            std::string::npos)
      << run.out;
  EXPECT_NE(
      run.out.find("NCCL INFO AllReduce: 268435456 Bytes -> Algo NVLS proto Simple channels 16 "),
      std::string::npos)
      << run.out;
  // Forced algorithms, and two nodes through the NICs.
  CliRun tree = run_cli("simulate --system dgx_a100 --nodes 2 --baseline nccl-tree -c allreduce "
                        "-s 64MiB");
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.out.find("Algo TREE"), std::string::npos) << tree.out;
  CliRun a2a = run_cli("simulate --system dgx_a100 --baseline nccl -c alltoall -s 1MiB");
  ASSERT_EQ(a2a.exit_code, 0) << a2a.err;
  EXPECT_NE(a2a.out.find("Algo P2P"), std::string::npos) << a2a.out;
  // NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS, as the SCCL paper's baseline set them.
  CliRun pinned = run_cli("simulate --system dgx1 --baseline nccl -c allgather -s 1KiB "
                          "--protocol Simple --channels 4");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  EXPECT_NE(pinned.out.find("proto Simple channels 4 "), std::string::npos) << pinned.out;
}

TEST(SimulateCliTest, TopoListNamesTheSystems) {
  CliRun run = run_cli("topo list");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const SystemPreset &s : all_system_presets()) {
    EXPECT_NE(run.out.find(std::string(s.name) + " "), std::string::npos) << s.name;
    EXPECT_NE(run.out.find("host CPUs: " + std::string(host_cpu_name(s.host_cpu)) +
                           "; source: " + std::string(s.source) + "\n"),
              std::string::npos)
        << s.name;
  }
  EXPECT_NE(run.out.find("fabric: slingshot11; host CPUs: AMD; source: OLCF Frontier"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("Hopper (H100, H200)"), std::string::npos) << run.out;
}

TEST(SimulateCliTest, NcclsChoiceAcrossNodesNamesItsAlgorithmAndFabric) {
  // Two B200 nodes: NCCL's own choice at 1 GiB is NVLS in each node and a tree between them, a
  // closed form, said so; the header names the fabric the nodes are joined by.
  CliRun b200 =
      run_cli("simulate --system dgx_b200 --nodes 2 --baseline nccl -c allreduce -s 1GiB");
  ASSERT_EQ(b200.exit_code, 0) << b200.err;
  EXPECT_NE(b200.out.find("system dgx_b200 over ib_ndr"), std::string::npos) << b200.out;
  EXPECT_NE(b200.out.find("Algo NVLSTREE proto Simple"), std::string::npos) << b200.out;
  CliRun efa = run_cli(
      "simulate --system dgx_b200 --nodes 2 --fabric efa_v4 --baseline nccl -c allreduce -s 4KiB");
  ASSERT_EQ(efa.exit_code, 0) << efa.err;
  EXPECT_NE(efa.out.find("over efa_v4"), std::string::npos) << efa.out;
  // Forced NVLS tree needs a machine of NVSwitch nodes; a fabric needs a system of nodes.
  EXPECT_EQ(run_cli("simulate -t ring -n 8 --baseline nccl-nvlstree -c allreduce").exit_code, 2);
  CliRun unknown =
      run_cli("simulate --system dgx_h100 --nodes 2 --fabric ib_qdr --baseline nccl -c allreduce");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown fabric 'ib_qdr' (known: ib_edr"), std::string::npos)
      << unknown.err;
  EXPECT_EQ(
      run_cli("simulate --system dgx_h100 --fabric roce --baseline nccl -c allreduce").exit_code,
      2);
}

TEST(SimulateCliTest, CollNetIsAskedForAndNamedAndRefusedWhereTheNetworkCannotReduce) {
  // Eight DGX A100 nodes over HDR, 1 GiB: with --collnet NCCL takes CollNet Direct, a closed
  // form, and the header names the switches' reduction; without it, never. A forced CollNet
  // algorithm implies --collnet. EFA's switches reduce nothing, one node has no network: one line,
  // exit 2.
  const std::string a100 =
      "simulate --system dgx_a100 --nodes 8 --baseline nccl -c allreduce -s 1GiB";
  CliRun on = run_cli(a100 + " --collnet");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  EXPECT_NE(on.out.find("CollNet over SHARPv2 (Quantum)"), std::string::npos) << on.out;
  EXPECT_NE(on.out.find("Algo COLLNET_DIRECT proto Simple"), std::string::npos) << on.out;
  EXPECT_NE(on.out.find("(closed form)"), std::string::npos) << on.out;
  // A closed form times no links, so there are none to call busiest.
  EXPECT_EQ(on.out.find("busiest links"), std::string::npos) << on.out;
  CliRun off = run_cli(a100);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out.find("COLLNET"), std::string::npos) << off.out;
  CliRun chain = run_cli(
      "simulate --system dgx_a100 --nodes 8 --baseline nccl-collnet-chain -c allreduce -s 1GiB");
  ASSERT_EQ(chain.exit_code, 0) << chain.err;
  EXPECT_NE(chain.out.find("Algo COLLNET_CHAIN"), std::string::npos) << chain.out;
  for (const std::string bad :
       {"simulate --system aws_p5 --nodes 2 --baseline nccl -c allreduce --collnet",
        "simulate --system dgx_a100 --nodes 2 --fabric roce --baseline nccl-collnet-direct -c "
        "allreduce",
        "simulate --system dgx_a100 --baseline nccl -c allreduce --collnet",
        "simulate --baseline nccl-ring -c allreduce -t ring -n 4 --collnet"}) {
    CliRun refused = run_cli(bad);
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    EXPECT_TRUE(refused.out.empty()) << bad;
  }
}

TEST(SimulateCliTest, TheNcclReleaseIsNamedAndChangesTheChoiceWhereItAddedAnAlgorithm) {
  // 16 H100 nodes of one GPU each, 2 MiB AllGather: PAT from 2.23, not before; the header says
  // which release ran. A release the model does not know, or one without a forced algorithm, is
  // one line and exit 2.
  const std::string allgather =
      "simulate --system dgx_h100 --nodes 16 --gpus 1 --baseline nccl -c allgather -s 2MiB";
  CliRun newer = run_cli(allgather + " --nccl-version 2.23");
  ASSERT_EQ(newer.exit_code, 0) << newer.err;
  EXPECT_NE(newer.out.find("simulate NCCL's choice (NCCL 2.23.4) on"), std::string::npos)
      << newer.out;
  EXPECT_NE(newer.out.find("Algo PAT"), std::string::npos) << newer.out;
  CliRun older = run_cli(allgather + " --nccl-version 2.22.3");
  ASSERT_EQ(older.exit_code, 0) << older.err;
  EXPECT_EQ(older.out.find("Algo PAT"), std::string::npos) << older.out;
  CliRun fallback = run_cli(allgather);
  EXPECT_NE(fallback.out.find("(NCCL 2.29.7)"), std::string::npos) << fallback.out;
  CliRun unknown = run_cli(allgather + " --nccl-version 2.12.12");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("'2.12.12' is not an NCCL release the model knows"), std::string::npos)
      << unknown.err;
  CliRun forced = run_cli("simulate --system dgx_h100 --nodes 16 --gpus 1 --baseline nccl-pat "
                          "-c allgather --nccl-version 2.21");
  EXPECT_EQ(forced.exit_code, 2);
  EXPECT_NE(forced.err.find("NCCL 2.21.5 has no PAT: it came in 2.23"), std::string::npos)
      << forced.err;
  EXPECT_EQ(run_cli("simulate -t ring -n 8 --baseline nccl-ring -c allreduce --nccl-version 2.21")
                .exit_code,
            2);
}

TEST(SimulateCliTest, AnAmdMachineRunsRcclAndSaysWhichModelRan) {
  // RCCL is modelled as NCCL's search, algorithms and tuning: the header says so, and a forced
  // algorithm is RCCL's. An NVIDIA machine's header names NCCL alone.
  CliRun amd = run_cli("simulate --system mi355x --nodes 2 --baseline nccl -c allreduce -s 1GiB");
  ASSERT_EQ(amd.exit_code, 0) << amd.err;
  EXPECT_NE(amd.out.find("RCCL's choice (RCCL as NCCL 2.29.7's search, algorithms and tuning)"),
            std::string::npos)
      << amd.out;
  EXPECT_NE(amd.out.find("2x8_mi355x"), std::string::npos) << amd.out;
  CliRun ring = run_cli("simulate --system azure_nd_mi300x_v5 --gpus 4 --baseline nccl-ring -c "
                        "allgather -s 64MiB");
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_NE(ring.out.find("RCCL ring"), std::string::npos) << ring.out;
  CliRun nvidia = run_cli("simulate --system dgx_h100 --baseline nccl -c allreduce -s 1MiB");
  ASSERT_EQ(nvidia.exit_code, 0) << nvidia.err;
  EXPECT_NE(nvidia.out.find("NCCL's choice (NCCL 2.29.7)"), std::string::npos) << nvidia.out;
  EXPECT_EQ(nvidia.out.find("RCCL"), std::string::npos) << nvidia.out;
}

TEST(SimulateCliTest, SystemMistakesAreBadInput) {
  CliRun unknown = run_cli("simulate --system dgx9 --baseline nccl -c allreduce");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown system 'dgx9' (known: dgx1, dgx2, dgx_a100"),
            std::string::npos)
      << unknown.err;
  // A100 has no NVLS; DGX-1 has 8 GPUs (4 of its cube-mesh are its first 4); topology and
  // system are two answers to one question; NCCL's own choice needs a machine.
  EXPECT_EQ(run_cli("simulate --system dgx_a100 --baseline nccl-nvls -c allreduce").exit_code, 2);
  EXPECT_EQ(run_cli("simulate --system dgx1 --gpus 9 --baseline nccl -c allreduce").exit_code, 2);
  CliRun first4 = run_cli("simulate --system dgx1 --gpus 4 --baseline nccl -c allreduce");
  EXPECT_EQ(first4.exit_code, 0) << first4.err;
  EXPECT_NE(first4.out.find("dgx1_4gpu (4 ranks)"), std::string::npos) << first4.out;
  EXPECT_EQ(run_cli("simulate --system dgx1 -t dgx1 --baseline nccl -c allreduce").exit_code, 2);
  EXPECT_EQ(run_cli("simulate -t dgx1 --baseline nccl -c allreduce").exit_code, 2);
  EXPECT_EQ(run_cli("simulate --system dgx1 --baseline nccl -c allreduce --channels 0").exit_code,
            2);
}

// SCCL's two lowerings of an algorithm on a machine: the copy engines lose at small sizes (a
// host-issued step each) and win at large ones (bigger NVLink packets).
TEST(SimulateCliTest, AnAlgorithmOnASystemRunsAsScclsKernelOrItsCopyEngines) {
  const std::string ring = std::string(SYNCOLL_SOURCE_DIR) + "/examples/algorithms/";
  auto time_us = [&](const std::string &lowering, const std::string &size) {
    CliRun run = run_cli("simulate " + ring + "dgx1_allgather_ring.json --system dgx1 -s " + size +
                         (lowering.empty() ? "" : " --lowering " + lowering) + " --csv -");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const auto line = run.out.find("\n" + std::to_string(parse_size(size).value()) + ",");
    EXPECT_NE(line, std::string::npos) << run.out;
    std::stringstream fields(run.out.substr(line + 1));
    std::string field;
    std::getline(fields, field, ',');
    std::getline(fields, field, ',');
    return std::stod(field);
  };
  EXPECT_EQ(time_us("", "1KiB"), time_us("kernel", "1KiB"));
  EXPECT_LT(time_us("kernel", "1KiB"), time_us("copy-engine", "1KiB"));
  EXPECT_GT(time_us("kernel", "1GiB"), time_us("copy-engine", "1GiB"));

  // Reductions, programs, dataflow steps and other protocols are not what these lowerings run.
  for (const std::string &bad :
       {"simulate " + ring + "ring4_allreduce.json --system dgx1 --lowering copy-engine",
        "simulate " + std::string(SYNCOLL_SOURCE_DIR) +
            "/examples/ir/dgx1_allgather_637.xml --system dgx1 --lowering kernel",
        "simulate " + ring + "dgx1_allgather_ring.json -t dgx1 --lowering kernel",
        "simulate " + ring +
            "dgx1_allgather_ring.json --system dgx1 --lowering copy-engine --mode dataflow",
        "simulate " + ring + "dgx1_allgather_ring.json --system dgx1 --protocol LL"}) {
    CliRun run = run_cli(bad);
    EXPECT_EQ(run.exit_code, 2) << bad << "\n" << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// The co-design question behind the search: NCCL on a DGX-1 runs several rings, so more
// channels move more (one channel is one ring).
TEST(SimulateCliTest, ChannelsUseMoreRingsOnDgx1) {
  auto busbw = [](int channels) {
    CliRun run = run_cli("simulate --baseline nccl-ring -c allgather -t dgx1 --sizes 1GiB "
                         "--channels " +
                         std::to_string(channels) + " --csv -");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const auto line = run.out.find("\n1073741824,");
    EXPECT_NE(line, std::string::npos) << run.out;
    std::stringstream fields(run.out.substr(line + 1));
    std::string field;
    for (int i = 0; i < 4; ++i)
      std::getline(fields, field, ',');
    return std::stod(field);
  };
  EXPECT_GT(busbw(12), 2.5 * busbw(1));
}

} // namespace
} // namespace syncoll::testing

namespace syncoll::testing {
namespace {

// `--nccl-tests` prints the sweep as nccl-tests' all_reduce_perf would (golden), and
// `--nccl-tests-json` writes the same rows as its -J file; the times are the plain table's.
TEST(SimulateCliNcclTestsTest, TheSweepPrintsAndWritesAsNcclTests) {
  const std::string json = ::testing::TempDir() + "nccl_tests_sweep.json";
  const std::string args =
      "simulate --baseline nccl --system dgx_h100 -c allreduce --size 1KiB..64KiB";
  CliRun run = run_cli(args + " --nccl-tests --nccl-tests-json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_golden(run.out, "simulate_nccl_tests_dgx_h100_allreduce.txt");
  const auto doc = nlohmann::json::parse(read_all(json));
  ASSERT_EQ(doc["results"].size(), 7u);
  CliRun plain = run_cli(args + " --csv -");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string first_time =
      fmt::format("{:.6f}", doc["results"][0]["in_place"]["time"].get<double>());
  EXPECT_NE(plain.out.find("1024," + first_time), std::string::npos) << plain.out;
  CliRun unwritable = run_cli(args + " --nccl-tests-json /nonexistent/folder/x.json");
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_NE(unwritable.err.find("--nccl-tests-json"), std::string::npos) << unwritable.err;
}

// What simulate writes as nccl-tests, compare reads back against the same simulation: every
// size agrees (one answer), in the text's two decimals and the JSON's full precision alike.
TEST(CompareCliTest, ASimulatedRunComparedWithItsOwnSystemAgreesEverywhere) {
  const std::string text = ::testing::TempDir() + "compare_round.log";
  const std::string json = ::testing::TempDir() + "compare_round.json";
  CliRun simulated = run_cli("simulate --baseline nccl --system dgx_h100 -c reducescatter "
                             "--size 1KiB..16MiB --nccl-tests --nccl-tests-json " +
                             json);
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  std::ofstream(text) << simulated.out;
  for (const std::string &log : {text, json}) {
    CliRun run = run_cli("compare " + log + " --system dgx_h100");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("(reduce_scatter_perf, 8 GPUs)"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("15 sizes: geomean error 0.0%"), std::string::npos) << run.out;
  }
  CliRun other = run_cli("compare " + json + " --system dgx_h100 --nodes 2");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_EQ(other.err, json + ":1:1: the log ran on 8 GPUs of 1 host and the system has 16 "
                              "(give --nodes and --gpus to match)\n");
  // A run across nodes names a host per node: compare takes the nodes from its hosts and the
  // release from its header, so that the round trip agrees without --nodes or --nccl-version.
  const std::string across = ::testing::TempDir() + "compare_across.log";
  CliRun two = run_cli("simulate --baseline nccl --system dgx_h100 --nodes 2 -c allreduce "
                       "--size 1MiB..64MiB --nccl-version 2.22 --nccl-tests");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  std::ofstream(across) << two.out;
  CliRun inferred = run_cli("compare " + across + " --system dgx_h100");
  ASSERT_EQ(inferred.exit_code, 0) << inferred.err;
  EXPECT_NE(inferred.out.find("with NCCL's choice (NCCL 2.22.3, the log's) on 2x8_dgx_h100 (2 "
                              "nodes of 8 GPUs, as the log's hosts)"),
            std::string::npos)
      << inferred.out;
  EXPECT_NE(inferred.out.find("7 sizes: geomean error 0.0%"), std::string::npos) << inferred.out;
  CliRun bad = run_cli("compare tests/data/nccl_tests/bad_number.log --system dgx_h100");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

// NCCL's graph file out and back in: the rings written simulate as the search's did; a ring
// that hops where DGX-1 has no NVLink is a verdict (exit 1) naming the hop.
TEST(SimulateCliNcclGraphTest, AWrittenGraphSimulatesAsTheSearchAndABrokenOneIsAVerdict) {
  const std::string graph = ::testing::TempDir() + "dgx1_graph.xml";
  const std::string args = "simulate --baseline nccl-ring -c allreduce -t dgx1 -s 64MiB";
  CliRun searched = run_cli(args + " --write-nccl-graph " + graph);
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  CliRun injected = run_cli(args + " --nccl-graph " + graph);
  ASSERT_EQ(injected.exit_code, 0) << injected.err;
  auto table = [](const std::string &out) { return out.substr(out.find('\n')); };
  EXPECT_EQ(table(injected.out), table(searched.out));
  EXPECT_NE(injected.out.find("graph file's ring(s)"), std::string::npos);
  const std::string broken = ::testing::TempDir() + "dgx1_broken.xml";
  std::ofstream(broken) << "<graphs version=\"1\">\n<graph id=\"0\" pattern=\"4\" "
                           "speedintra=\"20\">\n<channel><gpu dev=\"0\"/><gpu dev=\"5\"/>"
                           "<gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/><gpu dev=\"7\"/>"
                           "<gpu dev=\"6\"/><gpu dev=\"4\"/></channel>\n</graph>\n</graphs>\n";
  CliRun verdict = run_cli(args + " --nccl-graph " + broken);
  EXPECT_EQ(verdict.exit_code, 1) << verdict.err;
  // Where no NCCL baseline runs, the option is refused rather than ignored.
  CliRun ignored =
      run_cli("simulate examples/ir/ring_allreduce_4.xml -t ring -n 4 --nccl-graph " + graph);
  EXPECT_EQ(ignored.exit_code, 2);
  EXPECT_NE(ignored.err.find("--nccl-graph is NCCL's graph file: give an NCCL --baseline"),
            std::string::npos)
      << ignored.err;
  EXPECT_EQ(verdict.out, "NCCL cannot run the graph file's rings on dgx1: " + broken +
                             ":3:1: channel 0 hops from GPU 0 to GPU 5, which 'dgx1' does not "
                             "join\n");
}

// Across nodes the file holds a node's rings, trees and NVLS heads with the NICs they enter and
// leave by: written from NCCL's model of two DGX H100 nodes and read back, it runs as the model
// did, for the ring, the tree and NCCL's choice (NVLS tree from its heads' speeds); a tree that
// repeats a GPU is a verdict (exit 1).
TEST(SimulateCliNcclGraphTest, AcrossNodesTheWrittenRingsAndTreesRunAsTheModelsDid) {
  const std::string graph = ::testing::TempDir() + "h100x2_graph.xml";
  const std::string system = "simulate -c allreduce --system dgx_h100 --nodes 2 -s 1MiB..256MiB";
  CliRun written = run_cli(system + " --baseline nccl --write-nccl-graph " + graph);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  std::ifstream in(graph);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("<graph id=\"0\" pattern=\"4\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<graph id=\"1\" pattern=\"3\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<graph id=\"3\" pattern=\"5\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<net dev=\"0\"/>\n      <gpu dev=\"0\"/>"), std::string::npos) << xml;
  // The choices and the table, after the header and any notes on the graph file.
  auto table = [](const std::string &out) { return out.substr(out.find("NCCL's choice as")); };
  for (const char *baseline : {"nccl", "nccl-ring", "nccl-tree"}) {
    CliRun searched = run_cli(system + " --baseline " + baseline);
    CliRun injected = run_cli(system + " --baseline " + baseline + " --nccl-graph " + graph);
    ASSERT_EQ(injected.exit_code, 0) << injected.err;
    EXPECT_EQ(table(injected.out), table(searched.out)) << baseline;
    EXPECT_NE(injected.out.find("rings, trees and NVLS heads of graph file " + graph),
              std::string::npos)
        << injected.out;
    EXPECT_NE(injected.out.find("across nodes the NVLS graph's heads and their NICs carry NVLS "
                                "tree and NVLS, but its speeds do not move NCCL's choice"),
              std::string::npos)
        << injected.out;
  }
  // A machine without NVLS (A100) runs the file's rings and trees and says why not its heads.
  CliRun a100 = run_cli("simulate -c allreduce --system dgx_a100 --nodes 2 -s 1MiB --baseline "
                        "nccl --nccl-graph " +
                        graph);
  ASSERT_EQ(a100.exit_code, 0) << a100.err;
  EXPECT_NE(a100.out.find(": the NVLS graph (id 3) is not used: the machine has no NVLS"),
            std::string::npos)
      << a100.out;
  EXPECT_NE(a100.out.find("rings and trees of graph file " + graph), std::string::npos) << a100.out;
  std::string repeated = xml;
  const size_t tree = repeated.find("<graph id=\"1\"");
  const size_t second = repeated.find("<gpu dev=\"1\"/>", tree);
  repeated.replace(second, 14, "<gpu dev=\"0\"/>");
  const std::string broken = ::testing::TempDir() + "h100x2_broken.xml";
  std::ofstream(broken) << repeated;
  CliRun verdict = run_cli(system + " --baseline nccl-tree --nccl-graph " + broken);
  EXPECT_EQ(verdict.exit_code, 1) << verdict.err;
  EXPECT_NE(
      verdict.out.find("NCCL cannot run the graph file's channels on 2x8_dgx_h100: " + broken),
      std::string::npos)
      << verdict.out;
  EXPECT_NE(verdict.out.find("channel 0 visits GPU 0 twice"), std::string::npos) << verdict.out;
}

// A PCIe server whose rings cross AMD sockets: NCCL repeats its one ring on every channel, so
// each socket hop carries every channel one way; syncoll's search places different rings, the
// graph file it writes simulates as its search did, and both beat NCCL's own graph.
TEST(SimulateCliNcclGraphTest, OnAmdSocketsSyncollsWrittenGraphBeatsNcclsRepeatedRing) {
  const std::string args = "simulate --baseline nccl-ring -c allreduce -t "
                           "examples/nccl_topo/pcie_amd_4gpu_bridged.xml -s 256MiB";
  const std::string nccl_graph = ::testing::TempDir() + "amd_nccl_graph.xml";
  const std::string own_graph = ::testing::TempDir() + "amd_syncoll_graph.xml";
  CliRun nccl = run_cli(args + " --write-nccl-graph " + nccl_graph);
  ASSERT_EQ(nccl.exit_code, 0) << nccl.err;
  CliRun own = run_cli(args + " --syncoll-rings --write-nccl-graph " + own_graph);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(nccl.out.find("over 1 NCCL-searched ring(s)"), std::string::npos) << nccl.out;
  EXPECT_NE(own.out.find("syncoll-searched ring(s)"), std::string::npos) << own.out;
  auto busbw = [](const std::string &out) {
    std::istringstream in(out.substr(out.find("256 MiB")));
    std::string size, unit;
    double time = 0, algbw = 0, bus = 0;
    in >> size >> unit >> time >> algbw >> bus;
    return bus;
  };
  EXPECT_GT(busbw(own.out), 1.5 * busbw(nccl.out)) << nccl.out << own.out;
  // NCCL run with the written graph (NCCL_GRAPH_FILE) is what syncoll's search simulated.
  CliRun injected = run_cli(args + " --nccl-graph " + own_graph);
  ASSERT_EQ(injected.exit_code, 0) << injected.err;
  EXPECT_DOUBLE_EQ(busbw(injected.out), busbw(own.out));
  CliRun repeated = run_cli(args + " --nccl-graph " + nccl_graph);
  EXPECT_DOUBLE_EQ(busbw(repeated.out), busbw(nccl.out));
  // Where syncoll's search and NCCL's cannot differ, or a graph file chooses, refused.
  CliRun same = run_cli("simulate --baseline nccl-ring -c allreduce -t dgx1 -s 1MiB "
                        "--syncoll-rings");
  EXPECT_EQ(same.exit_code, 2);
  CliRun both = run_cli(args + " --syncoll-rings --nccl-graph " + own_graph);
  EXPECT_EQ(both.exit_code, 2);
}

// `--system node.xml --nodes N`: the calibrated system of the dump's node with the dump's NICs,
// the same run as the preset given those NICs; a node no preset has is one line, exit 2.
TEST(SimulateCliNcclTopoTest, ADumpAsASystemRunsAsItsPresetWithItsNics) {
  const std::string tail = " --nodes 2 --baseline nccl -c allreduce -s 1MiB..1GiB";
  CliRun dumped = run_cli("simulate --system examples/nccl_topo/dgx_h100.xml" + tail);
  ASSERT_EQ(dumped.exit_code, 0) << dumped.err;
  CliRun preset = run_cli("simulate --system dgx_h100 --nics 8 --nic-bandwidth 50" + tail);
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  // The heading says what the dump gave; every figure below it is the preset's.
  const auto heading_and_rest = [](const std::string &out) {
    const size_t end = out.find('\n');
    return std::pair{out.substr(0, end), out.substr(end)};
  };
  const auto [dumped_heading, dumped_rest] = heading_and_rest(dumped.out);
  EXPECT_EQ(dumped_rest, heading_and_rest(preset.out).second);
  EXPECT_NE(dumped_heading.find("system dgx_h100 (node of examples/nccl_topo/dgx_h100.xml, 8 "
                                "NIC(s) of 400 Gb/s: the dump's) over ib_ndr"),
            std::string::npos)
      << dumped_heading;
  EXPECT_EQ(heading_and_rest(preset.out).first.find("node of"), std::string::npos);
  CliRun fewer = run_cli("simulate --system examples/nccl_topo/dgx_h100.xml --nics 2" + tail);
  ASSERT_EQ(fewer.exit_code, 0) << fewer.err;
  EXPECT_NE(heading_and_rest(fewer.out).second, dumped_rest);
  EXPECT_NE(fewer.out.find("2 NIC(s) of 400 Gb/s: count --nics, rate the dump's"),
            std::string::npos)
      << heading_and_rest(fewer.out).first;
  // A dump that lists no NIC keeps the preset's, and says so.
  std::ifstream in(std::string(SYNCOLL_SOURCE_DIR) + "/examples/nccl_topo/dgx_h100.xml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at; (at = text.find("<nic>")) != std::string::npos;)
    text.erase(at, text.find("</nic>", at) + std::string_view("</nic>").size() - at);
  const std::string bare = ::testing::TempDir() + "dgx_h100_without_nics.xml";
  std::ofstream(bare) << text;
  CliRun without = run_cli("simulate --system " + bare + tail);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(without.out.find("8 NIC(s) of 400 Gb/s: the preset's: the dump lists none"),
            std::string::npos)
      << heading_and_rest(without.out).first;
  // A node no preset has runs as dumped, several of them on the network its NICs say; --gpus
  // (a preset node's subset) is refused for it in one line.
  CliRun pcie = run_cli("simulate --system examples/nccl_topo/pcie_server_8gpu.xml" + tail);
  ASSERT_EQ(pcie.exit_code, 0) << pcie.err;
  EXPECT_NE(pcie.out.find("on 2x8_pcie_server_8gpu (16 ranks), system pcie_server_8gpu (node of "
                          "examples/nccl_topo/pcie_server_8gpu.xml as dumped, 8 GPUs of sm 89 "
                          "with Ampere (A100)'s constants (no row of its own), 2 NIC(s) of 100 "
                          "Gb/s: the dump's) over ib_edr"),
            std::string::npos)
      << pcie.out;
  CliRun subset =
      run_cli("simulate --system examples/nccl_topo/pcie_server_8gpu.xml --gpus 4" + tail);
  EXPECT_EQ(subset.exit_code, 2);
  EXPECT_TRUE(subset.out.empty());
  EXPECT_EQ(std::count(subset.err.begin(), subset.err.end(), '\n'), 1) << subset.err;
}

// A cloud VM's dump of the same node, its NICs on the CPU's root ports: the heading says the
// GPUs reach them at PHB and without GPUDirect RDMA (whose cost the model leaves out), and NCCL
// leaves LL128 off across nodes there, where the metal's dump takes it at 1 MiB.
TEST(SimulateCliNcclTopoTest, AVmsDumpSaysItsNicPathAndRunsAcrossNodesWithoutLl128) {
  const std::string tail = " --nodes 2 --baseline nccl -c allreduce -s 1MiB";
  CliRun vm = run_cli("simulate --system examples/nccl_topo/hgx_h100_vm.xml" + tail);
  ASSERT_EQ(vm.exit_code, 0) << vm.err;
  EXPECT_NE(vm.out.find("8 NIC(s) of 400 Gb/s: the dump's, the GPUs reach them at PHB and NCCL "
                        "sends without GPUDirect RDMA (its staging through host memory is not "
                        "in the model)) over ib_ndr"),
            std::string::npos)
      << vm.out;
  EXPECT_EQ(vm.out.find("proto LL128"), std::string::npos) << vm.out;
  CliRun metal = run_cli("simulate --system examples/nccl_topo/dgx_h100.xml" + tail);
  ASSERT_EQ(metal.exit_code, 0) << metal.err;
  EXPECT_NE(metal.out.find("proto LL128"), std::string::npos) << metal.out;
  EXPECT_EQ(metal.out.find("reach them at"), std::string::npos) << metal.out;
}

// Published runs in both of nccl-tests' layouts (an srun-prefixed text log, a -J file with
// in_place null): every size read and simulated, and each simulated time the one `simulate
// --baseline nccl` gives for that size on that system.
// The hosts a log names shape the machine: two hosts of 4 GPUs are two nodes of 4, not one DGX
// of 8; an NVL72 rack's trays of 4 fill racks of 72.
TEST(CompareCliTest, TheLogsHostsGiveTheMachinesShape) {
  const std::pair<std::string, std::string> runs[] = {
      {"--system dgx_h100 --nodes 2 --gpus 4",
       "on 2x4_dgx_h100 (2 nodes of 4 GPUs, as the log's hosts)"},
      {"--system gb200_nvl72 --nodes 2",
       "on 2x72_gb200_nvl72 (2 nodes of 72 GPUs: the log's 36 hosts of 4, 18 to a node)"}};
  for (const auto &[machine, heading] : runs) {
    const std::string log = ::testing::TempDir() + "compare_hosts.log";
    CliRun simulated = run_cli("simulate --baseline nccl " + machine +
                               " -c allreduce --size 64MiB..128MiB --nccl-tests");
    ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
    std::ofstream(log) << simulated.out;
    const std::string system = machine.substr(0, machine.find(" --nodes"));
    CliRun run = run_cli("compare " + log + " " + system);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find(heading), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("2 sizes: geomean error 0.0%"), std::string::npos) << run.out;
  }
}

// Where the log's NCCL_DEBUG=INFO lines name NCCL's choice, compare counts the sizes the model
// chose the same at and names the others (the fixture's LL128 and Simple rings against the
// model's LL).
TEST(CompareCliTest, TheModelsChoiceIsHeldAgainstTheLogsInfoLines) {
  CliRun run = run_cli("compare tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("NCCL 2.28.3, the log's"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("NCCL's choice: the model's is the log's at 2 of the 4 sizes its INFO "
                         "lines name (not at 256 KiB, 4 MiB)"),
            std::string::npos)
      << run.out;
  CliRun without = run_cli("compare tests/data/nccl_tests/h100_2node_default.log --system "
                           "dgx_h100");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out.find("NCCL's choice:"), std::string::npos) << without.out;
}

TEST(CompareCliTest, PublishedRunsInTextAndJsonAreReadAndSimulatedAsSimulateDoes) {
  const std::pair<std::string, std::string> logs[] = {
      {"tests/data/nccl_tests/h100_2node_default.log", "dgx_h100"},
      {"tests/data/nccl_tests/oci_a100_2node.json", "oci_bm_gpu4_8"}};
  for (const auto &[log, system] : logs) {
    CliRun run = run_cli("compare " + log + " --system " + system + " --nodes 2");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("(all_reduce_perf, 16 GPUs)"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(log.ends_with(".json") ? "31 sizes: geomean error"
                                                  : "14 sizes: geomean error"),
              std::string::npos)
        << run.out;
    CliRun one =
        run_cli("simulate --system " + system + " --nodes 2 --baseline nccl -c allreduce -s 1GiB");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const size_t row = one.out.find("     1 GiB ");
    ASSERT_NE(row, std::string::npos) << one.out;
    std::istringstream in(one.out.substr(row));
    std::string size, unit, time;
    in >> size >> unit >> time;
    const size_t compared = run.out.find("     1 GiB ");
    ASSERT_NE(compared, std::string::npos);
    std::istringstream c(run.out.substr(compared));
    std::string csize, cunit, measured, simulated;
    c >> csize >> cunit >> measured >> simulated;
    EXPECT_NEAR(std::stod(simulated), std::stod(time), 0.006) << one.out << run.out; // 2 decimals
  }
}

} // namespace
// An MSCCL++ plan simulates on a system (its heading says which model timed it), and a lowered
// program's plan and the program itself both simulate, the plan without the program's pipelining.
TEST(SimulateCliMscclppTest, APlanSimulatesOnASystemAndSaysHow) {
  CliRun run = run_cli("simulate examples/mscclpp/allreduce_allpairs_4gpu.json --system dgx_h100 "
                       "--gpus 4 -s 1MiB..4MiB");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("simulate MSCCL++ plan 'allreduce_allpairs' (allreduce; first-come "
                         "links and ports, a pipeline's body run once over its chunks) on "
                         "dgx_h100_4gpu (4 ranks)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("4 MiB"), std::string::npos);
  // Sizes past the plan's window (up to 1 MiB) are timed and said to be outside it.
  EXPECT_NE(run.out.find("note: 2 MiB, 4 MiB lie outside the plan's message-size window (0 B "
                         "to 1048576 B)"),
            std::string::npos)
      << run.out;
  CliRun inside = run_cli("simulate examples/mscclpp/allreduce_allpairs_4gpu.json --system "
                          "dgx_h100 --gpus 4 -s 64KiB..1MiB");
  EXPECT_EQ(inside.out.find("note:"), std::string::npos) << inside.out;
  CliRun wrong = run_cli("simulate examples/mscclpp/allreduce_allpairs_4gpu.json --system "
                         "dgx_h100 -s 1MiB");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(wrong.err, "syncoll: the plan runs on 4 GPUs and 'dgx_h100_8gpu' has 8 ranks\n");
  // What the plan names itself, or the timing does not read, is refused rather than ignored.
  for (const char *option : {"--protocol LL", "--sharing fair", "-c allgather"}) {
    CliRun refused = run_cli(std::string("simulate examples/mscclpp/allreduce_allpairs_4gpu.json "
                                         "--system dgx_h100 --gpus 4 -s 1MiB ") +
                             option);
    EXPECT_EQ(refused.exit_code, 2) << option;
    EXPECT_NE(refused.err.find("does not apply to an MSCCL++ plan"), std::string::npos)
        << refused.err;
  }
  // nccl-tests' table names the plan's collective.
  CliRun table = run_cli("simulate examples/mscclpp/allreduce_allpairs_4gpu.json --system "
                         "dgx_h100 --gpus 4 -s 1MiB --nccl-tests");
  EXPECT_NE(table.out.find("# Collective test concluded: all_reduce_perf"), std::string::npos)
      << table.out;
}

} // namespace syncoll::testing
