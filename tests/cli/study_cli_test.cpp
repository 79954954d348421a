// `syncoll study`: the same results and report whatever the sharding; a killed study resumes
// without losing or redoing finished points; a program that fails verification is a result;
// every example study runs in its quick mode.
#include "tests/cli/run_cli.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace syncoll::testing {
namespace {

namespace fs = std::filesystem;

const char *const kOutputs[] = {"results.csv", "results.json", "report.html"};

fs::path fresh_dir(const std::string &name) {
  const fs::path dir = temp_file("study-" + name);
  fs::remove_all(dir);
  return dir;
}

size_t cached_points(const fs::path &dir) {
  size_t n = 0;
  if (fs::exists(dir / "cache"))
    for (const auto &e : fs::directory_iterator(dir / "cache"))
      n += e.path().extension() == ".json";
  return n;
}

TEST(StudyCliTest, OneShardOrThreeWriteTheSameBytes) {
  const std::string study = "study tests/data/studies/sharding.json -o ";
  const fs::path whole = fresh_dir("whole"), sharded = fresh_dir("sharded");
  CliRun one = run_cli(study + whole.string());
  ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
  for (int i = 0; i < 3; ++i) {
    CliRun part = run_cli(study + sharded.string() + " --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(part.exit_code, 0) << part.out << part.err;
    // Only the shard that completes the cache writes the report.
    EXPECT_EQ(fs::exists(sharded / "report.html"), i == 2) << "after shard " << i;
  }
  for (const char *name : kOutputs) {
    const std::string a = read_all(whole / name), b = read_all(sharded / name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_EQ(a, b) << name << " differs between one shard and three";
  }
  fs::remove_all(whole);
  fs::remove_all(sharded);
}

TEST(StudyCliTest, MpirunProcessesShareTheStudyLikeShards) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "mpirun (openmpi-bin) is not installed: the MPI sharding is not checked";
  const fs::path whole = fresh_dir("mpi-whole"), mpi = fresh_dir("mpi");
  ASSERT_EQ(run_cli("study tests/data/studies/sharding.json -o " + whole.string()).exit_code, 0);
  const std::string command = std::string("cd '") + SYNCOLL_SOURCE_DIR +
                              "' && mpirun --allow-run-as-root --oversubscribe -n 3 '" +
                              SYNCOLL_CLI + "' study tests/data/studies/sharding.json -o '" +
                              mpi.string() + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  for (const char *name : kOutputs)
    EXPECT_EQ(read_all(whole / name), read_all(mpi / name)) << name;
  fs::remove_all(whole);
  fs::remove_all(mpi);
}

// Killed part-way (SIGKILL, no chance to clean up), then run again: every point finished before
// the kill is kept as it was, a temporary file left by an interrupted write is ignored, and the
// outputs equal those of a study that was never interrupted.
TEST(StudyCliTest, AKilledStudyResumesAndLosesNothing) {
  const std::string file = "tests/data/studies/sharding.json";
  const fs::path reference = fresh_dir("never-killed"), killed = fresh_dir("killed");
  ASSERT_EQ(run_cli("study " + file + " -o " + reference.string()).exit_code, 0);

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::chdir(SYNCOLL_SOURCE_DIR) != 0)
      ::_exit(127);
    ::execl(SYNCOLL_CLI, SYNCOLL_CLI, "study", file.c_str(), "-o", killed.c_str(),
            static_cast<char *>(nullptr));
    ::_exit(127);
  }
  // Kill it once some points are in the cache (or when it has finished, on a fast machine).
  for (int wait = 0; wait < 2000 && cached_points(killed) < 10; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const size_t before = cached_points(killed);
  std::map<fs::path, fs::file_time_type> kept;
  for (const auto &e : fs::directory_iterator(killed / "cache"))
    if (e.path().extension() == ".json")
      kept[e.path()] = fs::last_write_time(e.path());
  // What a kill in the middle of a write leaves behind.
  {
    std::ofstream torn(killed / "cache" / "0123456789abcdef.json.4242.tmp");
    torn << "{\"key\": \"syncoll-study-1;sys";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CliRun resumed = run_cli("study " + file + " -o " + killed.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_GE(cached_points(killed), before);
  for (const auto &[path, time] : kept)
    EXPECT_EQ(fs::last_write_time(path), time) << path << " was evaluated again";
  for (const char *name : kOutputs)
    EXPECT_EQ(read_all(reference / name), read_all(killed / name)) << name;
  fs::remove_all(reference);
  fs::remove_all(killed);
}

TEST(StudyCliTest, AProgramThatFailsVerificationIsReportedNotDropped) {
  const fs::path dir = fresh_dir("faulty");
  CliRun run = run_cli("study tests/data/studies/faulty_program.json -o " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("4 points (4 evaluated now, 0 from the cache), 2 ran, 2 did not"),
            std::string::npos)
      << run.out;
  const std::string csv = read_all(dir / "results.csv");
  EXPECT_NE(csv.find("head-to-head,own,not verified,,,\"deadlock freedom: violated"),
            std::string::npos)
      << csv;
  const std::string html = read_all(dir / "report.html");
  EXPECT_NE(html.find("Points that did not run"), std::string::npos);
  EXPECT_NE(html.find("a wait-for cycle"), std::string::npos);
  fs::remove_all(dir);
}

// The protocols axis runs every variant without a protocol of its own once per protocol, and a
// speedup compares with the baseline at the same protocol.
TEST(StudyCliTest, TheProtocolsAxisRunsEachVariantPerProtocol) {
  const fs::path dir = fresh_dir("protocols");
  CliRun run = run_cli("study tests/data/studies/protocols.json -o " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("14 points (14 evaluated now, 0 from the cache), 14 ran"),
            std::string::npos)
      << run.out;
  const std::string csv = read_all(dir / "results.csv");
  for (const char *row : {",GC3 ring [Simple],Simple,ok,time_us,", ",GC3 ring [LL],LL,ok,time_us,",
                          ",GC3 ring [LL128],LL128,ok,time_us,",
                          // NCCL's own LL128 over the ring baseline's LL128 run.
                          ",NCCL,LL128,ok,speedup,", ",NCCL ring [LL],LL,ok,speedup,1.0000,"})
    EXPECT_NE(csv.find(row), std::string::npos) << row << "\n" << csv;
  fs::remove_all(dir);
}

// An NCCL variant with "collnet" runs NCCL with in-network reduction enabled where the fabric's
// switches reduce (two DGX A100 nodes on HDR: CollNet Direct), and is not applicable, with the
// reason, where they do not (two p4de nodes on EFA); a forced CollNet implies it.
TEST(StudyCliTest, CollNetRunsWhereTheFabricReducesAndSaysWhyNotElsewhere) {
  const fs::path dir = fresh_dir("collnet");
  CliRun run = run_cli("study tests/data/studies/collnet.json -o " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("6 points (6 evaluated now, 0 from the cache), 4 ran, 2 did not"),
            std::string::npos)
      << run.out;
  const std::string csv = read_all(dir / "results.csv");
  // Each variant's time row on each machine: what ran, or why not.
  auto row = [&](const std::string &system, const std::string &variant) {
    std::istringstream lines(csv);
    for (std::string line; std::getline(lines, line);)
      if (line.find("," + system + ",") != std::string::npos &&
          line.find("," + variant + ",own,") != std::string::npos &&
          (line.find(",time_us,") != std::string::npos ||
           line.find("not applicable") != std::string::npos))
        return line;
    return std::string();
  };
  EXPECT_NE(row("dgx_a100", "NCCL").find("Algo RING"), std::string::npos) << csv;
  EXPECT_NE(row("dgx_a100", "NCCL with SHARP").find("Algo COLLNET_DIRECT"), std::string::npos);
  EXPECT_NE(row("dgx_a100", "CollNet Chain").find("Algo COLLNET_CHAIN"), std::string::npos);
  for (const char *variant : {"NCCL with SHARP", "CollNet Chain"})
    EXPECT_NE(row("aws_p4de", variant)
                  .find("not applicable,,,\"NCCL's CollNet needs a network "
                        "whose switches reduce (IB SHARP, HDR or newer); "
                        "fabric 'efa_v1' has none\""),
              std::string::npos)
        << variant << "\n"
        << csv;
  fs::remove_all(dir);
}

TEST(StudyCliTest, EveryExampleStudyRunsInQuickMode) {
  size_t studies = 0;
  for (const auto &e : fs::directory_iterator(fs::path(SYNCOLL_SOURCE_DIR) / "examples/studies")) {
    if (e.path().extension() != ".json")
      continue;
    ++studies;
    const fs::path dir = fresh_dir("example-" + e.path().stem().string());
    CliRun run = run_cli("study examples/studies/" + e.path().filename().string() + " -o " +
                         dir.string() + " --quick");
    EXPECT_EQ(run.exit_code, 0) << e.path() << run.out << run.err;
    const std::string html = read_all(dir / "report.html");
    EXPECT_NE(html.find("<polyline"), std::string::npos) << e.path() << ": no plotted line";
    EXPECT_NE(read_all(dir / "results.csv").find(",ok,busbw_gbps,"), std::string::npos) << e.path();
    fs::remove_all(dir);
  }
  EXPECT_GE(studies, 3u);
}

TEST(StudyCliTest, BadShardIsOneLineAndExitTwo) {
  const fs::path dir = fresh_dir("bad-shard");
  for (const char *shard : {"3/3", "1", "a/b", "0/0", "-1/2"}) {
    CliRun run = run_cli(std::string("study tests/data/studies/sharding.json -o ") + dir.string() +
                         " --shard " + shard);
    EXPECT_EQ(run.exit_code, 2) << shard;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_FALSE(fs::exists(dir)) << "output written for --shard " << shard;
  }
}

} // namespace
} // namespace syncoll::testing
