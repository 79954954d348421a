// Shared pieces of the `syncoll` subcommands: exit codes, diagnostics on stderr, resolving
// topology and collective arguments, and writing output files only once they are complete.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/hardware.h"
#include "model/text.h"
#include "model/topology.h"
#include "model/topology_library.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::cli {

/// Exit codes (docs/architecture.md, "Files and the CLI").
/// 3 is for a verdict that could not be decided (a solver or state limit): never success or
/// failure.
enum ExitCode : int { kSuccess = 0, kCheckFailed = 1, kBadInput = 2, kUnknown = 3 };

/// Prints every diagnostic on stderr, one line each; messages without a file get a
/// "syncoll: " prefix so every line says where it comes from.
void print_diagnostics(const Diagnostics &diagnostics);

/// A command's exit code: its own, or kBadInput once its diagnostics are printed.
int exit_code_or_bad_input(const Expected<int> &outcome);

/// Topology size options shared by the commands that take a topology.
struct TopologyOptions {
  std::string spec; ///< a library name or a topology JSON file
  TopologyParams params;
  std::string shape; ///< "WxH" or "XxYxZ", parsed into params.shape
  void add_to(CLI::App &command, bool positional, bool required);
};

/// A library topology by name, or a topology JSON file when `spec` names an existing file or ends
/// in ".json".
[[nodiscard]] Expected<Topology> resolve_topology(TopologyOptions &options);

/// A collective by name for `num_ranks` ranks, or a custom collective JSON file.
[[nodiscard]] Expected<CollectiveSpec> resolve_collective(const std::string &spec, int num_ranks,
                                                          int chunk_factor,
                                                          std::optional<int> root);

/// An algorithm file with the topology and collective it runs on.
struct AlgorithmInput {
  Algorithm algorithm;
  Topology topology;
  CollectiveSpec collective;
};

/// Reads an algorithm JSON and resolves its topology and collective: each from the command line
/// when given there, else from the file's target. A file that names neither and no option for it
/// is a located error.
[[nodiscard]] Expected<AlgorithmInput> read_algorithm_input(const std::string &path,
                                                            TopologyOptions topology,
                                                            const std::string &collective,
                                                            std::optional<int> chunk_factor,
                                                            std::optional<int> root);

/// Writes `content` to `path` through a temporary file renamed into place, so a failure leaves
/// no partial file; "-" writes to stdout.
[[nodiscard]] Expected<void> write_output(const std::string &path, const std::string &content);

/// Positive integers joined by `separator` ("4x4", "4,8"); none when any part is not one.
[[nodiscard]] std::optional<std::vector<int>> parse_int_list(const std::string &text,
                                                             char separator);
/// The system preset of that name; unknown names fail with the list of known ones.
[[nodiscard]] Expected<const SystemPreset *> system_preset(const std::string &name);

} // namespace syncoll::cli
