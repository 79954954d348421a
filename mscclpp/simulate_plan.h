// MSCCL++ plans timed under the cost model (docs/cost-model.md, "MSCCL++ plans"): the plan's one
// execution (the verifier's, detail/plan_execution.h) scheduled in time, each operation when its
// thread block's previous one and everything it waited for are done, its transfers booked first
// come first served on the links and ports of their routes.
#pragma once

#include "model/diagnostics.h"
#include "model/topology.h"
#include "mscclpp/plan.h"
#include "simulator/cost_model.h"
#include "simulator/result.h"

#include <cstdint>

namespace syncoll::mscclpp {

struct PlanSimulation {
  simulator::SimulationResult result;
  bool deadlocked = false; ///< some thread block never finishes (verify says where)
};

/// Times the plan at `size_bytes` (nccl-tests' size: the output for Allgather, the input for the
/// others; a chunk is its share of it) on `topology`, whose ranks are the plan's GPUs. A memory
/// channel's put, get or packet write moves its bytes over the route as its thread block goes
/// (packets twice the bytes: data and flag); a port channel's put is posted and its data lands
/// before the channel's next signal; a signal arrives after the route's latency and the model's
/// per-message latency; a local copy or reduction runs at one thread block's copy rate; an NVLS
/// operation crosses the GPU's switch port once. Every operation pays the model's step overhead.
/// A pipeline's body runs once over its chunks, with no overlap between its units. Fails when the
/// topology has another number of ranks or a GPU cannot reach a peer it sends to.
[[nodiscard]] Expected<PlanSimulation> simulate_plan(const ExecutionPlan &plan,
                                                     const Topology &topology, int64_t size_bytes,
                                                     const simulator::CostModel &model);

} // namespace syncoll::mscclpp
