// The conformance corpus (tests/data/conformance): no false alarm on a program in the
// conventions real runtimes use, every known-bad one flagged for its reason, every correct one
// keeping the laws of syncoll::testing, and the committed files exactly what the generator writes
// (SYNCOLL_UPDATE_GOLDEN=1 rewrites them).
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "testing/check.h"
#include "testing/laws.h"
#include "tests/conformance/corpus.h"
#include "verifier/verify.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace syncoll::conformance {
namespace {

const std::filesystem::path kDir =
    std::filesystem::path(SYNCOLL_SOURCE_DIR) / "tests" / "data" / "conformance";

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_file(const std::string &name, const std::string &content) {
  if (std::getenv("SYNCOLL_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(kDir);
    std::ofstream(kDir / name, std::ios::binary) << content;
    return;
  }
  EXPECT_EQ(content, slurp(kDir / name))
      << name << " differs from what the generator writes (SYNCOLL_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(ConformanceTest, CommittedCorpusIsWhatTheGeneratorWrites) {
  const std::vector<CorpusEntry> corpus = build_corpus();
  EXPECT_GE(corpus.size(), 80u);
  for (const CorpusEntry &e : corpus) {
    expect_file(e.file, program_to_mscclir_xml(e.program));
    if (e.collective_file)
      expect_file(*e.collective_file, to_canonical_json(collective_to_json(*e.collective)));
  }
  expect_file("MANIFEST.json", corpus_manifest(corpus));
}

// Reads only the committed files, as a user's runtime directory would be read.
TEST(ConformanceTest, NoFalseAlarmsAndEveryBadProgramForItsReason) {
  auto manifest = read_text_file((kDir / "MANIFEST.json").string());
  ASSERT_TRUE(manifest) << manifest.error().to_string();
  const nlohmann::json entries = nlohmann::json::parse(*manifest)["entries"];
  int correct = 0, bad = 0;
  for (const auto &entry : entries) {
    const std::string file = entry["file"];
    auto program = read_program_file((kDir / file).string());
    ASSERT_TRUE(program) << program.error().to_string();
    verifier::VerifyOptions options;
    if (!entry["collective"].is_null()) {
      auto c = read_collective_file((kDir / entry["collective"].get<std::string>()).string());
      ASSERT_TRUE(c) << c.error().to_string();
      options.collective = *c;
    }
    const verifier::Report report = verifier::verify(program->value, options);
    const std::vector<std::string> violated = entry["violated"];
    (violated.empty() ? correct : bad) += 1;
    for (const verifier::Verdict &v : report.verdicts) {
      const std::string name(verifier::property_name(v.property));
      const bool must_fail = std::find(violated.begin(), violated.end(), name) != violated.end();
      EXPECT_EQ(v.kind, must_fail ? verifier::VerdictKind::Violated : verifier::VerdictKind::Holds)
          << file << " (" << entry["convention"].get<std::string>() << "): " << name << "\n"
          << report.to_text();
    }
  }
  EXPECT_GE(correct, 80);
  EXPECT_GE(bad, 4);
}

// The laws beyond the verifier on every correct program real runtimes could be handed: the timed
// simulator agrees with the verifier's executor, simulated time respects the receive bound, and
// the CPU executor computes what the host reference does.
TEST(ConformanceTest, EveryCorrectProgramKeepsEveryLaw) {
  int checked = 0;
  for (const CorpusEntry &e : build_corpus()) {
    if (!e.violated.empty())
      continue;
    const CollectiveSpec collective =
        e.collective ? *e.collective : *collective_for_program(e.program, std::nullopt);
    const Topology topology = *fully_connected(e.program.num_ranks());
    const int64_t size = testing::case_size_bytes(16, e.program, collective);
    for (const testing::LawVerdict &v :
         {testing::simulator_agrees_with_verifier(e.program, topology, collective),
          testing::simulated_time_respects_bound(e.program, topology, collective, size),
          testing::cpu_executor_matches_reference(e.program, collective, size, 3)})
      EXPECT_TRUE(v.holds()) << e.file << " (" << e.convention << "): law '" << v.law << "'\n"
                             << v.counterexample;
    ++checked;
  }
  EXPECT_GE(checked, 80);
}

} // namespace
} // namespace syncoll::conformance
