// Runs the syncoll executable and captures what it printed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace syncoll::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_all(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A path in the temporary folder, unique to this test process.
inline std::filesystem::path temp_file(const std::string &name) {
  return std::filesystem::temp_directory_path() /
         ("syncoll-test-" + std::to_string(::getpid()) + "-" + name);
}

/// `args` is appended to the executable's path as shell words; run from the source directory so
/// relative example paths work and messages name them relative.
inline CliRun run_cli(const std::string &args) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("syncoll-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "out", err = dir / "err";
  const std::string command = std::string("cd '") + SYNCOLL_SOURCE_DIR + "' && '" + SYNCOLL_CLI +
                              "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_all(out);
  run.err = read_all(err);
  std::filesystem::remove_all(dir);
  return run;
}

} // namespace syncoll::testing
