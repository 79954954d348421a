// The repository explains itself: nothing in it points at material a user of the repository does
// not have (the design notes and research files its authors kept beside the checkout, or issue
// numbers of a tracker). Code cites docs/*.md sections and papers by name (docs/references.md).
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace syncoll {
namespace {

struct Mention {
  std::string file;
  int line;
  std::string text;
};

// The patterns are assembled so that this file does not match itself.
const std::vector<std::regex> &outside_material() {
  static const std::vector<std::regex> patterns = {
      std::regex(std::string(R"(\.\./)") + "shared"),
      std::regex(std::string("DESIGN") + R"(\.md)"),
      std::regex(std::string("reference/") + "(mscclir|cost-models|synthesis|cuda|scalable)"),
      std::regex(std::string("seed ") + "(sccl|gc3|sat|nccl|hiccl)", std::regex::icase),
      std::regex(std::string("code-style ") + "anchors"),
      std::regex(std::string(R"(\b[Ii]ssue)") + R"( #?[0-9]+)"),
  };
  return patterns;
}

bool is_source_or_doc(const std::filesystem::path &p) {
  static const std::vector<std::string> kinds = {".h",   ".cpp", ".md",  ".txt", ".json",
                                                 ".xml", ".sh",  ".yml", ".dot", ".supp"};
  const std::string name = p.filename().string();
  if (name == "CMakeLists.txt" || name == "CMakePresets.json" || name == "run")
    return true;
  for (const std::string &k : kinds)
    if (p.extension() == k)
      return true;
  return false;
}

std::vector<Mention> mentions_under(const std::filesystem::path &root) {
  std::vector<Mention> found;
  auto it = std::filesystem::recursive_directory_iterator(root);
  for (; it != std::filesystem::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.starts_with("build"))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !is_source_or_doc(it->path()))
      continue;
    std::ifstream in(it->path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (const std::regex &pattern : outside_material())
        if (std::regex_search(line, pattern))
          found.push_back({std::filesystem::relative(it->path(), root).string(), n, line});
  }
  return found;
}

TEST(SelfContainedTest, NoFileMentionsMaterialOutsideTheRepository) {
  for (const Mention &m : mentions_under(SYNCOLL_SOURCE_DIR))
    ADD_FAILURE() << m.file << ":" << m.line << ": " << m.text;
}

TEST(SelfContainedTest, TheCheckFindsAMention) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("syncoll-self-contained-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "model");
  std::ofstream(root / "model" / "x.h") << "// see ../"
                                        << "shared/DESIGN"
                                        << ".md\n";
  std::ofstream(root / "model" / "y.cpp") << "// fixed for iss"
                                          << "ue 14\n";
  std::ofstream(root / "model" / "z.cpp") << "// nothing to see\n";
  const auto found = mentions_under(root);
  std::filesystem::remove_all(root);
  ASSERT_EQ(found.size(), 3u); // x.h matches two patterns on one line
  for (const Mention &m : found)
    EXPECT_NE(m.file, "model/z.cpp");
}

} // namespace
} // namespace syncoll
