// MSCCL++ execution plans read from their JSON (docs/formats.md, "MSCCL++ execution plans").
#pragma once

#include "model/diagnostics.h"
#include "model/json_document.h"
#include "mscclpp/plan.h"

#include <string>
#include <string_view>

namespace syncoll::mscclpp {

/// The plan in `text` (the contents of `file`), checked as the executor indexes it: GPU and
/// thread-block ids in order, known operations on channels they run on, every channel, remote
/// buffer, semaphore and chunk range an operation names present. A malformed or inconsistent
/// plan is one located error. Keys the reader does not know are passed over, as the executor
/// passes them over (plans gain fields from release to release).
[[nodiscard]] Expected<ExecutionPlan> read_execution_plan(std::string_view text,
                                                          const std::string &file);
/// Whether JSON text is an MSCCL++ plan rather than an MSCCL-IR program: both list "gpus", a
/// plan names its "collective" (MSCCL-IR its "coll").
[[nodiscard]] bool is_execution_plan(std::string_view text);
/// The same of JSON already parsed.
[[nodiscard]] bool is_execution_plan(const JsonView &root);
/// The same from a file.
[[nodiscard]] Expected<ExecutionPlan> read_execution_plan_file(const std::string &path);

/// The plan as MSCCL++'s executor reads it (the fields read_execution_plan reads, in the
/// executor's spelling), canonical JSON: writing what was read gives the same plan back.
[[nodiscard]] std::string execution_plan_json(const ExecutionPlan &plan);

} // namespace syncoll::mscclpp
