// The SCCL paper's measured DGX-1 results, in simulation: its synthesized Allgather, Allreduce
// and Alltoall (SCCL, section 6) against NCCL, both on the calibrated DGX-1 system
// (model/hardware.h), compared as the paper compared them: its generated code copies like NCCL's
// Simple protocol, so the baseline is NCCL with NCCL_PROTO=Simple at its best channel count.
// Every algorithm runs under the two lowerings the paper measured (SCCL, section 4): its
// generated kernel (one launch, a flag per pushed chunk, combines taking turns) and one
// cudaMemcpy per send issued step by step (copy engines; copying collectives only). A third row
// runs the same algorithm lowered to MSCCL-IR under the MSCCL executor's costs (its best of 1, 2
// and 4 instances): what the algorithm costs in today's runtime, shown beside and not counted; a
// fourth the same programs as MSCCL++ execution plans (mscclpp/from_program.h, each verified),
// timed as `syncoll simulate plan.json --system dgx1` times them, also beside.
// Prints the speedup per size, then the paper's figures beside ours: the best speedup of the
// paper's lowerings at small sizes (1 KiB to 64 KiB) and at the largest size (1 GiB).
// bench/sccl_bench prints it all; bench/seeds_bench takes the figures into every seed's table.
#pragma once

#include <string>
#include <vector>

namespace syncoll::bench {

/// One of the paper's figures: its best speedup over NCCL at small sizes (1 to 64 KiB) or at
/// the largest (1 GiB), and ours.
struct ScclFigure {
  std::string claim; ///< "allgather, best at 1-64 KiB"
  double paper = 0;
  double ours = 0;
};

/// The figures of every collective, small then large; with `print_table` also every row's
/// speedup per size (sccl_bench's table). Sizes stop at 1 MiB when `quick`. Empty when a
/// synthesis, lowering or simulation fails (the message printed).
[[nodiscard]] std::vector<ScclFigure> sccl_figures(bool quick, bool print_table);

} // namespace syncoll::bench
