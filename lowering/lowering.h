// lowering/: from a chunk-level program to a verified thread-block program. Read this first;
// docs/lowering.md explains the DSL and every pass.
//
//   dsl.h             the chunk DSL: chunk(rank, buffer, index), copy, reduce, scratch buffers,
//                     placement hints; tracing checks every reference as it is used
//   from_algorithm.h  a synthesized Algorithm as a DSL program
//   by_connection.h   a synthesized Algorithm straight to a Program, one thread block per
//                     connection and lane: the lowering that reaches thousands of ranks
//   compile.h         lower(): the compiler passes (one file each under detail/), then the
//                     verifier; write_deployment_xml takes a VerifiedProgram only
//   dag_dot.h         the chunk and instruction DAGs as DOT
//
// What runs the programs it emits (device tables, the interpreter, the CPU and CUDA executors)
// is backend/ (backend/backend.h). Depends on model/ and verifier/.
#pragma once

#include "lowering/by_connection.h"
#include "lowering/compile.h"
#include "lowering/dag_dot.h"
#include "lowering/dsl.h"
#include "lowering/from_algorithm.h"
