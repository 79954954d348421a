#include "tests/layering/layering_check.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace syncoll::layering {
namespace {

class TempTree {
public:
  TempTree() {
    root_ = std::filesystem::temp_directory_path() /
            ("syncoll-layering-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  ~TempTree() { std::filesystem::remove_all(root_); }
  void write(const std::string &rel, const std::string &text) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::string root() const { return root_.string(); }

private:
  std::filesystem::path root_;
};

TEST(LayeringTest, RepositoryRespectsTheLayers) {
  auto violations = check_layering(SYNCOLL_SOURCE_DIR);
  for (const auto &v : violations)
    ADD_FAILURE() << v.file << ":" << v.line << ": " << v.message;
}

TEST(LayeringTest, CatchesAnUpwardInclude) {
  TempTree tree;
  tree.write("model/topology.h", "#pragma once\n#include \"model/ids.h\"\n");
  tree.write("model/bad.cpp", "#include \"model/topology.h\"\n#include \"verifier/report.h\"\n");
  tree.write("verifier/report.h", "#include \"model/topology.h\"\n");
  auto violations = check_layering(tree.root());
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].file, "model/bad.cpp");
  EXPECT_EQ(violations[0].line, 2);
  EXPECT_NE(violations[0].message.find("'verifier'"), std::string::npos);
}

TEST(LayeringTest, CatchesSidewaysIncludeBetweenSimulatorAndVerifier) {
  TempTree tree;
  tree.write("simulator/engine.cpp", "#include \"verifier/deadlock.h\"\n");
  auto violations = check_layering(tree.root());
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].file, "simulator/engine.cpp");
}

TEST(LayeringTest, ForeignLibrariesStayInTheirLayer) {
  TempTree tree;
  tree.write("model/solver.cpp", "#include <z3++.h>\n");
  tree.write("synth/smt.cpp", "#include <z3++.h>\n#include <boost/graph/adjacency_list.hpp>\n");
  tree.write("synth/bounds.h", "#include <boost/graph/adjacency_list.hpp>\n");
  tree.write("verifier/draw.cpp", "#include <graphviz/gvc.h>\n");
  auto violations = check_layering(tree.root());
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].file, "model/solver.cpp");
  EXPECT_EQ(violations[1].file, "synth/bounds.h");
  EXPECT_EQ(violations[2].file, "verifier/draw.cpp");
}

TEST(LayeringTest, CudaAndNcclOnlyInTheBackendAndTheBackendAboveLowering) {
  // The executors are their own layer: CUDA and NCCL headers are included in backend/ alone,
  // and the compiler (lowering/) does not reach up into what runs its programs.
  TempTree tree;
  tree.write("backend/cuda_executor.cpp", "#include <cuda_runtime.h>\n#include <nccl.h>\n");
  tree.write("lowering/compile.cpp", "#include <cuda_runtime.h>\n");
  tree.write("cli/run_command.cpp", "#include <nccl.h>\n#include \"backend/executor.h\"\n");
  tree.write("lowering/emission.cpp", "#include \"backend/executor.h\"\n");
  auto violations = check_layering(tree.root());
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].file, "cli/run_command.cpp");
  EXPECT_EQ(violations[1].file, "lowering/compile.cpp");
  EXPECT_EQ(violations[2].file, "lowering/emission.cpp");
}

} // namespace
} // namespace syncoll::layering
