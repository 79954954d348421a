// Shared pieces of the `syncoll` subcommands: exit codes, diagnostics on stderr, resolving
// topology and collective arguments, and writing output files only once they are complete.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/hardware.h"
#include "model/program.h"
#include "model/text.h"
#include "model/topology.h"
#include "model/topology_library.h"
#include "simulator/system_model.h"
#include "verifier/verify.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

/// A long command's stages on stderr, "[  2.8 s] lower: verifying 2096128 steps", timed from
/// when it was made.
class StageProgress {
public:
  explicit StageProgress(std::string command);
  void operator()(std::string_view stage) const;

private:
  std::string command_;
  std::chrono::steady_clock::time_point start_;
};

/// Topology size options shared by the commands that take a topology.
struct TopologyOptions {
  std::string spec; ///< a library name or a topology JSON file
  TopologyParams params;
  std::string shape;  ///< "WxH" or "XxYxZ", parsed into params.shape
  std::string fabric; ///< a --system's network between nodes, by name (empty: the preset's)
  void add_to(CLI::App &command, bool positional, bool required);
  /// --fabric, for the commands that take --system.
  void add_fabric_to(CLI::App &command);
  /// A required --system (a preset, or an NCCL topology dump of a preset's node) and the options
  /// that change it: --nodes, --gpus, --nics, --nic-bandwidth, --fabric (build_system).
  void add_system_to(CLI::App &command, std::string &system, const std::string &help);
};

/// A library topology by name (with parameters in the spec itself, "torus2d --shape 4x4", or in
/// `params`; the options win where both give one), or a topology JSON file when `spec` names an
/// existing file or ends in ".json".
[[nodiscard]] Expected<Topology> resolve_topology(TopologyOptions &options);

/// A collective by name for `num_ranks` ranks, or a custom collective JSON file.
[[nodiscard]] Expected<CollectiveSpec> resolve_collective(const std::string &spec, int num_ranks,
                                                          int chunk_factor,
                                                          std::optional<int> root);

/// A standard collective's kind by name; an unknown name fails listing the known ones.
[[nodiscard]] Expected<CollectiveKind> standard_collective_kind(const std::string &name);

/// An algorithm file with the topology and collective it runs on.
struct AlgorithmInput {
  Algorithm algorithm;
  Topology topology;
  CollectiveSpec collective;
};

/// The topology an algorithm file at `path` runs on: `topology` when it names one, else the
/// file's; a sized library topology given without its size takes the file's rank count. A rank
/// count that differs from the file's is bad input, located at the file.
[[nodiscard]] Expected<Topology> topology_for_algorithm(const std::string &path,
                                                        const Algorithm &algorithm,
                                                        TopologyOptions topology);

/// Reads an algorithm JSON and resolves its topology and collective: each from the command line
/// when given there, else from the file's target. A file that names neither and no option for it
/// is a located error.
[[nodiscard]] Expected<AlgorithmInput> read_algorithm_input(const std::string &path,
                                                            TopologyOptions topology,
                                                            const std::string &collective,
                                                            std::optional<int> chunk_factor,
                                                            std::optional<int> root);

/// An algorithm's JSON naming the topology it was made for as `where` spells it: a topology file's
/// path, or a library name with its parameters ("torus2d --shape 4x4"), which every command that
/// reads the file rebuilds without a -t.
[[nodiscard]] std::string algorithm_file_text(Algorithm algorithm, const TopologyOptions &where);

/// Writes `content` to `path` through a temporary file renamed into place, so a failure leaves
/// no partial file; "-" writes to stdout.
[[nodiscard]] Expected<void> write_output(const std::string &path, const std::string &content);

/// An option check for an output file: "-" (stdout), or a path whose folder exists and can be
/// written and which is not itself a folder. Attached to every output option, so an output that
/// cannot be written is refused with one line before any work starts.
[[nodiscard]] CLI::Validator writable_file();
/// The same for an output folder: it exists and can be written, or its parent can (it is made).
[[nodiscard]] CLI::Validator writable_folder();

/// An option check for a number of at least `least` (and at most `most`), whose refusal prints
/// the bounds as a person writes them ("must be at least 0, got -5").
[[nodiscard]] CLI::Validator at_least(double least);
[[nodiscard]] CLI::Validator between(double least, double most);

/// A --root given for a program: its collective must be rooted and the root one of its ranks.
[[nodiscard]] Expected<void> check_program_root(std::optional<int> root, const Program &program);

/// An option's old spelling, kept for one release: hidden from --help, it sets the same value and
/// prints a one-line notice naming the new spelling.
template <class T>
void add_renamed_option(CLI::App &command, const std::string &old_name, const std::string &new_name,
                        T &value) {
  command.add_option(old_name, value)->group("")->each([old_name, new_name](const std::string &) {
    fmt::print(stderr, "syncoll: {} is now {}; the old spelling goes in the next release\n",
               old_name, new_name);
  });
}

/// Positive integers joined by `separator` ("4x4", "4,8"); none when any part is not one.
[[nodiscard]] std::optional<std::vector<int>> parse_int_list(const std::string &text,
                                                             char separator);
/// The system preset of that name; unknown names fail with the list of known ones.
[[nodiscard]] Expected<const SystemPreset *> system_preset(const std::string &name);

/// A system preset built as the options ask (SystemModel points at its preset, which lives here).
struct BuiltSystem {
  std::unique_ptr<SystemPreset> preset;
  simulator::SystemModel model;
  /// Where a system read from an NCCL topology dump got its node and NICs, as the output's
  /// heading says it (" (node of FILE, ...)"); empty for a named preset.
  std::string origin;
  /// The name `preset` views, for a dumped node of its own (nccl::DumpedSystem).
  std::shared_ptr<const std::string> preset_name;
  /// The preset's name and, for a dump, where its node and NICs came from.
  [[nodiscard]] std::string label() const { return std::string(preset->name) + origin; }
};

/// Whether the file is an MSCCL++ execution plan (JSON naming its "collective").
[[nodiscard]] Expected<bool> names_mscclpp_plan(const std::string &file);

/// Writes a verified program to `output` (nothing for an empty one) as `format` asks: "xml"
/// (MSCCL-IR) or "mscclpp" (an MSCCL++ execution plan, checked by verify_plan first: a plan that
/// does not verify is reported and not written, exit 1, as a lowering bug). The plan reaches
/// GPUs of other nodes of `topology` (the program's) through port channels.
[[nodiscard]] Expected<int> write_verified_program(const verifier::VerifiedProgram &verified,
                                                   const Topology &topology,
                                                   const std::string &output,
                                                   const std::string &format);

/// `--system NAME` with the topology options that change it: --nodes, --gpus (GPUs per node),
/// --nics (NICs per node), --nic-bandwidth (one NIC's line rate, GB/s) and --fabric. Every other
/// topology option is refused, naming it, as are counts below one and rates that are not positive.
[[nodiscard]] Expected<BuiltSystem> build_system(const std::string &name,
                                                 const TopologyOptions &options);

} // namespace syncoll::cli
