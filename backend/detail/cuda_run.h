// The CUDA executor's run, shared by its transports: what differs between all ranks on one GPU
// (emulation) and one rank per process and GPU (NCCL symmetric memory) is where a rank's arena and
// communication area are allocated, how the table of every rank's bases is filled in, which blocks
// this process launches, and what separates two launches.
#pragma once

#include "backend/cuda_executor.h"
#include "backend/device_tables.h"

#include <cuda_runtime_api.h>
#include <optional>

namespace syncoll::backend::detail {

[[nodiscard]] tl::unexpected<Diagnostics> cuda_failure(std::string_view what, cudaError_t e);

#define SYNCOLL_CUDA(what, call)                                                                   \
  do {                                                                                             \
    if (cudaError_t syncoll_cuda_e = (call); syncoll_cuda_e != cudaSuccess)                        \
      return ::syncoll::backend::detail::cuda_failure(what, syncoll_cuda_e);                       \
  } while (0)

/// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)" for the current device, or why there is none.
[[nodiscard]] Expected<std::string> current_device();

class Transport {
public:
  virtual ~Transport() = default;
  /// The rank this process runs, or nothing when it runs every rank.
  virtual std::optional<RankId> only() const = 0;
  /// Device memory for `rank`'s arena and communication area (the latter zeroed, and zeroed on
  /// every rank before any peer writes into it).
  [[nodiscard]] virtual Expected<device::RankBases> allocate(RankId rank, size_t arena_bytes,
                                                             size_t comm_bytes) = 0;
  /// Writes every rank's bases, as this process reaches them, into `table` (device memory) given
  /// the bases allocate() returned for the ranks here.
  [[nodiscard]] virtual Expected<void> fill_bases(const std::vector<device::RankBases> &local,
                                                  device::RankBases *table) = 0;
  /// Between two launches: every rank has finished the first before any starts the second.
  [[nodiscard]] virtual Expected<void> separate_launches(cudaStream_t stream) = 0;
};

[[nodiscard]] Expected<CudaReport> run_with_transport(const ExecutableProgram &program,
                                                      const CudaRunOptions &options,
                                                      Transport &transport);

} // namespace syncoll::backend::detail
