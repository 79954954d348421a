// Picking a plan: HiCCL's parameters tried on the simulator (hierarchy as the machine's nodes x
// GPUs or flat, stripes over the node's NICs, a tree or a ring across nodes, pipeline depths),
// each plan lowered and verified, the fastest kept, with NCCL's own choice on the same machine
// beside it.
#pragma once

#include "compose/factorize.h"
#include "simulator/system_model.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::compose {

struct Tried {
  Hierarchy hierarchy;
  std::optional<double> us; ///< simulated time; none when the plan did not verify
  std::string verdict;      ///< "verified", or the first property that failed
};

struct Search {
  std::vector<Tried> tried;
  std::optional<size_t> best; ///< index into tried
  std::optional<double> nccl_us;
  std::string nccl_info; ///< NCCL's choice, as NCCL_DEBUG=INFO prints it
};

/// The candidate hierarchies on `nodes` nodes of `gpus` GPUs with `nics` NICs each: flat, nodes x
/// GPUs and (8 GPUs or more) nodes x 2 x 2 x GPUs/4, each with stripes 1 to the NIC count in
/// powers of two, a tree or a ring across the top level, and pipeline depths 1, 2 and 4.
std::vector<Hierarchy> candidates(int nodes, int gpus, int nics);

/// Striped or pipelined plans of more parts than this (primitives x stripes x pipeline depth)
/// are reported as not tried: an Alltoall of 128 ranks has 16,256 primitives, and cutting each
/// into 32 parts makes a plan that takes minutes to lower and verify.
inline constexpr size_t kMostParts = size_t(1) << 16;

/// Tries every candidate for `composition` (computing `collective`) on `system` at each of
/// `sizes` (nccl-tests' sizes): each plan is lowered and verified once and simulated per size,
/// in `protocol` when given (else the program's, Simple). NCCL beside it makes its own choice.
[[nodiscard]] Expected<std::vector<Search>>
search(const Composition &composition, const CollectiveSpec &collective,
       const simulator::SystemModel &system, const std::vector<int64_t> &sizes,
       const std::vector<Hierarchy> &plans, std::optional<Protocol> protocol = std::nullopt);

} // namespace syncoll::compose
