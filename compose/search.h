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

/// The candidate hierarchies for `ranks` ranks on `nodes` nodes of `gpus` GPUs with `nics` NICs
/// each.
std::vector<Hierarchy> candidates(int nodes, int gpus, int nics);

/// Tries every candidate for `composition` (computing `collective`) at `bytes` (nccl-tests' size)
/// on `system`.
[[nodiscard]] Expected<Search> search(const Composition &composition,
                                      const CollectiveSpec &collective,
                                      const simulator::SystemModel &system, int64_t bytes);

/// The simulated time of one plan at `bytes` as an interpreting executor runs it; none with the
/// verifier's report when the plan does not verify.
[[nodiscard]] Expected<Tried> time_plan(const Composition &composition,
                                        const CollectiveSpec &collective, const Hierarchy &h,
                                        const simulator::SystemModel &system, int64_t bytes);

} // namespace syncoll::compose
