// Golden files under tests/data/golden: a test compares what it produced with the file;
// SYNCOLL_UPDATE_GOLDEN=1 rewrites the file instead (review the diff before committing).
// Targets that include this define SYNCOLL_SOURCE_DIR.
#pragma once

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace syncoll::testing {

inline std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void expect_golden(const std::string &text, const std::string &name) {
  const std::string path = std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/golden/" + name;
  if (std::getenv("SYNCOLL_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  EXPECT_EQ(text, slurp(path)) << "differs from " << path
                               << " (SYNCOLL_UPDATE_GOLDEN=1 rewrites it after review)";
}

} // namespace syncoll::testing
