// `syncoll check`: a seeded broken family is found, shrunk to its smallest failing case and
// written as a program the other commands read; correct families pass; the run is a function of
// its seed; bad input is one line and exit 2, with no file left behind.
#include "tests/cli/run_cli.h"

#include <filesystem>

namespace syncoll::testing {
namespace {

namespace fs = std::filesystem;

TEST(CheckCliTest, FindsShrinksAndWritesTheRaceOfTheBrokenFamily) {
  const fs::path file = temp_file("check-broken.xml");
  fs::remove(file);
  // Ranks 3..8 only: every case passes, the bug is at 2 ranks alone.
  CliRun clean = run_cli("check --family broken_allpairs_allreduce --ranks 3..8 --cases 20 -o " +
                         file.string());
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_FALSE(fs::exists(file)) << "a passing run writes no counterexample";

  CliRun run =
      run_cli("check --family broken_allpairs_allreduce --ranks 2..8 --seed 7 -o " + file.string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("seed 7"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("breaks law 'verifies'"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("to: ranks 2, 1024 B, data seed 1"), std::string::npos)
      << "shrunk to the smallest case of the family\n"
      << run.out;
  EXPECT_NE(run.out.find("race freedom:     violated"), std::string::npos) << run.out;
  ASSERT_TRUE(fs::exists(file));

  CliRun verify = run_cli("verify " + file.string());
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("2 ranks"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("race freedom:     violated"), std::string::npos) << verify.out;
  CliRun again = run_cli("check --programs " + file.string() + " --laws verifies --cases 3 -o " +
                         file.string() + ".again");
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  fs::remove(file);
  fs::remove(file.string() + ".again");
}

TEST(CheckCliTest, TheSameSeedGivesTheSameRun) {
  const std::string args = "check --family broken_allpairs_allreduce --seed 11 -o ";
  const fs::path a = temp_file("check-a.xml"), b = temp_file("check-b.xml");
  CliRun first = run_cli(args + a.string()), second = run_cli(args + b.string());
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  EXPECT_EQ(read_all(a), read_all(b));
  auto without_path = [](std::string s, const fs::path &p) {
    for (size_t at; (at = s.find(p.string())) != std::string::npos;)
      s.erase(at, p.string().size());
    return s;
  };
  EXPECT_EQ(without_path(first.out, a), without_path(second.out, b));
  fs::remove(a);
  fs::remove(b);
}

TEST(CheckCliTest, CorrectFamiliesAndTheExampleProgramsPassEveryLaw) {
  for (const char *family :
       {"--family ring_allreduce", "--family two_step_alltoall",
        "--example hierarchical_allreduce --ranks 4..8", "--programs examples/ir"}) {
    CliRun run = run_cli(std::string("check ") + family + " --cases 12 --sizes 1KiB..1MiB");
    EXPECT_EQ(run.exit_code, 0) << family << "\n" << run.out << run.err;
    EXPECT_NE(run.out.find("12 cases pass"), std::string::npos) << family << "\n" << run.out;
  }
}

TEST(CheckCliTest, AFolderOfFaultyProgramsFailsWithoutJumpingBetweenFiles) {
  const fs::path file = temp_file("check-faulty.xml");
  CliRun run = run_cli("check --programs examples/ir/faulty --seed 3 -o " + file.string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  // The file of the first failing case is the file of the minimal one.
  const size_t first = run.out.find("file "), minimal = run.out.find("to: file ");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(minimal, std::string::npos);
  const std::string first_file = run.out.substr(first, run.out.find(',', first) - first);
  const std::string minimal_file =
      run.out.substr(minimal + 4, run.out.find(',', minimal) - minimal - 4);
  EXPECT_EQ(first_file, minimal_file) << run.out;
  fs::remove(file);
}

TEST(CheckCliTest, BadInputIsOneLineAndExitTwo) {
  const fs::path file = temp_file("check-bad.xml");
  fs::remove(file);
  for (const std::string &args :
       {std::string("check --family no_such_family"), std::string("check --example nope"),
        std::string("check --family ring_allreduce --ranks 9..3"),
        std::string("check --family ring_allreduce --sizes 1KiB..lots"),
        std::string("check --family ring_allreduce --laws verifies,fast"),
        std::string("check --family ring_allreduce --example ring_allgather"),
        std::string("check --programs tests/data/malformed"),
        std::string("check --synthesize ring"),
        std::string("check --synthesize no_such_topology -c allgather"),
        std::string("check --family ring_allreduce --root 1")}) {
    CliRun run = run_cli(args + " -o " + file.string());
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << "\n" << run.err;
    EXPECT_FALSE(fs::exists(file)) << args;
  }
}

} // namespace
} // namespace syncoll::testing
