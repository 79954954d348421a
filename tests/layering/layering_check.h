// The layering rule (docs/architecture.md, "Layers") as a check over a source tree: a file may
// include headers of its own layer and of the layers below it, and foreign libraries stay behind
// the one layer that owns them.
#pragma once

#include <string>
#include <vector>

namespace syncoll::layering {

struct Violation {
  std::string file; ///< relative to the root
  int line = 0;
  std::string message;
};

/// Scans model/, simulator/, verifier/, synth/, lowering/, viz/ and cli/ below `root` for .h and
/// .cpp files and reports every include that breaks the rules.
std::vector<Violation> check_layering(const std::string &root);

} // namespace syncoll::layering
