#include "backend/nccl_transport.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <thread>
#include <unistd.h>

#if SYNCOLL_HAVE_CUDA
#include "backend/detail/cuda_run.h"
#include "backend/detail/nccl_device_calls.h"
#include "backend/detail/nccl_library.h"

#include <nccl.h>
#endif

namespace syncoll::backend {

Expected<void> write_unique_id(const std::string &path, const UniqueIdBytes &id) {
  const std::string temporary = fmt::format("{}.{}.partial", path, ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(id.data(), std::streamsize(id.size()));
    if (!out)
      return fail({path}, "cannot write the NCCL unique id");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
    return fail({path}, fmt::format("cannot put the NCCL unique id in place: {}", error.message()));
  return {};
}

Expected<UniqueIdBytes> read_unique_id(const std::string &path, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::error_code error;
    if (std::filesystem::file_size(path, error) == sizeof(UniqueIdBytes) && !error) {
      UniqueIdBytes id{};
      std::ifstream in(path, std::ios::binary);
      in.read(id.data(), std::streamsize(id.size()));
      if (in)
        return id;
    }
    if (std::chrono::steady_clock::now() > deadline)
      return fail({path}, fmt::format("no NCCL unique id appeared within {} ms (rank 0 writes it)",
                                      timeout.count()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

#if !SYNCOLL_HAVE_CUDA

Expected<CudaReport> run_on_nccl(const ExecutableProgram &, const NcclRunOptions &) {
  return fail({}, *cuda_unavailable());
}
Expected<void> nccl_device_api_check() {
  return fail({}, *cuda_unavailable());
}
Expected<std::string> nccl_release() {
  return fail({}, *cuda_unavailable());
}

#else

namespace {

tl::unexpected<Diagnostics> nccl_failure(std::string_view what, ncclResult_t r) {
  return fail({}, fmt::format("{}: {}", what, ncclGetErrorString(r)));
}
#define SYNCOLL_NCCL(what, call)                                                                   \
  do {                                                                                             \
    if (ncclResult_t syncoll_nccl_r = (call); syncoll_nccl_r != ncclSuccess)                       \
      return nccl_failure(what, syncoll_nccl_r);                                                   \
  } while (0)

class NcclTransport final : public detail::Transport {
public:
  NcclTransport(ncclComm_t comm, RankId rank, int ranks)
      : comm_(comm), rank_(rank), ranks_(ranks) {}
  NcclTransport(const NcclTransport &) = delete;
  NcclTransport &operator=(const NcclTransport &) = delete;
  ~NcclTransport() override {
    for (ncclWindow_t w : windows_)
      (void)ncclCommWindowDeregister(comm_, w);
    for (void *p : symmetric_)
      (void)ncclMemFree(p);
    if (barrier_)
      (void)cudaFree(barrier_);
    (void)ncclCommFinalize(comm_);
    (void)ncclCommDestroy(comm_);
  }

  std::optional<RankId> only() const override { return rank_; }

  // Every rank calls this once, in the same order, with the same sizes: window registration is
  // collective, and symmetric windows are alike on every rank.
  Expected<device::RankBases> allocate(RankId, size_t arena_bytes, size_t comm_bytes) override {
    SYNCOLL_TRY(arena, symmetric(arena_bytes));
    SYNCOLL_TRY(comm_area, symmetric(comm_bytes));
    SYNCOLL_CUDA("communication area", cudaMemset(comm_area, 0, comm_bytes));
    SYNCOLL_CUDA("barrier", cudaMalloc(&barrier_, sizeof(int)));
    SYNCOLL_CUDA("barrier", cudaMemset(barrier_, 0, sizeof(int)));
    return device::RankBases{static_cast<char *>(arena), static_cast<char *>(comm_area)};
  }

  Expected<void> fill_bases(const std::vector<device::RankBases> &,
                            device::RankBases *table) override {
    SYNCOLL_CUDA("peer addresses",
                 detail::fill_peer_bases(windows_.at(0), windows_.at(1), ranks_, table));
    // Every rank's communication area is zero before any rank launches and writes into a peer's.
    SYNCOLL_CHECK(separate_launches(nullptr));
    SYNCOLL_CUDA("barrier", cudaStreamSynchronize(nullptr));
    return {};
  }

  Expected<void> separate_launches(cudaStream_t stream) override {
    SYNCOLL_NCCL("barrier (ncclAllReduce)",
                 ncclAllReduce(barrier_, barrier_, 1, ncclInt32, ncclSum, comm_, stream));
    return {};
  }

private:
  ncclComm_t comm_;
  RankId rank_;
  int ranks_;
  std::vector<void *> symmetric_;
  std::vector<ncclWindow_t> windows_;
  int *barrier_ = nullptr;

  Expected<void *> symmetric(size_t bytes) {
    void *p = nullptr;
    SYNCOLL_NCCL("ncclMemAlloc", ncclMemAlloc(&p, std::max<size_t>(bytes, 4096)));
    symmetric_.push_back(p);
    ncclWindow_t w{};
    SYNCOLL_NCCL("ncclCommWindowRegister",
                 ncclCommWindowRegister(comm_, p, std::max<size_t>(bytes, 4096), &w,
                                        NCCL_WIN_COLL_SYMMETRIC));
    windows_.push_back(w);
    return p;
  }
};

// The device API (symmetric windows, device communicators) came in NCCL 2.28.
Expected<int> nccl_with_device_api() {
  SYNCOLL_TRY(version, detail::nccl_library_version());
  constexpr int kDeviceApiSince = 22800;
  if (version < kDeviceApiSince)
    return fail({}, fmt::format("NCCL {} on this machine has no device API (it came in 2.28)",
                                detail::nccl_version_text(version)));
  // The device API's structures (ncclDevCommRequirements, ncclDevComm, the window) are compiled
  // in from this build's headers and change between minor releases (2.29 made the requirements a
  // versioned struct that 2.28's layout fails): only the headers' major.minor can be called.
  if (version / 100 != NCCL_VERSION_CODE / 100)
    return fail({},
                fmt::format("NCCL {} on this machine has no device API this build can call: "
                            "it was compiled with NCCL {}'s device structures, which change "
                            "between minor releases (SYNCOLL_NCCL_LIBRARY names a {}.{}.x "
                            "library)",
                            detail::nccl_version_text(version),
                            detail::nccl_version_text(NCCL_VERSION_CODE), NCCL_MAJOR, NCCL_MINOR));
  return version;
}

} // namespace

Expected<CudaReport> run_on_nccl(const ExecutableProgram &program, const NcclRunOptions &options) {
  const int ranks = program.program().num_ranks();
  if (options.rank < 0 || options.rank >= ranks)
    return fail({},
                fmt::format("rank {} is not a rank of this {}-rank program", options.rank, ranks));
  SYNCOLL_TRY(chunk_elements, chunk_elements_for(program, options.cuda.run));
  (void)chunk_elements;
  SYNCOLL_TRY(version, nccl_with_device_api());
  (void)version;
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess)
    return detail::cuda_failure("no usable CUDA device", e);
  if (devices == 0)
    return fail({}, "no CUDA device");
  SYNCOLL_CUDA("cudaSetDevice",
               cudaSetDevice(options.device >= 0 ? options.device : options.rank % devices));
  UniqueIdBytes id_bytes{};
  static_assert(sizeof(ncclUniqueId) == sizeof(UniqueIdBytes), "NCCL's unique id is 128 bytes");
  if (options.rank == 0) {
    ncclUniqueId id;
    SYNCOLL_NCCL("ncclGetUniqueId", ncclGetUniqueId(&id));
    std::memcpy(id_bytes.data(), &id, sizeof id);
    SYNCOLL_CHECK(write_unique_id(options.id_file, id_bytes));
  } else {
    SYNCOLL_TRY(read, read_unique_id(options.id_file, options.bootstrap_timeout));
    id_bytes = read;
  }
  ncclUniqueId id;
  std::memcpy(&id, id_bytes.data(), sizeof id);
  ncclComm_t comm;
  SYNCOLL_NCCL("ncclCommInitRank", ncclCommInitRank(&comm, ranks, id, options.rank));
  NcclTransport transport(comm, RankId(options.rank), ranks);
  int lsa = 0;
  SYNCOLL_NCCL("ncclDevCommCreate", detail::lsa_team_size(comm, &lsa));
  if (lsa != ranks)
    return fail({}, fmt::format("the NCCL transport reaches peers by load and store; this rank's "
                                "load/store team has {} of the program's {} ranks (ranks on "
                                "other nodes, or GPUs without P2P)",
                                lsa, ranks));
  return detail::run_with_transport(program, options.cuda, transport);
}

Expected<std::string> nccl_release() {
  SYNCOLL_TRY(version, detail::nccl_library_version());
  return detail::nccl_version_text(version);
}

Expected<void> nccl_device_api_check() {
  SYNCOLL_TRY(device, detail::current_device());
  (void)device;
  SYNCOLL_TRY(version, nccl_with_device_api());
  (void)version;
  const std::string failure = detail::nccl_device_api_one_rank();
  if (!failure.empty())
    return fail({}, "NCCL device API on one rank: " + failure);
  return {};
}

#endif

} // namespace syncoll::backend
