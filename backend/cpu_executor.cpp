// The CPU executor: the interpreter of backend/interpreter.h on host threads, one per
// thread block, each a "CUDA block" of one thread. Counters go through std::atomic_ref with the
// orders the GPU uses, so ThreadSanitizer (the tsan preset) checks the protocol itself.
#include "backend/detail/run_data.h"
#include "backend/executor.h"
#include "backend/interpreter.h"

#include <atomic>
#include <memory>
#include <thread>

namespace syncoll::backend {
namespace {

using device::BlockStatus;

// The host side of the interpreter's platform contract: one thread per block.
class HostPlatform {
public:
  HostPlatform(const std::atomic<bool> &abort, std::atomic<uint64_t> &progress)
      : abort_(abort), progress_(progress) {}
  // Element by element: a host thread gains nothing from packs, and the sanitizers see each access.
  static constexpr bool kPacks = false;
  int thread() const { return 0; }
  int threads() const { return 1; }
  void barrier() const {}
  bool barrier_or(bool any) const { return any; }
  uint64_t load_acquire(uint64_t *at) const {
    return std::atomic_ref<uint64_t>(*at).load(std::memory_order_acquire);
  }
  void store_release(uint64_t *at, uint64_t value) const {
    std::atomic_ref<uint64_t>(*at).store(value, std::memory_order_release);
    progress_.fetch_add(1, std::memory_order_relaxed);
  }
  // An LL line as two 64-bit words, each 4 bytes of data and the flag: a word is stored whole,
  // so a reader that sees the flag sees the data beside it.
  void store_line(uint64_t *line, const uint32_t words[2], uint32_t flag) const {
    for (int w = 0; w < 2; ++w)
      std::atomic_ref<uint64_t>(line[w]).store(uint64_t(words[w]) | uint64_t(flag) << 32,
                                               std::memory_order_relaxed);
    progress_.fetch_add(1, std::memory_order_relaxed);
  }
  bool load_line(uint64_t *line, uint32_t flag, uint32_t words[2]) const {
    for (int w = 0; w < 2; ++w) {
      const uint64_t x = std::atomic_ref<uint64_t>(line[w]).load(std::memory_order_relaxed);
      if (uint32_t(x >> 32) != flag)
        return false;
      words[w] = uint32_t(x);
    }
    return true;
  }
  void progress() const { progress_.fetch_add(1, std::memory_order_relaxed); }

  // Spins, then yields the core, then sleeps between looks (there are more thread blocks than
  // cores); stops once the watchdog has stopped the run.
  class Waiter {
  public:
    explicit Waiter(const std::atomic<bool> &abort) : abort_(abort) {}
    bool keep_going() {
      if (abort_.load(std::memory_order_relaxed))
        return false;
      if (++spins_ > 256)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      else if (spins_ > 32)
        std::this_thread::yield();
      return true;
    }

  private:
    const std::atomic<bool> &abort_;
    int spins_ = 0;
  };
  Waiter waiter() const { return Waiter(abort_); }

private:
  const std::atomic<bool> &abort_;
  std::atomic<uint64_t> &progress_;
};

// Bytes aligned as a GPU allocation is (FIFO slots are read in 16-byte packs there).
class AlignedBytes {
public:
  explicit AlignedBytes(int64_t bytes) : storage_(size_t(bytes) + 64, std::byte{0}) {}
  char *data() {
    const auto address = reinterpret_cast<uintptr_t>(storage_.data());
    return reinterpret_cast<char *>(storage_.data() + ((64 - address % 64) % 64));
  }

private:
  std::vector<std::byte> storage_;
};

template <class T> class CpuExecutor {
public:
  CpuExecutor(const ExecutableProgram &e, const RunOptions &o, int64_t chunk_elements)
      : e_(e), o_(o), shape_(e.shape(chunk_elements, int(sizeof(T)))), arenas_(e, shape_, o),
        status_(e.blocks().size()) {
    const int ranks = e.program().num_ranks();
    const device::CommLayout layout = device::comm_layout(shape_);
    for (int r = 0; r < ranks; ++r) {
      comm_.push_back(std::make_unique<AlignedBytes>(layout.bytes));
      bases_.push_back(
          {reinterpret_cast<char *>(arenas_.arena(RankId(r)).data()), comm_.back()->data()});
    }
    tables_.steps = e.steps().data();
    tables_.blocks = e.blocks().data();
    tables_.connections = e.connections().data();
    tables_.units = e.units().data();
    tables_.bases = bases_.data();
    tables_.status = status_.data();
    tables_.shape = shape_;
    tables_.op = o.op;
  }

  RunReport run() {
    RunReport r;
    r.chunk_bytes = int64_t(shape_.chunk_elements) * int64_t(sizeof(T));
    r.iterations = shape_.iterations;
    const auto start = std::chrono::steady_clock::now();
    {
      std::vector<std::jthread> workers;
      for (size_t b = 0; b < e_.blocks().size(); ++b)
        workers.emplace_back([this, b] {
          HostPlatform platform(aborted_, progress_);
          device::Interpreter<HostPlatform, T>(platform, tables_).run_block(int(b));
          finished_.fetch_add(1, std::memory_order_release);
        });
      watch();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.completed = !aborted_.load();
    r.blocked = detail::unfinished_blocks(e_, status_);
    if (r.completed)
      arenas_.check(o_.op, r);
    return r;
  }

private:
  const ExecutableProgram &e_;
  const RunOptions &o_;
  device::RunShape shape_;
  detail::Arenas<T> arenas_;
  std::vector<std::unique_ptr<AlignedBytes>> comm_;
  std::vector<device::RankBases> bases_;
  std::vector<BlockStatus> status_;
  device::Tables tables_;
  std::atomic<uint64_t> progress_{0};
  std::atomic<size_t> finished_{0};
  std::atomic<bool> aborted_{false};

  void watch() {
    const size_t blocks = e_.blocks().size();
    uint64_t seen = progress_.load();
    auto last_change = std::chrono::steady_clock::now();
    while (finished_.load(std::memory_order_acquire) < blocks) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const uint64_t now_progress = progress_.load();
      const auto now = std::chrono::steady_clock::now();
      if (now_progress != seen) {
        seen = now_progress;
        last_change = now;
      } else if (now - last_change > o_.watchdog) {
        aborted_.store(true);
        return;
      }
    }
  }
};

} // namespace

Expected<RunReport> run_on_cpu(const ExecutableProgram &program, const RunOptions &options) {
  SYNCOLL_TRY(chunk_elements, chunk_elements_for(program, options));
  // One host thread per thread block: beyond this many the host is the limit, not the program.
  constexpr size_t kMaxThreadBlocks = 4096;
  if (program.blocks().size() > kMaxThreadBlocks)
    return fail({}, fmt::format("the CPU executor runs one host thread per thread block; {} thread "
                                "blocks are more than its {}",
                                program.blocks().size(), kMaxThreadBlocks));
  return detail::with_element_type(options.type, [&](auto element) -> RunReport {
    return CpuExecutor<decltype(element)>(program, options, chunk_elements).run();
  });
}

} // namespace syncoll::backend
