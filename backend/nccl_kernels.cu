// The parts of the NCCL transport that need NCCL's device API (nccl_device.h): the LSA team's
// size, the peers' window addresses, and the one-rank device-API check.
#include "backend/detail/nccl_device_calls.h"

#include <cstring>
#include <nccl_device.h>
#include <vector>

namespace syncoll::backend::detail {
namespace {

__global__ void peer_bases(ncclWindow_t arena, ncclWindow_t comm_area, int ranks,
                           device::RankBases *table) {
  for (int r = int(threadIdx.x); r < ranks; r += int(blockDim.x))
    table[r] = {static_cast<char *>(ncclGetPeerPointer(arena, 0, r)),
                static_cast<char *>(ncclGetPeerPointer(comm_area, 0, r))};
}

// One CTA: meet the (one-rank) LSA barrier, write through the LSA pointer, meet it again.
__global__ void lsa_write(ncclWindow_t window, ncclDevComm dev_comm, int value, int count) {
  ncclLsaBarrierSession<ncclCoopCta> barrier(ncclCoopCta(), dev_comm, ncclTeamLsa(dev_comm),
                                             dev_comm.lsaBarrier, blockIdx.x);
  barrier.sync(ncclCoopCta(), cuda::memory_order_relaxed);
  int *data = static_cast<int *>(ncclGetLsaPointer(window, 0, dev_comm.lsaRank));
  for (int i = int(threadIdx.x); i < count; i += int(blockDim.x))
    data[i] = value + i;
  barrier.sync(ncclCoopCta(), cuda::memory_order_release);
}

std::string nccl_error(const char *what, ncclResult_t r) {
  return std::string(what) + ": " + ncclGetErrorString(r);
}
std::string cuda_error(const char *what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

} // namespace

ncclResult_t lsa_team_size(ncclComm_t comm, int *size) {
  ncclDevCommRequirements requirements;
  std::memset(&requirements, 0, sizeof requirements); // 2.28 has no initializer macro
  ncclDevComm dev_comm;
  if (ncclResult_t r = ncclDevCommCreate(comm, &requirements, &dev_comm); r != ncclSuccess)
    return r;
  *size = dev_comm.lsaSize;
  return ncclDevCommDestroy(comm, &dev_comm);
}

cudaError_t fill_peer_bases(ncclWindow_t arena, ncclWindow_t comm_area, int ranks,
                            device::RankBases *table) {
  peer_bases<<<1, 128>>>(arena, comm_area, ranks, table);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return e;
  return cudaDeviceSynchronize();
}

std::string nccl_device_api_one_rank() {
  constexpr int kCount = 1 << 16, kValue = 12345;
  ncclUniqueId id;
  if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
    return nccl_error("ncclGetUniqueId", r);
  ncclComm_t comm;
  if (ncclResult_t r = ncclCommInitRank(&comm, 1, id, 0); r != ncclSuccess)
    return nccl_error("ncclCommInitRank (1 rank)", r);
  std::string failure;
  void *buffer = nullptr;
  ncclWindow_t window{};
  ncclDevComm dev_comm{};
  bool have_window = false, have_dev_comm = false;
  std::vector<int> host(kCount);
  do {
    if (ncclResult_t r = ncclMemAlloc(&buffer, kCount * sizeof(int)); r != ncclSuccess) {
      failure = nccl_error("ncclMemAlloc", r);
      break;
    }
    if (ncclResult_t r = ncclCommWindowRegister(comm, buffer, kCount * sizeof(int), &window,
                                                NCCL_WIN_COLL_SYMMETRIC);
        r != ncclSuccess) {
      failure = nccl_error("ncclCommWindowRegister", r);
      break;
    }
    have_window = true;
    ncclDevCommRequirements requirements;
    std::memset(&requirements, 0, sizeof requirements);
    requirements.lsaBarrierCount = 1;
    if (ncclResult_t r = ncclDevCommCreate(comm, &requirements, &dev_comm); r != ncclSuccess) {
      failure = nccl_error("ncclDevCommCreate", r);
      break;
    }
    have_dev_comm = true;
    lsa_write<<<1, 256>>>(window, dev_comm, kValue, kCount);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      failure = cuda_error("launch", e);
      break;
    }
    if (cudaError_t e =
            cudaMemcpy(host.data(), buffer, kCount * sizeof(int), cudaMemcpyDeviceToHost);
        e != cudaSuccess) {
      failure = cuda_error("read back", e);
      break;
    }
    for (int i = 0; i < kCount && failure.empty(); ++i)
      if (host[size_t(i)] != kValue + i)
        failure = "element " + std::to_string(i) + " read back as " +
                  std::to_string(host[size_t(i)]) + ", written as " + std::to_string(kValue + i);
  } while (false);
  if (have_dev_comm)
    (void)ncclDevCommDestroy(comm, &dev_comm);
  if (have_window)
    (void)ncclCommWindowDeregister(comm, window);
  if (buffer)
    (void)ncclMemFree(buffer);
  (void)ncclCommFinalize(comm);
  (void)ncclCommDestroy(comm);
  return failure;
}

} // namespace syncoll::backend::detail
