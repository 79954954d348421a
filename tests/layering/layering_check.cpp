#include "tests/layering/layering_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

namespace syncoll::layering {
namespace {

// Each layer and the layers it may include (docs/architecture.md, "Layers").
const std::map<std::string, std::set<std::string>> &allowed_layers() {
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"model", {"model"}},
      // tuner_plugin/: the C library NCCL loads where syncoll is not installed; nothing of ours.
      {"tuner_plugin", {"tuner_plugin"}},
      {"simulator", {"simulator", "model"}},
      // nccl/: NCCL as a model, above the engine and the system model it runs on.
      {"nccl", {"nccl", "simulator", "model"}},
      {"verifier", {"verifier", "model"}},
      // mscclpp/: MSCCL++ execution plans, read, verified with verifier/'s verdicts and timed
      // on simulator/'s network.
      {"mscclpp", {"mscclpp", "simulator", "verifier", "model"}},
      {"synth", {"synth", "verifier", "model"}},
      {"lowering", {"lowering", "verifier", "model"}},
      // backend/: the executors; only verified programs reach them.
      {"backend", {"backend", "verifier", "model"}},
      {"compose", {"compose", "lowering", "nccl", "simulator", "verifier", "model"}},
      {"study",
       {"study", "examples", "viz", "compose", "lowering", "synth", "nccl", "simulator", "verifier",
        "model"}},
      {"viz", {"viz", "mscclpp", "simulator", "verifier", "model"}},
      // testing/ (generators and laws for property tests) may exercise every library below cli/.
      {"testing",
       {"testing", "compose", "backend", "lowering", "synth", "nccl", "simulator", "verifier",
        "model"}},
      // examples/ (the DSL example programs) sits beside cli/ at the top: cli runs them; its
      // consumer project (examples/consumer) uses the installed package, syncoll::testing too.
      {"examples",
       {"examples", "testing", "viz", "compose", "backend", "lowering", "synth", "nccl",
        "simulator", "verifier", "model"}},
      {"cli",
       {"cli", "examples", "testing", "viz", "study", "compose", "backend", "lowering", "synth",
        "nccl", "mscclpp", "simulator", "verifier", "model"}},
  };
  return kAllowed;
}

// Foreign headers and the only place each may be included from.
struct ForeignRule {
  std::regex header;
  std::string owner; ///< path prefix allowed to include it
  bool sources_only; ///< only from .cpp files (Boost.Graph must not leak through headers)
  std::string what;
};

const std::vector<ForeignRule> &foreign_rules() {
  static const std::vector<ForeignRule> kRules = {
      {std::regex(R"(^z3(\+\+)?\.h$)"), "synth/", false, "z3"},
      {std::regex(R"(^cadical\.hpp$)"), "synth/", false, "CaDiCaL"},
      {std::regex(R"(^(graphviz/|gvc\.h|cgraph\.h))"), "viz/", false, "Graphviz"},
      {std::regex(R"(^(cuda|nccl)[a-z0-9_]*(\.h|/))"), "backend/", false, "CUDA and NCCL"},
      {std::regex(R"(^boost/graph/)"), "", true, "Boost.Graph"},
      {std::regex(R"(^boost/multiprecision/)"), "", true, "Boost.Multiprecision"},
  };
  return kRules;
}

} // namespace

std::vector<Violation> check_layering(const std::string &root) {
  namespace fs = std::filesystem;
  std::vector<Violation> out;
  const std::regex include_re(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  for (const auto &[layer, allowed] : allowed_layers()) {
    fs::path dir = fs::path(root) / layer;
    if (!fs::is_directory(dir))
      continue;
    std::vector<fs::path> files;
    for (const auto &entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file() &&
          (entry.path().extension() == ".h" || entry.path().extension() == ".cpp" ||
           entry.path().extension() == ".c"))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto &path : files) {
      const std::string rel = fs::relative(path, root).generic_string();
      std::ifstream in(path);
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re))
          continue;
        const std::string header = m[2];
        if (m[1] == "\"") {
          const auto slash = header.find('/');
          const std::string target = slash == std::string::npos ? "" : header.substr(0, slash);
          if (allowed_layers().count(target) && !allowed.count(target))
            out.push_back({rel, number,
                           "layer '" + layer + "' includes \"" + header + "\" from layer '" +
                               target + "', which is not below it"});
          continue;
        }
        for (const auto &rule : foreign_rules()) {
          if (!std::regex_search(header, rule.header))
            continue;
          if (!rule.owner.empty() && rel.rfind(rule.owner, 0) != 0)
            out.push_back({rel, number,
                           rule.what + " (<" + header +
                               ">) may only be included "
                               "under " +
                               rule.owner});
          if (rule.sources_only && path.extension() != ".cpp")
            out.push_back({rel, number,
                           rule.what + " (<" + header +
                               ">) may only be included "
                               "from .cpp files"});
        }
      }
    }
  }
  return out;
}

} // namespace syncoll::layering
