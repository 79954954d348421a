// Timed execution of a thread-block program (docs/semantics.md) for one message size: thread
// blocks run their steps, messages wait for room in bounded FIFOs and hold links and bandwidth
// relations, dependencies wait for published flags, and the program repeats once per pipeline
// iteration. Written apart from verifier/; the two are cross-checked by property tests.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "model/topology.h"
#include "simulator/cost_model.h"
#include "simulator/result.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace syncoll::simulator {

struct ProgramSimOptions {
  /// The runtime's nBytes: count x type size x the collective's multiplier, cut into
  /// nchunksperloop chunks (docs/semantics.md, "Collectives").
  int64_t size_bytes = 1 << 20;
  CostModel model;
  std::optional<Protocol> protocol; ///< run as this protocol instead of the program's
  bool trace = false;
  /// With a collective, also compute symbolic buffer contents (iteration 0) in this aliasing.
  const CollectiveSpec *collective = nullptr;
  bool in_place = false;
  /// Where the program and the machine look alike from every rank (or node), simulate one and
  /// read the rest off it (rank_symmetry.h): the same times, ranks times fewer events. False:
  /// every rank (the property tests hold both equal).
  bool use_symmetry = true;
};

/// Contents of one output slot after the run, for comparison with another executor.
struct SymbolicSlot {
  bool defined = false;
  std::vector<Contribution> parts; ///< sorted multiset
  friend bool operator==(const SymbolicSlot &, const SymbolicSlot &) = default;
};

struct ProgramSimulation {
  SimulationResult result;
  bool deadlocked = false;
  int iterations = 0;
  std::vector<std::vector<SymbolicSlot>> outputs; ///< per rank, per output slot
};

/// Fails for a send or receive between ranks the topology does not link, or a program whose
/// rank count differs from the topology's.
[[nodiscard]] Expected<ProgramSimulation> simulate_program(const Program &program,
                                                           const Topology &topology,
                                                           const ProgramSimOptions &options);

} // namespace syncoll::simulator
