// simulator/: how long an algorithm or a thread-block program takes on a topology. Read this
// first; docs/cost-model.md says what time is charged for and what is not modelled.
//
//   cost_model.h      per-protocol efficiency, FIFO depth, pipeline tiling, latencies, copy and
//                     reduction rates (defaults from model/runtime_constants.h; nccl_preset())
//   program_sim.h     simulate_program: thread blocks, FIFOs, dependencies, pipeline iterations,
//                     for the executor's message size nBytes
//   algorithm_sim.h   simulate_algorithm: k-synchronous steps or dataflow, for a per-rank input
//   baselines.h       NCCL's ring, tree, PAT and point-to-point algorithms as programs, and
//                     NCCL's ring formula
//   system_model.h    a calibrated machine (model/hardware.h): topology at payload rates, costs
//   nccl_search.h     NCCL's topology search: rings per channel, speeds, channels
//   nccl_tuning.h     NCCL's tuning model: every algorithm and protocol's time, its choice
//   nccl_run.h        NCCL as NCCL runs it on a system: search, choice, simulated run
//   nccl_steps.h      NCCL's ring and tree as streamed step schedules, for cluster scale
//   result.h          completion time, algorithm and bus bandwidth, link bytes, Chrome traces
//   network.h         links, switches and bandwidth relations as resources (first-come or max-min
//                     fair), routes through switch fabrics
//   event_queue.h     the deterministic discrete-event queue
//
// Depends on model/ only, and never on verifier/ (see verifier/verifier.h).
#pragma once

#include "simulator/algorithm_sim.h"
#include "simulator/baselines.h"
#include "simulator/cost_model.h"
#include "simulator/event_queue.h"
#include "simulator/nccl_run.h"
#include "simulator/nccl_search.h"
#include "simulator/nccl_steps.h"
#include "simulator/nccl_tuning.h"
#include "simulator/network.h"
#include "simulator/program_sim.h"
#include "simulator/result.h"
#include "simulator/system_model.h"
