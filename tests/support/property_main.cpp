// Test main for suites with rapidcheck properties: fixes and prints the seed so every random
// test is reproducible. SYNCOLL_TEST_SEED=N (or rapidcheck's own RC_PARAMS) picks another.
#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>

int main(int argc, char **argv) {
  std::string params = std::getenv("RC_PARAMS") ? std::getenv("RC_PARAMS") : "";
  if (params.find("seed=") == std::string::npos) {
    const char *env = std::getenv("SYNCOLL_TEST_SEED");
    std::string seed = env ? env : "20261121";
    params += (params.empty() ? "" : " ") + std::string("seed=") + seed;
    setenv("RC_PARAMS", params.c_str(), 1);
  }
  std::printf("rapidcheck parameters: %s (set SYNCOLL_TEST_SEED=N to change the seed)\n",
              params.c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
