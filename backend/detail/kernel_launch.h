// Between the CUDA executor's host code (g++) and the interpreter kernel (nvcc): the only calls
// that cross, so that host code needs the CUDA runtime's header and nothing of the device side.
#pragma once

#include "backend/device_tables.h"
#include "backend/element.h"

#include <cuda_runtime_api.h>

namespace syncoll::backend::device {
struct Tables;
}

namespace syncoll::backend::detail {

/// Threads of every interpreter block: 16 warps, as many as the MSCCL executor's Simple kernel
/// uses for data (it adds one warp for synchronization).
inline constexpr int kInterpreterThreads = 512;

/// Stops a run from the device: a block whose wait outlasts `watchdog_ns` sets `*abort`, and
/// every waiting block gives up once it sees it.
struct DeviceControl {
  uint32_t *abort = nullptr;
  uint64_t watchdog_ns = 0;
};

/// Blocks of the interpreter kernel for `type` and `op` that one SM holds at once.
[[nodiscard]] cudaError_t interpreter_blocks_per_sm(DataType type, ReduceOp op, int *blocks);

/// Launches blocks [first_block, first_block + blocks) of `tables` as one cooperative grid, so
/// that every block is resident while any waits (a grid too large fails, it does not hang).
[[nodiscard]] cudaError_t launch_interpreter(DataType type, const device::Tables &tables,
                                             int first_block, int blocks,
                                             const DeviceControl &control, cudaStream_t stream);

/// A copy kernel of 16-byte accesses over `bytes` (a multiple of 16), the device's ceiling for
/// the benchmark's comparison beside cudaMemcpyAsync.
[[nodiscard]] cudaError_t launch_copy(const void *src, void *dst, int64_t bytes,
                                      cudaStream_t stream);

} // namespace syncoll::backend::detail
