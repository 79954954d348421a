// A tuner plugin's choice in place of NCCL's own: aws-ofi-nccl's region tuner, which AWS's
// images load beside NCCL on p5 (and p5e), p5en and p6-b200 (the default since aws-ofi-nccl
// 1.16; NCCL 2.21 and later find it in the network plugin). For an AllReduce, AllGather or
// ReduceScatter of 8 ranks a node on 3 nodes or more it names the algorithm and protocol by
// size; on 2 nodes or fewer, and where its regions hold no point, NCCL's own model chooses.
// Channels stay NCCL's: the plugin zeroes one entry of NCCL's cost table and leaves the rest.
#pragma once

#include "model/collective_traits.h"
#include "model/hardware.h"
#include "nccl/tuning.h"

#include <cstdint>
#include <optional>

namespace syncoll::nccl {

struct PlatformTunerChoice {
  NcclAlgorithm algorithm;
  Protocol protocol;
};

/// What the machine's tuner plugin picks for `bytes` of `kind` on `nodes` nodes of
/// `gpus_per_node` GPUs; none where NCCL's own model chooses.
[[nodiscard]] std::optional<PlatformTunerChoice> platform_tuner_choice(PlatformTuner tuner,
                                                                       CollectiveKind kind,
                                                                       int nodes, int gpus_per_node,
                                                                       int64_t bytes);

/// The plugin's name as NCCL_DEBUG=INFO lines and headers give it ("aws-ofi-nccl region tuner");
/// empty for none.
[[nodiscard]] std::string_view platform_tuner_name(PlatformTuner tuner);

} // namespace syncoll::nccl
