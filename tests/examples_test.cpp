// The files under examples/ are documentation and golden files at once: each one reads, checks
// where it can be checked, and is already in the writer's canonical form.
#include "model/algorithm.h"
#include "model/collective.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_json.h"
#include "model/topology_library.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace syncoll {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> files_in(const std::string &folder, const std::string &extension) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(fs::path(SYNCOLL_SOURCE_DIR) / "examples" / folder))
    if (e.path().extension() == extension)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ExamplesTest, TopologiesReadAndAreCanonical) {
  auto files = files_in("topologies", ".json");
  ASSERT_GE(files.size(), 3u);
  for (const auto &f : files) {
    auto t = read_topology_file(f.string());
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(to_canonical_json(topology_to_json(*t)), slurp(f)) << f;
  }
}

TEST(ExamplesTest, AlgorithmsHoldOnTheirTargets) {
  auto files = files_in("algorithms", ".json");
  ASSERT_GE(files.size(), 3u);
  for (const auto &f : files) {
    auto a = read_algorithm_file(f.string());
    ASSERT_TRUE(a) << a.error().to_string();
    EXPECT_EQ(to_canonical_json(algorithm_to_json(*a)), slurp(f)) << f;
    TopologyParams params;
    if (a->target.topology != "dgx1")
      params.n = a->target.ranks;
    auto t = make_library_topology(a->target.topology, params);
    ASSERT_TRUE(t) << f << ": " << t.error().to_string();
    auto c = make_collective(a->target.collective, a->target.ranks, a->target.chunk_factor,
                             a->target.root);
    ASSERT_TRUE(c) << f << ": " << c.error().to_string();
    AlgorithmCheck check = check_algorithm(*a, *t, *c);
    EXPECT_TRUE(check.holds()) << f << ": " << check.violations.front().message;
  }
}

TEST(ExamplesTest, ProgramsReadWithoutWarningsAndAreCanonical) {
  auto files = files_in("ir", ".xml");
  ASSERT_GE(files.size(), 1u);
  for (const auto &f : files) {
    auto p = read_program_file(f.string());
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_TRUE(p->warnings.empty()) << p->warnings.to_string();
    EXPECT_EQ(program_to_mscclir_xml(p->value), slurp(f)) << f;
  }
}

TEST(ExamplesTest, CollectivesRead) {
  auto files = files_in("collectives", ".json");
  ASSERT_GE(files.size(), 2u);
  for (const auto &f : files) {
    auto c = read_collective_file(f.string());
    ASSERT_TRUE(c) << f << ": " << c.error().to_string();
    EXPECT_EQ(to_canonical_json(collective_to_json(*c)), slurp(f)) << f;
  }
}

} // namespace
} // namespace syncoll
