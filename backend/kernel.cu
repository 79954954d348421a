// The interpreter kernel: one CUDA block per thread block of the program, each running
// backend/interpreter.h over the device tables. One kernel per element type and reduction
// operator; the protocol is a uniform branch per message (every thread of a block takes the same
// side).
//
// Memory orders: counters other blocks (or other GPUs) read are stored by one thread after the
// block's barrier, behind a system-scope fence, with release; they are polled with acquire at
// system scope, then the block meets at a barrier before reading what they guard. LL lines are
// stored and loaded as one 16-byte volatile vector access, data and flags together, as NCCL's LL
// protocol does.
#include "backend/detail/kernel_launch.h"
#include "backend/interpreter.h"

#include <cuda/atomic>

namespace syncoll::backend::detail {
namespace {

__device__ inline uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

class DevicePlatform {
public:
  static constexpr bool kPacks = true;
  __device__ explicit DevicePlatform(const DeviceControl &control) : control_(control) {}
  __device__ int thread() const { return int(threadIdx.x); }
  __device__ int threads() const { return int(blockDim.x); }
  __device__ void barrier() const { __syncthreads(); }
  __device__ bool barrier_or(bool any) const { return __syncthreads_or(any ? 1 : 0) != 0; }
  __device__ uint64_t load_acquire(uint64_t *at) const {
    return cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*at).load(
        cuda::memory_order_acquire);
  }
  __device__ void store_release(uint64_t *at, uint64_t value) const {
    __threadfence_system();
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*at).store(value,
                                                                     cuda::memory_order_release);
  }
  __device__ void store_line(uint64_t *line, const uint32_t words[2], uint32_t flag) const {
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line), "r"(words[0]),
                 "r"(flag), "r"(words[1]), "r"(flag)
                 : "memory");
  }
  __device__ bool load_line(uint64_t *line, uint32_t flag, uint32_t words[2]) const {
    uint32_t d0, f0, d1, f1;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1)
                 : "l"(line)
                 : "memory");
    if (f0 != flag || f1 != flag)
      return false;
    words[0] = d0;
    words[1] = d1;
    return true;
  }
  __device__ void progress() const {}

  // Looks at the clock and the abort flag every 1024 polls; a wait past the watchdog stops the
  // whole grid, so a program that deadlocks returns with where it stood instead of hanging.
  class Waiter {
  public:
    __device__ explicit Waiter(const DeviceControl &control)
        : control_(control), start_(global_timer_ns()) {}
    __device__ bool keep_going() {
      if ((++polls_ & 1023) != 0)
        return true;
      volatile uint32_t *abort = control_.abort;
      if (*abort)
        return false;
      if (global_timer_ns() - start_ > control_.watchdog_ns) {
        atomicExch(control_.abort, 1u);
        return false;
      }
      return true;
    }

  private:
    const DeviceControl &control_;
    uint64_t start_;
    uint32_t polls_ = 0;
  };
  __device__ Waiter waiter() const { return Waiter(control_); }

private:
  const DeviceControl &control_;
};

template <class T, int kOp>
__global__ void __launch_bounds__(kInterpreterThreads)
    interpret(device::Tables tables, int first_block, DeviceControl control) {
  DevicePlatform platform(control);
  device::Interpreter<DevicePlatform, T, kOp>(platform, tables)
      .run_block(first_block + int(blockIdx.x));
}

__global__ void copy_packs(const uint4 *src, uint4 *dst, int64_t packs) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < packs; i += stride)
    dst[i] = src[i];
}

template <class T> const void *kernel_for(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return reinterpret_cast<const void *>(&interpret<T, int(ReduceOp::Sum)>);
  case ReduceOp::Prod:
    return reinterpret_cast<const void *>(&interpret<T, int(ReduceOp::Prod)>);
  case ReduceOp::Max:
    return reinterpret_cast<const void *>(&interpret<T, int(ReduceOp::Max)>);
  case ReduceOp::Min:
    return reinterpret_cast<const void *>(&interpret<T, int(ReduceOp::Min)>);
  }
  return nullptr;
}

// One kernel per element type and reduction operator; the protocol is a branch per message, not
// per element, so it stays a runtime value.
const void *interpreter_kernel(DataType type, ReduceOp op) {
  switch (type) {
  case DataType::I32:
    return kernel_for<int32_t>(op);
  case DataType::F32:
    return kernel_for<float>(op);
  case DataType::F16:
    return kernel_for<element::Half>(op);
  case DataType::BF16:
    return kernel_for<element::BFloat16>(op);
  }
  return nullptr;
}

} // namespace

cudaError_t interpreter_blocks_per_sm(DataType type, ReduceOp op, int *blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, interpreter_kernel(type, op),
                                                       kInterpreterThreads, 0);
}

cudaError_t launch_interpreter(DataType type, const device::Tables &tables, int first_block,
                               int blocks, const DeviceControl &control, cudaStream_t stream) {
  device::Tables t = tables;
  DeviceControl c = control;
  void *args[] = {&t, &first_block, &c};
  return cudaLaunchCooperativeKernel(interpreter_kernel(type, tables.op), dim3(unsigned(blocks)),
                                     dim3(kInterpreterThreads), args, 0, stream);
}

cudaError_t launch_copy(const void *src, void *dst, int64_t bytes, cudaStream_t stream) {
  int device = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      e != cudaSuccess)
    return e;
  copy_packs<<<unsigned(sms * 4), 512, 0, stream>>>(static_cast<const uint4 *>(src),
                                                    static_cast<uint4 *>(dst), bytes / 16);
  return cudaGetLastError();
}

} // namespace syncoll::backend::detail
