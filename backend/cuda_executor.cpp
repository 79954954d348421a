#include "backend/cuda_executor.h"

#include "backend/detail/run_data.h"

#if SYNCOLL_HAVE_CUDA
#include "backend/detail/cuda_run.h"
#include "backend/detail/kernel_launch.h"
#include "backend/interpreter.h"

#include <cuda_runtime_api.h>
#endif

namespace syncoll::backend {

#if !SYNCOLL_HAVE_CUDA

std::optional<std::string> cuda_unavailable() {
  return "this build of syncoll has no CUDA backend (configured without a CUDA toolkit, or with "
         "SYNCOLL_CUDA=OFF)";
}
Expected<CudaReport> run_emulated_on_cuda(const ExecutableProgram &, const CudaRunOptions &) {
  return fail({}, *cuda_unavailable());
}
Expected<CopyCeiling> measure_copy_ceiling(int64_t, int) {
  return fail({}, *cuda_unavailable());
}
Expected<int> co_resident_blocks(DataType, ReduceOp) {
  return fail({}, *cuda_unavailable());
}
int cuda_device_count() {
  return 0;
}
std::string cuda_device_facts() {
  return *cuda_unavailable();
}

#else

tl::unexpected<Diagnostics> detail::cuda_failure(std::string_view what, cudaError_t e) {
  return fail({}, fmt::format("{}: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e)));
}

Expected<std::string> detail::current_device() {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return cuda_failure("no usable CUDA device", e);
  if (count == 0)
    return fail({}, "no CUDA device");
  int device = 0;
  SYNCOLL_CUDA("cudaGetDevice", cudaGetDevice(&device));
  cudaDeviceProp prop{};
  SYNCOLL_CUDA("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
  if (!prop.cooperativeLaunch)
    return fail({},
                fmt::format("{} has no cooperative launch, which the executor needs", prop.name));
  return fmt::format("{} (sm_{}{}, {} SMs)", prop.name, prop.major, prop.minor,
                     prop.multiProcessorCount);
}

std::string cuda_device_facts() {
  auto device = detail::current_device();
  if (!device)
    return device.error().to_string();
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  return fmt::format("{}; driver CUDA {}.{}, runtime {}.{}", *device, driver / 1000,
                     driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
}

namespace {

using detail::cuda_failure;

// Device memory freed when it goes out of scope.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (data_)
      (void)cudaFree(data_);
  }
  [[nodiscard]] cudaError_t allocate(size_t bytes) {
    return cudaMalloc(&data_, std::max<size_t>(bytes, 16));
  }
  template <class T> [[nodiscard]] cudaError_t upload(std::span<const T> host) {
    if (cudaError_t e = allocate(host.size_bytes()); e != cudaSuccess)
      return e;
    return cudaMemcpy(data_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice);
  }
  template <class T> T *as() const { return static_cast<T *>(data_); }

private:
  void *data_ = nullptr;
};

class CudaEvent {
public:
  CudaEvent() { ok_ = cudaEventCreate(&event_) == cudaSuccess; }
  CudaEvent(const CudaEvent &) = delete;
  CudaEvent &operator=(const CudaEvent &) = delete;
  ~CudaEvent() {
    if (ok_)
      (void)cudaEventDestroy(event_);
  }
  cudaEvent_t get() const { return event_; }

private:
  cudaEvent_t event_{};
  bool ok_ = false;
};

// Every rank on this GPU: plain allocations, bases known on the host, and nothing between
// launches (one grid ends before the next starts).
class EmulationTransport final : public detail::Transport {
public:
  std::optional<RankId> only() const override { return std::nullopt; }
  Expected<device::RankBases> allocate(RankId, size_t arena_bytes, size_t comm_bytes) override {
    // Pointers, not references into buffers_: the second emplace_back may move the vector's
    // elements (a dangling reference here crashed the first run on a GPU).
    DeviceBuffer *arena = buffers_.emplace_back(std::make_unique<DeviceBuffer>()).get();
    SYNCOLL_CUDA("arena", arena->allocate(arena_bytes));
    DeviceBuffer *comm = buffers_.emplace_back(std::make_unique<DeviceBuffer>()).get();
    SYNCOLL_CUDA("communication area", comm->allocate(comm_bytes));
    SYNCOLL_CUDA("communication area", cudaMemset(comm->as<char>(), 0, comm_bytes));
    return device::RankBases{arena->as<char>(), comm->as<char>()};
  }
  Expected<void> fill_bases(const std::vector<device::RankBases> &local,
                            device::RankBases *table) override {
    SYNCOLL_CUDA("rank bases",
                 cudaMemcpy(table, local.data(), local.size() * sizeof(device::RankBases),
                            cudaMemcpyHostToDevice));
    return {};
  }
  Expected<void> separate_launches(cudaStream_t) override { return {}; }

private:
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
};

template <class T> class CudaRun {
public:
  CudaRun(const ExecutableProgram &e, const CudaRunOptions &o, int64_t chunk_elements,
          detail::Transport &transport)
      : e_(e), o_(o), transport_(transport), shape_(e.shape(chunk_elements, int(sizeof(T)))),
        arenas_(e, shape_, o.run, transport.only()) {
    for (size_t b = 0; b < e.blocks().size(); ++b)
      if (!transport.only() || transport.only()->value() == e.blocks()[b].rank) {
        first_block_ = blocks_here_ == 0 ? int(b) : first_block_;
        ++blocks_here_;
      }
  }

  Expected<CudaReport> run(std::string device) {
    CudaReport report;
    report.device = std::move(device);
    report.blocks = blocks_here_;
    SYNCOLL_TRY(co_resident, co_resident_blocks(o_.run.type, o_.run.op));
    report.co_resident_blocks = co_resident;
    if (report.blocks > report.co_resident_blocks)
      return fail({}, fmt::format("the executor launches {} as one grid; {} blocks are more "
                                  "than the {} this GPU holds at once, and a wait on a block "
                                  "that is not resident would never end",
                                  transport_.only() ? "this rank's thread blocks"
                                                    : "every rank's thread blocks",
                                  report.blocks, report.co_resident_blocks));
    SYNCOLL_CHECK(upload());
    RunReport &r = report.run;
    r.chunk_bytes = shape_.chunk_elements * int64_t(sizeof(T));
    r.iterations = shape_.iterations;

    CudaEvent start, stop;
    SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(start.get()));
    SYNCOLL_CUDA("launch", launch(0));
    SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(stop.get()));
    SYNCOLL_CUDA("the checked launch", cudaDeviceSynchronize());
    float ms = 0;
    SYNCOLL_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start.get(), stop.get()));
    r.seconds = ms / 1e3;
    report.seconds_per_launch = r.seconds;

    SYNCOLL_TRY(aborted, stopped());
    std::vector<device::BlockStatus> status(e_.blocks().size());
    SYNCOLL_CUDA("block status",
                 cudaMemcpy(status.data(), status_.as<device::BlockStatus>(),
                            status.size() * sizeof(device::BlockStatus), cudaMemcpyDeviceToHost));
    r.completed = !aborted;
    r.blocked = detail::unfinished_blocks(e_, status, transport_.only());
    if (!r.completed)
      return report;
    for (size_t rank = 0; rank < bases_.size(); ++rank) {
      std::vector<T> &host = arenas_.arena(RankId(int(rank)));
      if (!host.empty())
        SYNCOLL_CUDA("download", cudaMemcpy(host.data(), bases_[rank].arena,
                                            host.size() * sizeof(T), cudaMemcpyDeviceToHost));
    }
    arenas_.check(o_.run.op, r);
    if (o_.timed_launches > 0) {
      SYNCOLL_CHECK(transport_.separate_launches(nullptr));
      SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(start.get()));
      for (int i = 1; i <= o_.timed_launches; ++i) {
        SYNCOLL_CUDA("launch", launch(i));
        if (i < o_.timed_launches)
          SYNCOLL_CHECK(transport_.separate_launches(nullptr));
      }
      SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(stop.get()));
      SYNCOLL_CUDA("the timed launches", cudaDeviceSynchronize());
      SYNCOLL_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start.get(), stop.get()));
      report.seconds_per_launch = ms / 1e3 / o_.timed_launches;
      SYNCOLL_TRY(stopped_late, stopped());
      if (stopped_late)
        return fail({}, "a timed launch was stopped by the watchdog after the checked one "
                        "completed: an executor bug, not a verdict on the program");
    }
    return report;
  }

private:
  const ExecutableProgram &e_;
  const CudaRunOptions &o_;
  detail::Transport &transport_;
  device::RunShape shape_;
  detail::Arenas<T> arenas_;
  int first_block_ = 0, blocks_here_ = 0;
  std::vector<device::RankBases> bases_; ///< the ranks here; others left empty
  DeviceBuffer steps_, blocks_, connections_, units_, table_, status_, abort_;
  device::Tables tables_;

  Expected<bool> stopped() {
    uint32_t aborted = 0;
    SYNCOLL_CUDA("abort flag", cudaMemcpy(&aborted, abort_.as<uint32_t>(), sizeof aborted,
                                          cudaMemcpyDeviceToHost));
    return aborted != 0;
  }

  Expected<void> upload() {
    const device::CommLayout layout = device::comm_layout(shape_);
    bases_.resize(size_t(e_.program().num_ranks()));
    for (int rank = 0; rank < e_.program().num_ranks(); ++rank) {
      const std::vector<T> &host = arenas_.arena(RankId(rank));
      if (host.empty())
        continue;
      SYNCOLL_TRY(bases,
                  transport_.allocate(RankId(rank), host.size() * sizeof(T), size_t(layout.bytes)));
      SYNCOLL_CUDA("arena", cudaMemcpy(bases.arena, host.data(), host.size() * sizeof(T),
                                       cudaMemcpyHostToDevice));
      bases_[size_t(rank)] = bases;
    }
    SYNCOLL_CUDA("steps", steps_.upload(e_.steps()));
    SYNCOLL_CUDA("blocks", blocks_.upload(e_.blocks()));
    SYNCOLL_CUDA("connections", connections_.upload(e_.connections()));
    SYNCOLL_CUDA("chunk table", units_.upload(e_.units()));
    SYNCOLL_CUDA("rank bases", table_.allocate(bases_.size() * sizeof(device::RankBases)));
    SYNCOLL_CHECK(transport_.fill_bases(bases_, table_.as<device::RankBases>()));
    const std::vector<device::BlockStatus> status(e_.blocks().size());
    SYNCOLL_CUDA("block status", status_.upload(std::span<const device::BlockStatus>(status)));
    const uint32_t zero = 0;
    SYNCOLL_CUDA("abort flag", abort_.upload(std::span<const uint32_t>(&zero, 1)));
    tables_.steps = steps_.as<device::Step>();
    tables_.blocks = blocks_.as<device::Block>();
    tables_.connections = connections_.as<device::Connection>();
    tables_.units = units_.as<int32_t>();
    tables_.bases = table_.as<device::RankBases>();
    tables_.status = status_.as<device::BlockStatus>();
    tables_.shape = shape_;
    tables_.op = o_.run.op;
    return {};
  }

  cudaError_t launch(int64_t index) {
    device::Tables t = tables_;
    t.launch = index;
    detail::DeviceControl control;
    control.abort = abort_.as<uint32_t>();
    control.watchdog_ns = uint64_t(o_.run.watchdog.count()) * 1'000'000;
    return detail::launch_interpreter(o_.run.type, t, first_block_, blocks_here_, control, nullptr);
  }
};

} // namespace

Expected<CudaReport> detail::run_with_transport(const ExecutableProgram &program,
                                                const CudaRunOptions &options,
                                                Transport &transport) {
  SYNCOLL_TRY(chunk_elements, chunk_elements_for(program, options.run));
  SYNCOLL_TRY(device, current_device());
  return with_element_type(options.run.type, [&](auto element) -> Expected<CudaReport> {
    return CudaRun<decltype(element)>(program, options, chunk_elements, transport).run(device);
  });
}

Expected<int> co_resident_blocks(DataType type, ReduceOp op) {
  int per_sm = 0, sms = 0, ordinal = 0;
  SYNCOLL_CUDA("occupancy", detail::interpreter_blocks_per_sm(type, op, &per_sm));
  SYNCOLL_CUDA("cudaGetDevice", cudaGetDevice(&ordinal));
  SYNCOLL_CUDA("SM count", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
  return per_sm * sms;
}

std::optional<std::string> cuda_unavailable() {
  auto device = detail::current_device();
  if (!device)
    return device.error().to_string();
  return std::nullopt;
}

int cuda_device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

Expected<CudaReport> run_emulated_on_cuda(const ExecutableProgram &program,
                                          const CudaRunOptions &options) {
  EmulationTransport transport;
  return detail::run_with_transport(program, options, transport);
}

Expected<CopyCeiling> measure_copy_ceiling(int64_t bytes, int launches) {
  SYNCOLL_TRY(device, detail::current_device());
  (void)device;
  DeviceBuffer src, dst;
  SYNCOLL_CUDA("source", src.allocate(size_t(bytes)));
  SYNCOLL_CUDA("destination", dst.allocate(size_t(bytes)));
  SYNCOLL_CUDA("source", cudaMemset(src.as<char>(), 1, size_t(bytes)));
  CudaEvent start, stop;
  CopyCeiling c;
  float ms = 0;
  // One untimed copy each first: the first touch of fresh memory is not the copy's cost.
  SYNCOLL_CUDA("cudaMemcpyAsync", cudaMemcpyAsync(dst.as<char>(), src.as<char>(), size_t(bytes),
                                                  cudaMemcpyDeviceToDevice, nullptr));
  SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(start.get()));
  for (int i = 0; i < launches; ++i)
    SYNCOLL_CUDA("cudaMemcpyAsync", cudaMemcpyAsync(dst.as<char>(), src.as<char>(), size_t(bytes),
                                                    cudaMemcpyDeviceToDevice, nullptr));
  SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(stop.get()));
  SYNCOLL_CUDA("copies", cudaDeviceSynchronize());
  SYNCOLL_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start.get(), stop.get()));
  c.memcpy_seconds = ms / 1e3 / launches;
  SYNCOLL_CUDA("copy kernel", detail::launch_copy(src.as<char>(), dst.as<char>(), bytes, nullptr));
  SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(start.get()));
  for (int i = 0; i < launches; ++i)
    SYNCOLL_CUDA("copy kernel",
                 detail::launch_copy(src.as<char>(), dst.as<char>(), bytes, nullptr));
  SYNCOLL_CUDA("cudaEventRecord", cudaEventRecord(stop.get()));
  SYNCOLL_CUDA("copies", cudaDeviceSynchronize());
  SYNCOLL_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start.get(), stop.get()));
  c.kernel_seconds = ms / 1e3 / launches;
  return c;
}

#endif

} // namespace syncoll::backend
