// NCCL loaded at run time: the host functions the transport calls, defined here as forwards to
// the libnccl.so.2 the machine has (dlopen on first use, found on the library path, or the file
// SYNCOLL_NCCL_LIBRARY names). Nothing of
// syncoll links NCCL, so a build carries no NCCL of its own and runs against whichever release
// the machine has (a GPU machine's Python wheel, a system install); what needs a newer release
// than the one found says so instead of failing to start.
#include "backend/detail/nccl_library.h"

#include <cstdlib>
#include <dlfcn.h>
#include <fmt/format.h>
#include <nccl.h>

namespace syncoll::backend::detail {
namespace {

// SYNCOLL_NCCL_LIBRARY names a library file to use instead of the library path's libnccl.so.2
// (a Python wheel's, say).
const char *nccl_file() {
  const char *path = std::getenv("SYNCOLL_NCCL_LIBRARY");
  return path && *path ? path : "libnccl.so.2";
}

// The dynamic linker's own state is process-wide: the handle is looked up once and kept, as
// every later dlopen of the same file would return it.
void *nccl_handle() {
  static void *const handle = dlopen(nccl_file(), RTLD_NOW | RTLD_LOCAL);
  return handle;
}

template <class Fn> Fn resolve(const char *name) {
  void *handle = nccl_handle();
  return handle ? reinterpret_cast<Fn>(dlsym(handle, name)) : nullptr;
}

} // namespace

Expected<int> nccl_library_version() {
  if (!nccl_handle()) {
    const char *why = dlerror();
    return fail({}, fmt::format("NCCL does not load ({}: {}; SYNCOLL_NCCL_LIBRARY names another "
                                "file)",
                                nccl_file(), why ? why : "not found"));
  }
  auto get_version = resolve<ncclResult_t (*)(int *)>("ncclGetVersion");
  int version = 0;
  if (!get_version || get_version(&version) != ncclSuccess)
    return fail({}, "libnccl.so.2 answers no version");
  return version;
}

std::string nccl_version_text(int code) {
  // NCCL_VERSION's encoding: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9.
  return code >= 20900 ? fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100)
                       : fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

} // namespace syncoll::backend::detail

// The forwards. A function the loaded release lacks answers ncclInvalidUsage (and its error
// string says so), as calling a missing symbol must not crash.
#define SYNCOLL_NCCL_FORWARD(name, params, args)                                                   \
  extern "C" ncclResult_t name params {                                                            \
    using Fn = ncclResult_t(*) params;                                                             \
    static const Fn fn = syncoll::backend::detail::resolve<Fn>(#name);                             \
    return fn ? fn args : ncclInvalidUsage;                                                        \
  }

SYNCOLL_NCCL_FORWARD(ncclGetVersion, (int *version), (version))
SYNCOLL_NCCL_FORWARD(ncclGetUniqueId, (ncclUniqueId * id), (id))
SYNCOLL_NCCL_FORWARD(ncclCommInitRank, (ncclComm_t * comm, int ranks, ncclUniqueId id, int rank),
                     (comm, ranks, id, rank))
SYNCOLL_NCCL_FORWARD(ncclCommFinalize, (ncclComm_t comm), (comm))
SYNCOLL_NCCL_FORWARD(ncclCommDestroy, (ncclComm_t comm), (comm))
SYNCOLL_NCCL_FORWARD(ncclMemAlloc, (void **ptr, size_t size), (ptr, size))
SYNCOLL_NCCL_FORWARD(ncclMemFree, (void *ptr), (ptr))
SYNCOLL_NCCL_FORWARD(ncclCommWindowRegister,
                     (ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int flags),
                     (comm, buff, size, win, flags))
SYNCOLL_NCCL_FORWARD(ncclCommWindowDeregister, (ncclComm_t comm, ncclWindow_t win), (comm, win))
SYNCOLL_NCCL_FORWARD(ncclAllReduce,
                     (const void *send, void *recv, size_t count, ncclDataType_t type,
                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),
                     (send, recv, count, type, op, comm, stream))
// The device communicator's two host calls (nccl_device/core.h, a CUDA header this file does
// not include): their arguments pass through as the pointers they are.
SYNCOLL_NCCL_FORWARD(ncclDevCommCreate, (ncclComm_t comm, const void *requirements, void *out),
                     (comm, requirements, out))
SYNCOLL_NCCL_FORWARD(ncclDevCommDestroy, (ncclComm_t comm, const void *dev_comm), (comm, dev_comm))

extern "C" const char *ncclGetErrorString(ncclResult_t result) {
  using Fn = const char *(*)(ncclResult_t);
  static const Fn fn = syncoll::backend::detail::resolve<Fn>("ncclGetErrorString");
  return fn ? fn(result) : "NCCL is not loaded, or lacks this call";
}
