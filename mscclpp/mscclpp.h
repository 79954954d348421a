// mscclpp/: MSCCL++ execution plans, the JSON that MSCCL++'s DSL writes and its executor runs
// (and, through it, its NCCL-API shim, RCCL and serving stacks). Read this header first.
//
//   plan.h       the plan as values: per GPU its buffers in chunks, channels (memory, port,
//                switch), remote buffers, semaphores and thread blocks of operations; the table
//                of operations (op_traits.cpp: one row each, its name, what it does, the
//                channels it runs on)
//   plan_json.h  read_execution_plan: a plan from its JSON, checked as the executor indexes it,
//                one located error for a malformed or inconsistent plan
//   from_program.h plan_from_program: a verified MSCCL-IR program as a plan (syncoll lower
//                --format mscclpp)
//   simulate_plan.h simulate_plan: the plan timed under the cost model
//   verify_plan.h verify_plan: the plan's structure, deadlock freedom, race freedom and its
//                collective's postcondition, each a verdict with a readable counterexample
//
// What each operation reads and writes, here and in a peer's memory, and what signals, waits,
// flushes, barriers and semaphores order: docs/semantics.md, "MSCCL++ execution plans".
#pragma once

#include "mscclpp/from_program.h"
#include "mscclpp/plan.h"
#include "mscclpp/plan_json.h"
#include "mscclpp/simulate_plan.h"
#include "mscclpp/verify_plan.h"
