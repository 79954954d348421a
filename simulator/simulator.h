// simulator/: how long an algorithm or a thread-block program takes on a topology. Read this
// first; docs/cost-model.md says what time is charged for and what is not modelled.
//
//   cost_model.h      per-protocol efficiency, FIFO depth, pipeline tiling, latencies, copy and
//                     reduction rates (defaults from model/runtime_constants.h)
//   program_sim.h     simulate_program: thread blocks, FIFOs, dependencies, pipeline iterations,
//                     for the executor's message size nBytes
//   algorithm_sim.h   simulate_algorithm: k-synchronous steps or dataflow, for a per-rank input
//   system_model.h    a calibrated machine (model/hardware.h): topology at payload rates, costs
//   result.h          completion time, algorithm and bus bandwidth, link bytes, Chrome traces
//   network.h         links, switches and bandwidth relations as resources (first-come or max-min
//                     fair), routes through switch fabrics
//   event_queue.h     the deterministic discrete-event queue
//   rank_symmetry.h   a program and machine alike from every rank (or node): one simulated
//
// NCCL as a model (its search, tuning, algorithms and runs) is nccl/, above this engine.
//
// Depends on model/ only, and never on verifier/ (see verifier/verifier.h).
#pragma once

#include "simulator/algorithm_sim.h"
#include "simulator/cost_model.h"
#include "simulator/event_queue.h"
#include "simulator/network.h"
#include "simulator/program_sim.h"
#include "simulator/result.h"
#include "simulator/system_model.h"
