// The parts of `syncoll simulate` (simulate_command.cpp) that run NCCL: its baselines on a
// topology (-t) and on a --system, with NCCL's graph files, for simulate_nccl.cpp and the command.
#pragma once

#include "cli/cli_support.h"
#include "mscclpp/plan.h"
#include "nccl/run.h"
#include "nccl/steps.h"
#include "nccl/version.h"
#include "simulator/result.h"
#include "simulator/system_model.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::cli::simulate {

struct SimulateArgs {
  std::string input;
  std::string baseline;
  std::string system;
  TopologyOptions topology;
  std::string collective;
  std::optional<int> chunk_factor;
  std::optional<int> root;
  std::string size = "1MiB";
  std::string protocol;
  std::string preset;
  std::string mode;      ///< empty: sync
  std::string lowering;  ///< algorithms on a system: kernel (empty too) or copy-engine
  std::string switching; ///< empty: cut-through
  std::string sharing;
  std::optional<double> sharing_window_us; ///< none: the system's default, else exact
  int channels = 0;                        ///< 0: the channels NCCL's search gives
  int min_ctas = 0;         ///< NCCL_MIN_CTAS: at least this many channels a call (0: NCCL's count)
  std::string nccl_version; ///< empty: the newest release modelled
  bool collnet = false;     ///< NCCL_COLLNET_ENABLE=1 (forced CollNet implies it)
  bool no_tuner_plugin = false; ///< NCCL's own choice where the system's plugin would pick
  bool no_nvls = false;         ///< NCCL_NVLS_ENABLE=0: no NVLS or NVLS tree, rings on all channels
  nccl::NcclVersion nccl_release = nccl::kNewestNcclVersion; ///< nccl_version, found
  bool streamed = false;
  std::string trace;
  std::string csv;
  std::string nccl_graph;       ///< NCCL's graph file: its rings instead of the search's
  std::string write_nccl_graph; ///< write the ring graph NCCL's search found as its graph file
  bool syncoll_rings = false;   ///< syncoll's own ring search instead of NCCL's
  bool nccl_tests = false;      ///< print nccl-tests' table instead of ours
  std::string nccl_tests_json;  ///< write nccl-tests' JSON (-J) here
};

struct Row {
  int64_t size;
  simulator::SimulationResult result;
  bool deadlocked = false;
  std::string choice; ///< NCCL's choice, as NCCL_DEBUG=INFO reports it
  /// Where NCCL's choice was simulated: a forced algorithm that simulates faster than it.
  std::string faster_forced;
};

// NCCL's ring streamed as a step-synchronous schedule (nccl/steps.h).
struct StreamedRing {
  nccl::NcclRingSteps steps;
  CollectiveKind kind;
};

// What is simulated: a program (from a file or an NCCL baseline), an algorithm, or NCCL's ring
// streamed.
struct Subject {
  std::optional<Program> program;
  std::optional<Algorithm> algorithm;
  std::string what;
  std::optional<StreamedRing> streamed = std::nullopt;
  /// A graph file whose rings NCCL could not run on the topology: the verdict, nothing simulated.
  std::optional<Diagnostic> broken_graph = std::nullopt;
  /// An MSCCL++ execution plan (mscclpp/simulate_plan.h times it).
  std::optional<mscclpp::ExecutionPlan> plan = std::nullopt;
};

/// The NCCL algorithm a --baseline name forces; none for `nccl` (NCCL's own choice).
std::optional<nccl::NcclAlgorithm> forced_algorithm(const std::string &baseline);

/// NCCL's program (or its streamed ring) for --baseline on a topology (-t), with a graph file's
/// rings where --nccl-graph gives one; a broken graph file is the subject's verdict.
[[nodiscard]] Expected<Subject> baseline_subject(const SimulateArgs &a, const Topology &topology,
                                                 std::optional<Protocol> protocol);

/// NCCL on a --system: the search's rings and trees or a graph file's, what came from the file,
/// and the verdict on a file NCCL could not run there.
struct SystemMachine {
  nccl::NcclMachine machine;
  std::string from_file;          ///< ", rings and trees of graph file F", or empty
  std::vector<std::string> notes; ///< how the run differs from what the file says NCCL runs
  std::optional<Diagnostic> broken;
};
[[nodiscard]] Expected<SystemMachine> system_machine(const SimulateArgs &a,
                                                     const simulator::SystemModel &system);

/// NCCL's choice per size (or the algorithm forced) on a system, simulated.
[[nodiscard]] Expected<std::vector<Row>> simulate_nccl_sizes(const SimulateArgs &a,
                                                             const simulator::SystemModel &system,
                                                             const nccl::NcclMachine &machine,
                                                             std::optional<Protocol> protocol,
                                                             const std::vector<int64_t> &sizes);

} // namespace syncoll::cli::simulate
