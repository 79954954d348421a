// model/: the value types every other layer shares, the tables of facts about collectives,
// step types and runtimes, and the file formats. Read this first.
//
// In the order data flows:
//   ids.h, diagnostics.h   strong ids and units; Expected<T> and located Diagnostics for bad input
//   fraction.h             exact rationals for bounds (rounds per chunk, cut ratios)
//   text.h                 how names match (name_key) and sizes print (format_size)
//   invariant.h            always-on checks for syncoll's own bugs (never for input)
//   topology.h             ranks, links (capacity, alpha, bandwidth), bandwidth relations
//   topology_library.h     DGX-1, DGX-2, DGX A100/H100, AMD boxes, multi-node, regular shapes
//   topology_json.h        topology files
//   collective.h           collectives as pre/post chunk places; make_collective, custom JSON
//   collective_traits.h    one row per collective kind: sizes, in-place aliasing, executor and
//                          nccl-tests conventions; collective_for_program, in_place_slot
//   algorithm.h            k-synchronous algorithms and their independent checker
//   cut_certificate.h      the cut bound of Allgather / ReduceScatter: exact bandwidths, cuts
//                          and flows, and their checks
//   linear_bound.h         a linear program's lower bound from its dual multipliers, checked in
//                          exact arithmetic (weak duality)
//   program.h              the thread-block IR (one-to-one with MSCCL-IR) and the step-type table
//   runtime_constants.h    one row per protocol: FIFO depth, payload share, NCCL's constants
//   hardware.h             one row per GPU generation (NCCL's constants, calibrated physics) and
//                          per system (DGX presets and machines as measured)
//   mscclir.h              MSCCL-IR XML and its JSON form; read_program_file reads either
//   json_document.h        JSON with text positions, for located errors
//
// Entry points: make_library_topology / read_topology_file, make_collective /
// read_collective_file, read_algorithm_file, read_program_file. docs/architecture.md places this
// layer among the others; docs/formats.md specifies every file format.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/collective_traits.h"
#include "model/cut_certificate.h"
#include "model/diagnostics.h"
#include "model/fraction.h"
#include "model/hardware.h"
#include "model/ids.h"
#include "model/invariant.h"
#include "model/json_document.h"
#include "model/linear_bound.h"
#include "model/mscclir.h"
#include "model/program.h"
#include "model/runtime_constants.h"
#include "model/text.h"
#include "model/topology.h"
#include "model/topology_json.h"
#include "model/topology_library.h"
