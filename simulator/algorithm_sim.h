// Timed execution of an Algorithm (a k-synchronous schedule) under the alpha-beta model.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/topology.h"
#include "simulator/network.h"
#include "simulator/result.h"

#include <cstdint>

namespace syncoll::simulator {

enum class AlgorithmTiming {
  /// Every step starts when the slowest transfer of the previous one has arrived (SCCL's
  /// k-synchronous model; SCCL, section 3.6): time = sum over steps of max over links.
  StepSynchronous,
  /// Every send starts as soon as its chunk has arrived at its source and its link is free.
  Dataflow,
};

/// What the code that runs an algorithm charges beyond its links: zero for SCCL's bare
/// k-synchronous model; a lowering's costs otherwise (SystemModel::sccl_kernel, copy_engine).
struct ExecutorCosts {
  /// Once, before anything moves (a kernel launch).
  Picoseconds launch = 0;
  /// Before every step's sends (step-synchronous) or every send (dataflow): the flag a send
  /// waits on, or the host issuing a step.
  Picoseconds step_overhead = 0;
  /// After a reducing send arrives, its receiver combines it into its chunk; combines into the
  /// same chunk of a rank take turns, since they write the same buffer.
  Picoseconds combine = 0;
};

struct AlgorithmSimOptions {
  AlgorithmTiming timing = AlgorithmTiming::StepSynchronous;
  double efficiency = 1.0; ///< protocol payload share
  bool trace = false;
  /// Sends between ranks without a direct link follow a shortest route through other ranks.
  Switching switching = Switching::CutThrough;
  ExecutorCosts costs;
};

/// Simulates `algorithm` moving chunks of `size_bytes / collective.input_chunks()` bytes
/// (`size_bytes` is one rank's input buffer). A send between ranks without a link is routed
/// through other ranks; one to an unreachable rank, or of chunks and ranks the collective lacks,
/// is an error.
[[nodiscard]] Expected<SimulationResult> simulate_algorithm(const Algorithm &algorithm,
                                                            const Topology &topology,
                                                            const CollectiveSpec &collective,
                                                            int64_t size_bytes,
                                                            const AlgorithmSimOptions &options);

/// A schedule produced one step at a time, so that one with billions of sends needs memory for
/// a single step (plus the links): the simulator's memory stays proportional to links plus
/// chunks in flight.
class StepSource {
public:
  virtual ~StepSource() = default;
  virtual int num_steps() const = 0;
  /// Replaces `out` with the sends of `step`.
  virtual void sends(int step, std::vector<Send> &out) const = 0;
  /// Whether `step` sends what step - 1 sent: the same (source, destination) pairs, so the same
  /// routes and bytes (the chunks may differ). The step-synchronous engine then gives it the
  /// previous step's time without simulating it, when that step left every link idle at its end.
  /// A source says so only where it holds (the ring's steps, a pipeline's full middle).
  virtual bool repeats_previous(int /*step*/) const { return false; }
};

/// Step-synchronous simulation of a streamed schedule whose every send moves `chunk_bytes`:
/// links and relations are held as in Network, a step starts when the previous one's last
/// transfer has arrived, and repeated steps are not simulated again (StepSource::repeats_previous).
/// `events` counts the transfers simulated. Fails on a send between ranks without a route.
[[nodiscard]] Expected<SimulationResult>
simulate_steps(const StepSource &source, const Topology &topology, int64_t chunk_bytes,
               double efficiency, Switching switching = Switching::CutThrough);

} // namespace syncoll::simulator
