// NCCL as NCCL runs it on a system: the topology search, the tuning model's choice of algorithm,
// protocol and channels for the message size, and the simulated time of that choice. Ring and
// tree run as thread-block programs through simulate_program; NVLS, whose reductions happen in
// the switch and have no thread-block form, runs as the closed form of docs/cost-model.md.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "simulator/nccl_search.h"
#include "simulator/nccl_tuning.h"
#include "simulator/result.h"
#include "simulator/system_model.h"

#include <optional>
#include <string>

namespace syncoll::simulator {

struct NcclRunOptions {
  std::optional<NcclAlgorithm> algorithm; ///< force one, as NCCL_ALGO does
  std::optional<Protocol> protocol;       ///< force one, as NCCL_PROTO does
  /// Run on this many channels, as NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS do (NCCL caps it at
  /// 32); the tuning model still chooses the algorithm and protocol for its own count.
  std::optional<int> channels;
};

struct NcclRun {
  NcclEstimate choice;
  std::string info; ///< the NCCL_DEBUG=INFO line of the choice
  SimulationResult result;
  bool closed_form = false; ///< NVLS: no program, the closed form
};

/// The NCCL graph and tuning input of a system.
struct NcclMachine {
  NcclRingGraph ring;
  NcclTuningInput tuning;
};
[[nodiscard]] Expected<NcclMachine> nccl_machine(const SystemModel &system);

/// NCCL's choice for `kind` at `bytes` (nccl-tests' size) and its simulated run; a failure when
/// NCCL has nothing for the collective on this machine, or nothing matches what was forced.
[[nodiscard]] Expected<NcclRun> simulate_nccl(CollectiveKind kind, int64_t bytes,
                                              const SystemModel &system, const NcclMachine &machine,
                                              const NcclRunOptions &options = {});

} // namespace syncoll::simulator
