// The SCCL paper's measured DGX-1 results in simulation (bench/sccl_figures.h says how): the
// speedup of every lowering per size, then the paper's figures beside ours.
//
//   ./build/ci/bench/sccl_bench [--quick]
#include "bench/quick_flag.h"
#include "bench/sccl_figures.h"

#include <cstdio>

int main(int argc, char **argv) {
  // --quick (ctest's smoke run): sizes up to 1 MiB.
  const bool quick = syncoll::bench::quick_flag(argc, argv, "sccl_bench");
  const auto figures = syncoll::bench::sccl_figures(quick, /*print_table=*/true);
  if (figures.empty())
    return 1;
  std::printf("\n%-34s %8s %8s %8s\n", "figure", "ours", "paper", "error");
  for (const auto &f : figures)
    std::printf("%-34s %7.2fx %7.2fx %+7.1f%%\n", f.claim.c_str(), f.ours, f.paper,
                100 * (f.ours / f.paper - 1));
  return 0;
}
