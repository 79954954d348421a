// A 1,000-point study (25 DGX H100 machines: 1 to 16 nodes x NVLink at 0.5x to 4x; Allreduce
// and Allgather; NCCL's choice and its ring; 10 sizes from 64 KiB to 32 MiB) run through
// `syncoll study` from an empty cache, in one process and in two (mpirun -n 2 when Open MPI is
// installed, else two --shard processes at once): points per second, the speedup from the
// second process, and whether both wrote the same bytes.
//   ./build/ci/bench/study_bench [--quick]
#include "bench/quick_flag.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Seconds one command took; -1 when it failed.
double timed(const std::string &command) {
  const auto start = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0)
    return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv) {
  const bool quick = syncoll::bench::quick_flag(argc, argv, "study_bench");
  const fs::path dir =
      fs::temp_directory_path() / ("syncoll-study-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "study.json";
  {
    std::ofstream out(file);
    out << "{\"study\": \"bench\",\n"
           " \"machines\": [{\"system\": \"dgx_h100\", \"nodes\": "
        << (quick ? "[1, 2]" : "[1, 2, 4, 8, 16]")
        << ", \"nvlink_scale\": " << (quick ? "[1]" : "[0.5, 1, 1.5, 2, 4]")
        << "}],\n"
           " \"collectives\": [\"allreduce\", \"allgather\"],\n"
           " \"sizes\": [\"64KiB..32MiB\"],\n"
           " \"variants\": [{\"name\": \"NCCL\", \"nccl\": \"auto\"},\n"
           "              {\"name\": \"ring\", \"nccl\": \"ring\"}]}\n";
  }
  const int points = (quick ? 2 : 25) * 2 * 2 * 10;
  const std::string cli = SYNCOLL_CLI;
  const std::string one =
      cli + " study " + file.string() + " -o " + (dir / "one").string() + " >/dev/null";
  const bool mpi = std::system("command -v mpirun >/dev/null 2>&1") == 0;
  const std::string two =
      mpi ? "mpirun --allow-run-as-root --oversubscribe -n 2 " + cli + " study " + file.string() +
                " -o " + (dir / "two").string() + " >/dev/null"
          : "(" + cli + " study " + file.string() + " -o " + (dir / "two").string() +
                " --shard 0/2 >/dev/null & " + cli + " study " + file.string() + " -o " +
                (dir / "two").string() + " --shard 1/2 >/dev/null; wait)";
  const double t1 = timed(one), t2 = timed(two);
  const bool same = t1 > 0 && t2 > 0 &&
                    slurp(dir / "one" / "results.csv") == slurp(dir / "two" / "results.csv") &&
                    slurp(dir / "one" / "report.html") == slurp(dir / "two" / "report.html");
  std::printf("%-34s %9s %7s %9s %9s\n", "run", "processes", "points", "seconds", "points/s");
  std::printf("%-34s %9d %7d %9.2f %9.1f\n", "one process", 1, points, t1, points / t1);
  std::printf("%-34s %9d %7d %9.2f %9.1f\n", mpi ? "mpirun -n 2" : "two --shard processes", 2,
              points, t2, points / t2);
  std::printf("speedup from the second process: %.2fx; outputs identical: %s\n", t1 / t2,
              same ? "yes" : "NO");
  fs::remove_all(dir);
  return t1 > 0 && t2 > 0 && same ? 0 : 1;
}
