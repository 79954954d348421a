// lowering/: from a chunk-level program to a verified thread-block program. Read this first;
// docs/lowering.md explains the DSL and every pass.
//
//   dsl.h             the chunk DSL: chunk(rank, buffer, index), copy, reduce, scratch buffers,
//                     placement hints; tracing checks every reference as it is used
//   from_algorithm.h  a synthesized Algorithm as a DSL program
//   compile.h         lower(): the compiler passes (one file each under detail/), then the
//                     verifier; write_deployment_xml takes a VerifiedProgram only
//   dag_dot.h         the chunk and instruction DAGs as DOT
//   cuda/instruction_table.h  the backend's input: device tables of a VerifiedProgram only
//                             (cuda/device_tables.h), with direct puts where they are safe
//   cuda/interpreter.h        the one interpreter of those tables, for host threads and nvcc
//   cuda/executor.h           run_on_cpu: the tables on host threads with real data, every
//                             output checked against a host reference, a watchdog for hangs
//   cuda/cuda_executor.h      the same on a GPU: every rank emulated on one GPU
//   cuda/nccl_transport.h     the same with one process per GPU through NCCL symmetric memory
//
// Depends on model/ and verifier/; CUDA and NCCL only inside cuda/, when the toolkit is there.
#pragma once

#include "lowering/compile.h"
#include "lowering/cuda/cuda_executor.h"
#include "lowering/cuda/executor.h"
#include "lowering/cuda/instruction_table.h"
#include "lowering/cuda/nccl_transport.h"
#include "lowering/dag_dot.h"
#include "lowering/dsl.h"
#include "lowering/from_algorithm.h"
