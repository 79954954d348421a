// Structural rules: what the MSCCL executor accepts but runs wrongly (docs/semantics.md,
// "Structure"; "silent hangs / corruption"). Each rule has its own code.
#pragma once

#include "model/collective.h"
#include "model/program.h"
#include "verifier/report.h"

#include <span>
#include <vector>

namespace syncoll::verifier {

/// Limits of the runtime and the machine, checked as the Resources property.
struct ResourceLimits {
  int sm_budget = 108;              ///< co-resident thread blocks per rank (A100: 108 SMs)
  int max_steps_per_tb = 64;        ///< MSCCL_MAX_NUM_STEPS of the executor's default build
  int max_channels = 32;            ///< MAXCHANNELS
  int max_tbs_per_channel_dir = 32; ///< MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL
};

/// Small and large messages: a whole step per transfer, and one chunk per transfer.
inline constexpr int kSmallAndLargeMessages[] = {kMaxStepCount, 1};

/// Every structural rule the program breaks. `collective` (optional) adds the check that the
/// declared buffers hold the collective's. Sends and receives must pair transfer by transfer in
/// every count-splitting regime of `transfer_sizes` (chunks per transfer; empty: small and large
/// messages).
std::vector<StructuralIssue> check_structure(const Program &program,
                                             const CollectiveSpec *collective,
                                             std::span<const int> transfer_sizes = {});

/// Thread blocks per rank within the SM budget (all must be co-resident, or the spin-waits
/// deadlock), steps per thread block, channels.
std::vector<StructuralIssue> check_resources(const Program &program, const ResourceLimits &limits);

/// Whether the issues break the persistence the linear-time deadlock check relies on
/// (docs/semantics.md): only a connection with several pushers or poppers does.
bool breaks_persistence(const std::vector<StructuralIssue> &issues);

} // namespace syncoll::verifier
