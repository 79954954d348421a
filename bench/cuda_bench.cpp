// The CUDA executor against the device's own copy bandwidth: 8 ranks emulated on one GPU,
// Allgather and Allreduce at 256 MiB per rank (nccl-tests size), NCCL ring programs with 16
// channels (128 CUDA blocks, one per SM on an H100), lowered with direct puts and all staged.
// Bandwidth is memory traffic, bytes read plus bytes written, for both sides of the ratio: the
// executor's from its tables (ExecutableProgram::traffic), the copy's as 2 x bytes copied. Goal:
// >= 80% of cudaMemcpyAsync device to device. Without a GPU it says so and exits 0.
//   ./build/ci/bench/cuda_bench [size_mib] [launches]
#include "backend/cuda_executor.h"
#include "backend/nccl_transport.h"
#include "model/collective_traits.h"
#include "nccl/algorithms.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>

using namespace syncoll;

int main(int argc, char **argv) {
  // Positional: MiB per rank, launches; each a positive whole number.
  int64_t numbers[2] = {256, 20};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    int64_t value = 0;
    const auto [end, error] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
    if (i > 2 || error != std::errc() || end != arg.data() + arg.size() || value <= 0 ||
        value > (int64_t(1) << 20)) {
      std::fprintf(stderr, "cuda_bench: '%s' is not %s; usage: cuda_bench [size_mib] [launches]\n",
                   argv[i], i > 2 ? "an option" : "a count from 1 to 1048576");
      return 2;
    }
    numbers[i - 1] = value;
  }
  const int64_t size = numbers[0] << 20;
  const int launches = int(numbers[1]);
  if (auto reason = backend::cuda_unavailable()) {
    fmt::print("cuda_bench: skipped, no GPU: {}\n", *reason);
    return 0;
  }
  auto ceiling = backend::measure_copy_ceiling(size, launches);
  if (!ceiling) {
    fmt::print("cuda_bench: {}\n", ceiling.error().to_string());
    return 1;
  }
  const double memcpy_rate = 2.0 * double(size) / ceiling->memcpy_seconds / 1e9;
  const double kernel_rate = 2.0 * double(size) / ceiling->kernel_seconds / 1e9;
  fmt::print("copy of {} MiB, traffic (read + written): cudaMemcpyAsync {:.0f} GB/s, 16-byte copy "
             "kernel {:.0f} GB/s\n",
             size >> 20, memcpy_rate, kernel_rate);

  // NCCL's own device API on one rank of this GPU: what the multi-GPU transport stands on.
  if (auto check = backend::nccl_device_api_check(); check)
    fmt::print("NCCL device API, one rank (ncclMemAlloc, symmetric window, ncclDevCommCreate, LSA "
               "barrier and pointer in a kernel): ok\n");
  else
    fmt::print("NCCL device API, one rank: FAILED: {}\n", check.error().to_string());

  constexpr int kRanks = 8, kChannels = 16;
  std::vector<RankId> ring;
  for (int r = 0; r < kRanks; ++r)
    ring.emplace_back(r);
  fmt::print("{:<10} {:>8} {:>9} {:>10} {:>12} {:>8} {:>12} {:>10} {:>10} {:>6}\n", "collective",
             "lowering", "direct", "time (ms)", "traffic GiB", "staged", "traffic GB/s",
             "vs memcpy", "busbw GB/s", "check");
  bool all_correct = true;
  for (auto kind : {CollectiveKind::Allgather, CollectiveKind::Allreduce}) {
    auto program = nccl::nccl_ring_program(kind, std::vector<std::vector<RankId>>(kChannels, ring),
                                           Protocol::Simple);
    if (!program) {
      fmt::print("{}\n", program.error().to_string());
      return 1;
    }
    auto verified = verifier::certify(*program, {});
    if (!verified) {
      fmt::print("{}", verified.error().to_text());
      return 1;
    }
    for (bool direct : {true, false}) {
      const auto e = backend::ExecutableProgram::lower(*verified, {.direct_puts = direct});
      backend::CudaRunOptions o;
      o.run.size_bytes = size;
      o.run.type = backend::DataType::F32;
      o.timed_launches = launches;
      auto report = backend::run_emulated_on_cuda(e, o);
      if (!report) {
        fmt::print("{}: {}\n", collective_kind_name(kind), report.error().to_string());
        return 1;
      }
      if (kind == CollectiveKind::Allgather && direct)
        fmt::print("{} ranks emulated on {}: {} CUDA blocks, {} launches timed\n", kRanks,
                   report->device, report->blocks, launches);
      const int64_t chunk_bytes = report->run.chunk_bytes;
      const backend::Traffic traffic = e.traffic(chunk_bytes);
      const double seconds = report->seconds_per_launch;
      const double rate = double(traffic.total()) / seconds / 1e9;
      const CollectiveSpec &spec = e.collective();
      const double busbw =
          double(size) / seconds / 1e9 * bus_bandwidth_factor(spec.kind(), spec.num_ranks());
      all_correct = all_correct && report->run.correct();
      fmt::print("{:<10} {:>8} {:>9} {:>10.3f} {:>12.2f} {:>7.0f}% {:>12.0f} {:>9.0f}% {:>10.1f} "
                 "{:>6}\n",
                 collective_kind_name(kind), direct ? "direct" : "staged",
                 fmt::format("{}", e.direct_puts()), seconds * 1e3,
                 double(traffic.total()) / double(1 << 30),
                 100.0 * double(traffic.staged) / double(traffic.total()), rate,
                 100.0 * rate / memcpy_rate, busbw, report->run.correct() ? "ok" : "WRONG");
    }
  }
  return all_correct ? 0 : 1;
}
