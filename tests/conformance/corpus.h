// The conformance corpus: programs in the conventions real compilers and runtimes write, each
// with the verdict it must get. Built here from syncoll's own generators (NCCL's rings, the
// lowered DSL examples, lowered synthesized algorithms) and rewritten into the other conventions
// found in the wild: both in-place declaration styles, RCCL's local operands in the fields the
// runtime ignores, size windows, both aliasing modes claimed at once, many channels, every
// protocol, 2 to 64 ranks. tests/data/conformance holds the files and MANIFEST.json; a test
// regenerates them and requires the committed files to be identical.
#pragma once

#include "model/collective.h"
#include "model/program.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::conformance {

struct CorpusEntry {
  std::string file;                           ///< under tests/data/conformance
  Program program;                            ///< written as MSCCL-IR XML
  std::optional<std::string> collective_file; ///< for `custom`: the collective JSON, same folder
  std::optional<CollectiveSpec> collective;   ///< written to collective_file
  std::vector<std::string> violated;          ///< properties that must be violated; all others hold
  std::string convention;                     ///< what it exercises, for the manifest
};

std::vector<CorpusEntry> build_corpus();

/// MANIFEST.json for the corpus: per file, its collective file, what must be violated and the
/// convention it exercises.
std::string corpus_manifest(const std::vector<CorpusEntry> &corpus);

} // namespace syncoll::conformance
