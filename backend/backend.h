// backend/: the executors, the last stage of the design: only a VerifiedProgram runs, on host
// threads or on a GPU. Read this first; docs/lowering.md, "Running a verified program", explains
// them.
//
//   instruction_table.h  the backends' input: device tables of a VerifiedProgram only
//                        (device_tables.h), with direct puts where they are safe
//   interpreter.h        the one interpreter of those tables, for host threads and nvcc
//   executor.h           run_on_cpu: the tables on host threads with real data, every output
//                        checked against a host reference, a watchdog for hangs
//   cuda_executor.h      the same on a GPU: every rank emulated on one GPU
//   nccl_transport.h     the same with one process per GPU through NCCL symmetric memory
//
// Depends on model/ and verifier/; CUDA and NCCL are included nowhere else in the project, and
// here only when the toolkit is there.
#pragma once

#include "backend/cuda_executor.h"
#include "backend/executor.h"
#include "backend/instruction_table.h"
#include "backend/nccl_transport.h"
