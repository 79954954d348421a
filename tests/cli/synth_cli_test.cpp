#include "tests/cli/run_cli.h"

#include <filesystem>

namespace syncoll::testing {
namespace {

TEST(SynthCliTest, InstanceWritesAnAlgorithmThatChecks) {
  const auto out = std::filesystem::temp_directory_path() /
                   ("syncoll-synth-" + std::to_string(::getpid()) + ".json");
  CliRun run = run_cli("synth instance -t dgx1 -c allgather -C 2 -S 2 -R 3 -o " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("allgather on dgx1, C2 S2 R3: sat"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("step 2 (2 rounds"), std::string::npos) << run.out;
  CliRun check = run_cli("algo check " + out.string());
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("check: holds"), std::string::npos);
  std::filesystem::remove(out);
}

TEST(SynthCliTest, UnsatExitsOneAndSaysWhy) {
  CliRun bound = run_cli("synth instance -t dgx1 -c allgather -S 1");
  EXPECT_EQ(bound.exit_code, 1);
  EXPECT_NE(bound.out.find("unsat"), std::string::npos);
  EXPECT_NE(bound.out.find("needs 2 steps"), std::string::npos) << bound.out;
  CliRun smt = run_cli("synth instance -t dgx1 -c allgather -C 3 -S 2 -R 4 --backend smt");
  EXPECT_EQ(smt.exit_code, 1);
  EXPECT_NE(smt.out.find("z3: unsatisfiable"), std::string::npos) << smt.out;
  CliRun sat = run_cli("synth instance -t dgx1 -c allgather -C 3 -S 2 -R 4 --certify");
  EXPECT_EQ(sat.exit_code, 1);
  EXPECT_NE(sat.out.find("CaDiCaL: unsatisfiable"), std::string::npos) << sat.out;
  EXPECT_NE(sat.out.find("certified: CaDiCaL's internal DRAT proof checker"), std::string::npos)
      << sat.out;
  // Reductions print as "+>" and come from the dual.
  CliRun reduce = run_cli("synth instance -t line -n 4 -c reduce --root 0 -C 2 -S 3 -R 6");
  EXPECT_EQ(reduce.exit_code, 0);
  EXPECT_NE(reduce.out.find("0:1+>0"), std::string::npos) << reduce.out;
}

TEST(SynthCliTest, ParetoPrintsTheFrontier) {
  CliRun run = run_cli("synth pareto -t line -n 4 -c broadcast --root 0 --max-chunks 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("rounds per chunk lower bound 1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("   3    3    1       3 latency"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("   4    4    2       2 pareto"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("tried C1 S3 R3: sat"), std::string::npos) << run.err; // progress
}

TEST(SynthCliTest, LeastSteps) {
  CliRun run = run_cli("synth least-steps -t ring -n 6 -c allgather");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("steps lower bound 3"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("the fewest rounds in 3 steps: 3"), std::string::npos) << run.out;
}

TEST(SynthCliTest, BadArgumentsExitTwo) {
  EXPECT_EQ(run_cli("synth instance -t dgx1 -c allgather -S 3 -R 2").exit_code, 2);
  EXPECT_EQ(run_cli("synth instance -t dgx1 -c allgathr -S 2").exit_code, 2);
  EXPECT_EQ(run_cli("synth instance -t dgx1 -c broadcast -S 2 --root 8").exit_code, 2);
  // A rooted collective without --root is rooted at 0, as in every command.
  const CliRun rooted = run_cli("synth instance -t dgx1 -c broadcast -S 2");
  EXPECT_EQ(rooted.exit_code, 0) << rooted.err;
  EXPECT_NE(rooted.out.find("broadcast from root 0 on dgx1"), std::string::npos) << rooted.out;
  EXPECT_EQ(run_cli("synth instance -t dgx1 -c allreduce -C 12 -S 4").exit_code, 2);
  EXPECT_EQ(run_cli("synth instance -t ring -n 4 -c allreduce --allreduce direct -S 4").exit_code,
            2); // the SAT backend (the default) has no direct combining encoding
  CliRun one_line = run_cli("synth instance -t dgx1 -c allgather -S 3 -R 2");
  EXPECT_EQ(std::count(one_line.err.begin(), one_line.err.end(), '\n'), 1) << one_line.err;
}

TEST(SynthCliTest, BoundPrintsTheExactBoundAndItsCut) {
  CliRun run = run_cli("synth bound -t mesh2d --shape 4x4 -c allreduce -s 64MiB");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // 15 ranks send into a corner over its two 50 GB/s links: B* = 16 x 100 / 15 each way.
  EXPECT_NE(run.out.find("ReduceScatter cut bound: B* = 320/3 GB/s (106.666667), exact"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("Allgather cut bound: B* = 320/3 GB/s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("a cut S holding 15 of 16 ranks with 100 GB/s leaving it"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("    outside S: 0\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("a flow into each of the 16 ranks"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("B* = 160/3 GB/s (53.333333); at 64 MiB at least 1.258 ms"),
            std::string::npos)
      << run.out;
}

TEST(SynthCliTest, BoundRefusesWhatItDoesNotCover) {
  CliRun alltoall = run_cli("synth bound -t ring -n 4 -c alltoall");
  EXPECT_EQ(alltoall.exit_code, 2);
  EXPECT_EQ(alltoall.out, "");
  EXPECT_EQ(
      alltoall.err,
      "syncoll: the cut bound is for allgather, reducescatter or allreduce, not 'alltoall'\n");
  CliRun shared_nic =
      run_cli("synth bound -t multinode --nodes 2 --gpus 8 --intra dgx_h100 --nics 4 -c allgather");
  EXPECT_EQ(shared_nic.exit_code, 2);
  EXPECT_EQ(shared_nic.out, "");
  EXPECT_NE(shared_nic.err.find("several sources and destinations"), std::string::npos)
      << shared_nic.err;
  EXPECT_EQ(run_cli("synth bound -t ring -n 4 -c allgather -s 12Q").exit_code, 2);
}

TEST(SynthCliTest, ScaleWritesAnOptimalTorusScheduleThatLowersAndSimulates) {
  const auto out = temp_file("torus_bfb.json");
  CliRun run = run_cli("synth scale -t torus2d --shape 4x4 -C 4 -c allgather -o " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("4 steps (diameter 4), 15 rounds: 4 6 4 1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 of it (100.0000%): optimal, by the bound's certificate"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("check: holds"), std::string::npos) << run.out;
  CliRun lower = run_cli("lower " + out.string() + " -t torus2d --shape 4x4 -o " +
                         temp_file("torus_bfb.xml").string());
  EXPECT_EQ(lower.exit_code, 0) << lower.err;
  EXPECT_NE(lower.out.find("verified:"), std::string::npos) << lower.out;
  // 1 GiB at the bound, 16 x 200 / 15 GB/s, takes 5,033 us; four steps add their alphas.
  CliRun sim = run_cli("simulate " + out.string() + " -t torus2d --shape 4x4 -s 1GiB");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.out.find("1 GiB       5035.165"), std::string::npos) << sim.out;
  std::filesystem::remove(out);
  std::filesystem::remove(temp_file("torus_bfb.xml"));
}

TEST(SynthCliTest, ScaleAllreduceIsReduceScatterThenAllgatherAndChecks) {
  CliRun run = run_cli("synth scale -t torus2d --shape 4x4 -C 4 -c allreduce");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("8 steps (twice the diameter 4), 30 rounds: 1 4 6 4 4 6 4 1"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("against the ReduceScatter + Allgather cut bound's 320/3 GB/s"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("optimal, by the bound's certificate"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("check: holds"), std::string::npos) << run.out;
}

TEST(SynthCliTest, ScaleMeetsASquareMeshsBoundInDiameterSteps) {
  CliRun run = run_cli("synth scale -t mesh2d --shape 8x8 -C 2 -c allgather");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("dimension-ordered (pieces 1+1 in orders xy, yx)"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("14 steps (diameter 14)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("6400/63 GB/s (101.587302): 1 of it (100.0000%): optimal"),
            std::string::npos)
      << run.out;
  // The ReduceScatter and the Allreduce likewise, checked.
  CliRun reduce = run_cli("synth scale -t mesh2d --shape 8x8 -C 2 -c allreduce");
  ASSERT_EQ(reduce.exit_code, 0) << reduce.err;
  EXPECT_NE(reduce.out.find("28 steps (twice the diameter 14)"), std::string::npos) << reduce.out;
  EXPECT_NE(reduce.out.find("3200/63 GB/s (50.793651): 1 of it (100.0000%): optimal"),
            std::string::npos)
      << reduce.out;
  EXPECT_NE(reduce.out.find("check: holds"), std::string::npos) << reduce.out;
}

TEST(SynthCliTest, ScalePacesANonSquareMeshToItsBoundInDiameterSteps) {
  const auto out = temp_file("paced_mesh.json");
  CliRun run = run_cli("synth scale -t mesh2d --shape 7x12 -c allgather");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Breadth-first (91.4%) and dimension-ordered (75.7%) fall short; the paced schedule in the
  // diameter's steps meets the corner's cut, so no more steps are tried.
  EXPECT_NE(run.out.find("paced schedules, 2 pieces per share (steps planned: % of the bound, "
                         "step by step): 17:100.0000%\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("allgather on mesh2d_7x12: paced (17 steps planned), 2 pieces"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("17 steps (diameter 17)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 of it (100.0000%): optimal, by the bound's certificate"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("check: holds"), std::string::npos) << run.out;
  // A smaller one lowers, verifies and simulates through the same pipeline.
  CliRun small = run_cli("synth scale -t mesh2d --shape 3x5 -c allgather -o " + out.string());
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_NE(small.out.find("paced (6 steps planned)"), std::string::npos) << small.out;
  CliRun lower = run_cli("lower " + out.string() + " -t mesh2d --shape 3x5 -o " +
                         temp_file("paced_mesh.xml").string());
  EXPECT_EQ(lower.exit_code, 0) << lower.err;
  EXPECT_NE(lower.out.find("verified:"), std::string::npos) << lower.out;
  CliRun sim = run_cli("simulate " + out.string() + " -t mesh2d --shape 3x5 -s 64MiB");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  // A step count of one's own makes the paced schedule alone.
  CliRun longer = run_cli("synth scale -t mesh3d --shape 2x3x4 -c reducescatter --steps 8");
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  EXPECT_NE(longer.out.find("step by step): 8:100.0000%"), std::string::npos) << longer.out;
  EXPECT_NE(longer.out.find("every contribution summed exactly once"), std::string::npos)
      << longer.out;
  std::filesystem::remove(out);
  std::filesystem::remove(temp_file("paced_mesh.xml"));
}

TEST(SynthCliTest, ScalePlansAClusterOfBoxes) {
  const auto out = temp_file("cluster_ag.json");
  std::filesystem::remove(out);
  const std::string machine =
      "-t multinode --nodes 4 --gpus 8 --intra dgx_h100 --nics 8 --nic-bandwidth 50";
  CliRun run = run_cli("synth scale " + machine + " -c allgather -C 70 -o " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // 2 ceil(log2 32) steps; a GPU's own links bind: 31 shares over 450 + 50 GB/s. 70 pieces make
  // the direct tree's share (1/70 of the units) whole.
  EXPECT_NE(run.out.find("Allgather: 10 steps (2 ceil(log2 N) = 10)"), std::string::npos)
      << run.out;
  EXPECT_NE(
      run.out.find("cut: every GPU but rank 0 (31 ranks inside; the 31 links into the "
                   "rest carry at most 500 GB/s: node0.nic0.in + node0.rank0.in): no Allgather "
                   "beats 16000/31 GB/s"),
      std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("the cut bound B* exactly, attained: optimal"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("check: holds"), std::string::npos) << run.out;
  // The written algorithm simulates on the same machine.
  CliRun sim = run_cli("simulate " + out.string() + " " + machine + " --sizes 64MiB");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;

  CliRun few = run_cli("synth scale " + machine + " -c allgather --steps 1 -C 1");
  ASSERT_EQ(few.exit_code, 0) << few.err;
  EXPECT_NE(few.out.find("1 steps"), std::string::npos) << few.out;
  EXPECT_NE(few.out.find("units sent directly: 3"), std::string::npos) << few.out;

  CliRun allreduce = run_cli("synth scale " + machine + " -c allreduce --steps 3 -C 4");
  ASSERT_EQ(allreduce.exit_code, 0) << allreduce.err;
  EXPECT_NE(allreduce.out.find("ReduceScatter: 3 steps"), std::string::npos) << allreduce.out;
  EXPECT_NE(allreduce.out.find("every contribution summed exactly once"), std::string::npos)
      << allreduce.out;

  CliRun zero = run_cli("synth scale " + machine + " -c allgather --steps 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "syncoll: a schedule has at least 1 step, got 0\n");
  CliRun torus = run_cli("synth scale -t torus2d --shape 4x4 -c allgather --steps 3");
  EXPECT_EQ(torus.exit_code, 2);
  EXPECT_EQ(torus.err, "syncoll: a paced schedule on 'torus2d_4x4' takes from its diameter, 4, "
                       "to 68 steps, not 3\n");
}

// A cluster schedule the GC3 passes cannot fit (a thread block per concurrent use of a
// connection) is not called a lowering bug; by connection it fits and is written.
TEST(SynthCliTest, AClusterScheduleTheGc3PassesCannotFitLowersByConnection) {
  const auto out = temp_file("cluster_big.json");
  const auto xml = temp_file("cluster_big.xml");
  const std::string machine =
      "-t multinode --nodes 2 --gpus 8 --intra dgx_h100 --nics 8 --nic-bandwidth 50";
  CliRun run =
      run_cli("synth scale " + machine + " -c allgather --steps 4 -C 14 -o " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CliRun gc3 =
      run_cli("lower " + out.string() + " " + machine + " --passes gc3 -o " + xml.string());
  EXPECT_EQ(gc3.exit_code, 1) << gc3.err;
  EXPECT_NE(gc3.out.find("postcondition:    holds"), std::string::npos) << gc3.out;
  EXPECT_NE(gc3.out.find("[sm-budget]"), std::string::npos) << gc3.out;
  EXPECT_NE(gc3.out.find("not written: the program is correct but does not fit the executor's "
                         "limits"),
            std::string::npos)
      << gc3.out;
  EXPECT_FALSE(std::filesystem::exists(xml));
  CliRun ours = run_cli("lower " + out.string() + " " + machine + " -o " + xml.string());
  EXPECT_EQ(ours.exit_code, 0) << ours.out << ours.err;
  EXPECT_NE(ours.out.find("by connection"), std::string::npos) << ours.out;
  EXPECT_NE(ours.out.find("verified: structure, resources, deadlock freedom"), std::string::npos)
      << ours.out;
  EXPECT_TRUE(std::filesystem::exists(xml));
  std::filesystem::remove(out);
  std::filesystem::remove(xml);
}

// Past the executor by connection too (2 ranks, 2200 pieces each: 69 steps a lane at 32 lanes):
// exit 1, the resources verdict, the limit and what would fit, no file.
TEST(SynthCliTest, AScheduleNoLaneCountFitsIsAResourcesVerdictNamingTheLimit) {
  const auto out = temp_file("line_big.json");
  const auto xml = temp_file("line_big.xml");
  CliRun run = run_cli("synth scale -t line -n 2 -c allgather -C 2200 -o " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CliRun lower = run_cli("lower " + out.string() + " -o " + xml.string());
  EXPECT_EQ(lower.exit_code, 1) << lower.err;
  EXPECT_NE(lower.out.find("resources:        violated"), std::string::npos) << lower.out;
  EXPECT_NE(lower.out.find("postcondition:    unknown: not checked (the program does not fit "
                           "the executor)"),
            std::string::npos)
      << lower.out;
  EXPECT_NE(lower.out.find("not written: the program does not fit the executor's limits; its "
                           "deadlock freedom, races and result were not checked"),
            std::string::npos)
      << lower.out;
  EXPECT_NE(lower.out.find("where the executor holds 64 (MSCCL_MAX_NUM_STEPS), with up to 32 "
                           "lanes per link already; it fits an executor built with "
                           "MSCCL_MAX_NUM_STEPS >= "),
            std::string::npos)
      << lower.out;
  EXPECT_FALSE(std::filesystem::exists(xml));
  std::filesystem::remove(out);
}

TEST(SynthCliTest, ScaleRefusesWhatItDoesNotMake) {
  CliRun alltoall = run_cli("synth scale -t ring -n 4 -c alltoall");
  EXPECT_EQ(alltoall.exit_code, 2);
  EXPECT_EQ(alltoall.err,
            "syncoll: synth scale makes allgather, reducescatter or allreduce, not 'alltoall'\n");
  CliRun switched = run_cli("synth scale -t fat_tree --nodes 2 --gpus 8 --intra dgx_h100 --nics 8 "
                            "-c allgather -o " +
                            temp_file("never.json").string());
  EXPECT_EQ(switched.exit_code, 2);
  EXPECT_NE(switched.err.find("has switches"), std::string::npos) << switched.err;
  EXPECT_FALSE(std::filesystem::exists(temp_file("never.json")));
}

} // namespace
} // namespace syncoll::testing
