// Running a verified program with real data: what every executor of the device tables takes and
// reports. The CPU executor (here) runs the tables on host threads, one per thread block, with the
// protocol a GPU interpreter uses (backend/interpreter.h is the same source in both): bounded
// FIFOs per connection whose slots are handed over with release/acquire counters, per-thread-block
// flags published with release stores and awaited with acquire loads, the executor's tiling loop
// and count splitting. The CUDA executor (backend/cuda_executor.h) runs the same tables on a
// GPU. Inputs are filled with a seeded pattern and every output the collective defines is compared
// with a host reference. A run that stops making progress is stopped by a watchdog and reported
// with where each thread block waits, never left hanging.
#pragma once

#include "backend/element.h"
#include "backend/instruction_table.h"
#include "model/diagnostics.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::backend {

std::optional<DataType> parse_data_type(std::string_view name);
std::string_view data_type_name(DataType type);
int data_type_bytes(DataType type);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);
std::string_view reduce_op_name(ReduceOp op);

struct RunOptions {
  /// The call's size as nccl-tests counts it (the larger buffer of one rank).
  int64_t size_bytes = 1 << 20;
  DataType type = DataType::I32;
  ReduceOp op = ReduceOp::Sum;
  uint64_t seed = 1;
  /// No step completes anywhere for this long: the run is declared hung.
  std::chrono::milliseconds watchdog{3000};
};

/// Where a thread block stood when the watchdog stopped a run.
struct BlockedBlock {
  RankId rank;
  TbId tb;
  int step = 0;
  int iteration = 0;
  std::string waiting_for; ///< "a message on connection 0->1 channel 0", "tb 2's flag", ...
};

struct RunReport {
  bool completed = false;            ///< every thread block finished every iteration
  std::vector<BlockedBlock> blocked; ///< when not completed
  int64_t chunk_bytes = 0;
  int iterations = 0; ///< tiling iterations of the executor's loop
  size_t elements_checked = 0;
  size_t mismatches = 0;
  std::vector<std::string> first_mismatches; ///< at most 8, readable
  double seconds = 0;
  bool correct() const { return completed && mismatches == 0; }
};

/// Element count per chunk of a run of `options.size_bytes`; fails (bad input) for a size that
/// does not cut into whole elements per chunk.
[[nodiscard]] Expected<int64_t> chunk_elements_for(const ExecutableProgram &program,
                                                   const RunOptions &options);

/// Fails (bad input) for a size that does not cut into whole elements per chunk, and for more
/// thread blocks than the CPU executor starts host threads for.
[[nodiscard]] Expected<RunReport> run_on_cpu(const ExecutableProgram &program,
                                             const RunOptions &options);

} // namespace syncoll::backend
