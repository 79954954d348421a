// The NCCL transport of the CUDA executor: one process per GPU and rank, peers reached through
// NCCL symmetric memory. Each process allocates its rank's arena and communication area with
// ncclMemAlloc and registers both as symmetric windows; the interpreter kernel then reaches a
// peer's memory by the window's load/store (LSA) address, so every rank must share one LSA team
// (one node with P2P between its GPUs). Launches are separated by a one-element ncclAllReduce on
// the stream, so no rank's direct puts of one launch land in a peer still running the previous.
//
// Bootstrap: rank 0 creates the NCCL unique id and writes it to a file; the other ranks wait for
// that file and read it (a shared file system, or one machine). Give a path that does not exist
// yet: a stale file from an earlier run would hand out an old id.
#pragma once

#include "backend/cuda_executor.h"

#include <array>
#include <chrono>
#include <string>

namespace syncoll::backend {

struct NcclRunOptions {
  CudaRunOptions cuda;
  int rank = 0;
  std::string id_file;
  std::chrono::seconds bootstrap_timeout{120};
  int device = -1; ///< CUDA device of this process; -1: rank modulo the device count
};

/// Runs this process's rank of `program`; checks that rank's outputs. Fails for bad input (rank
/// out of range, size that does not cut into elements), for no GPU, for a bootstrap that times
/// out, and for ranks that do not share one LSA team.
[[nodiscard]] Expected<CudaReport> run_on_nccl(const ExecutableProgram &program,
                                               const NcclRunOptions &options);

/// NCCL's device API on one rank of this GPU (allocation, symmetric window, device communicator,
/// LSA barrier and pointer in a kernel): what the transport is built on, checked on its own.
[[nodiscard]] Expected<void> nccl_device_api_check();

/// The NCCL release this process loads, "2.28.9": NCCL is loaded at run time, from the library
/// path's libnccl.so.2 or the file SYNCOLL_NCCL_LIBRARY names. Fails with why where none loads
/// or this build has no NCCL transport.
[[nodiscard]] Expected<std::string> nccl_release();

/// An NCCL unique id's bytes (ncclUniqueId is 128 bytes).
using UniqueIdBytes = std::array<char, 128>;
/// Writes `id` to `path` whole (a temporary file renamed into place), so a reader never sees part.
[[nodiscard]] Expected<void> write_unique_id(const std::string &path, const UniqueIdBytes &id);
/// Waits up to `timeout` for `path` to hold a whole id, then reads it.
[[nodiscard]] Expected<UniqueIdBytes> read_unique_id(const std::string &path,
                                                     std::chrono::milliseconds timeout);

} // namespace syncoll::backend
