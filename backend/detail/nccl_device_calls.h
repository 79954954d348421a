// Between the NCCL transport's host code (g++) and the code that needs NCCL's device API headers
// (nvcc, backend/nccl_kernels.cu).
#pragma once

#include "backend/device_tables.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <string>

namespace syncoll::backend::detail {

/// The size of the load/store-accessible (LSA) team `comm`'s rank belongs to: the ranks whose
/// memory its kernels reach directly.
[[nodiscard]] ncclResult_t lsa_team_size(ncclComm_t comm, int *size);

/// Writes into `table` (device memory) the address of every world rank's window `arena` and
/// `comm_area` at offset 0 as this rank's kernels reach them.
[[nodiscard]] cudaError_t fill_peer_bases(ncclWindow_t arena, ncclWindow_t comm_area, int ranks,
                                          device::RankBases *table);

/// NCCL's device API on a one-rank communicator, as NCCL's own device-API example drives it:
/// symmetric allocation, window registration, device communicator with an LSA barrier, a kernel
/// that synchronizes on the barrier and writes through the LSA pointer, the value read back.
/// Returns an empty string on success, else what failed.
[[nodiscard]] std::string nccl_device_api_one_rank();

} // namespace syncoll::backend::detail
