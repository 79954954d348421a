// nccl/: NCCL as a model, the baseline every "faster than NCCL" figure stands on. Read this first;
// docs/cost-model.md says what of NCCL is modelled and how it is calibrated.
//
//   topo_xml.h    NCCL's topology dump (NCCL_TOPO_DUMP_FILE) read as a machine
//   graph_xml.h   NCCL's graph file (NCCL_GRAPH_FILE): its ring graph written and read
//   nccl_tests.h  nccl-tests' output: its text and JSON written, its logs read
//   tuner_table.h tuner tables (NCCL's example plugin's CSV, NCCLX's) from a simulated sweep
//   search.h      NCCL's topology search: rings per channel, speeds, channels (over NVLink, and
//                 through PCIe switches and sockets where NVLink does not join every pair)
//   tuning.h      NCCL's tuning model: every algorithm and protocol's time, its choice per size
//   platform_tuner.h a tuner plugin's choice in its place (aws-ofi-nccl's on AWS's p5-p6)
//   algorithms.h  the programs of NCCL's ring, tree, PAT and point-to-point algorithms, and its
//                 ring formula
//   run.h         NCCL as NCCL runs it on a system: search, choice, simulated run
//   steps.h       NCCL's ring and tree as streamed step schedules, for cluster scale
//   preset.h      the cost model of NCCL's own kernels
//   version.h     the NCCL releases modelled (2.18 to 2.29) and the algorithms each one has
//
// Depends on simulator/ (the engine that runs the programs, and the system model) and model/.
#pragma once

#include "nccl/algorithms.h"
#include "nccl/graph_xml.h"
#include "nccl/nccl_tests.h"
#include "nccl/platform_tuner.h"
#include "nccl/preset.h"
#include "nccl/run.h"
#include "nccl/search.h"
#include "nccl/steps.h"
#include "nccl/topo_xml.h"
#include "nccl/tuner_table.h"
#include "nccl/tuning.h"
#include "nccl/version.h"
