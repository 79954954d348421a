// The CUDA executor: the device tables of a verified program run by the interpreter kernel
// (backend/kernel.cu) on a GPU, checked against the same host reference as the CPU
// executor. Two transports reach a peer rank's memory:
//  - emulation: every rank's arena and communication area on one GPU, all ranks' thread blocks
//    launched as one cooperative grid, so that every block a wait depends on is resident; a grid
//    the GPU cannot hold at once is refused before launch;
//  - NCCL symmetric memory (backend/nccl_transport.h): one process per GPU.
// Builds without CUDA have the same calls; they report that the backend is not built.
#pragma once

#include "backend/executor.h"

#include <optional>
#include <string>

namespace syncoll::backend {

struct CudaRunOptions {
  RunOptions run;
  /// Launches after the checked one, timed together (0: time the checked launch alone). A launch
  /// of an in-place reduction reduces its previous output again: only the first is checked.
  int timed_launches = 0;
};

struct CudaReport {
  RunReport run;
  std::string device;            ///< "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"
  int blocks = 0;                ///< CUDA blocks of the grid, one per thread block
  int co_resident_blocks = 0;    ///< the most the GPU holds at once
  double seconds_per_launch = 0; ///< from CUDA events around the timed launches
};

/// Why this build or machine cannot run the CUDA executor, or nothing when it can. A machine
/// without a GPU makes CUDA report an error rather than zero devices; both land here.
[[nodiscard]] std::optional<std::string> cuda_unavailable();

/// The device, its driver and the CUDA runtime this build carries, in one line: "NVIDIA H100 80GB
/// HBM3 (sm_90, 132 SMs); driver CUDA 13.0, runtime 13.0"; why not, where there is no GPU.
[[nodiscard]] std::string cuda_device_facts();

/// GPUs this process can use (0 where cuda_unavailable() says why).
[[nodiscard]] int cuda_device_count();

/// The interpreter thread blocks the current GPU holds at once for this element type and operator
/// (blocks per SM x SMs): the most one grid may have, since a wait on a block that is not
/// resident never ends. Emulating every rank on one GPU needs every rank's blocks in it.
[[nodiscard]] Expected<int> co_resident_blocks(DataType type, ReduceOp op);

/// Runs `program` with every rank emulated on the current GPU. Fails (bad input) for a size that
/// does not cut into elements, when there is no usable GPU, and for a grid the GPU cannot hold at
/// once.
[[nodiscard]] Expected<CudaReport> run_emulated_on_cuda(const ExecutableProgram &program,
                                                        const CudaRunOptions &options);

/// The device's own copy bandwidth, for comparison: `bytes` copied device to device with
/// cudaMemcpyAsync and with a 16-byte copy kernel, `launches` times each, seconds per copy.
struct CopyCeiling {
  double memcpy_seconds = 0;
  double kernel_seconds = 0;
};
[[nodiscard]] Expected<CopyCeiling> measure_copy_ceiling(int64_t bytes, int launches);

} // namespace syncoll::backend
