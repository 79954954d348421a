// The cost model NCCL's own kernels pay, for programs simulated as NCCL runs them.
#pragma once

#include "simulator/cost_model.h"

namespace syncoll::nccl {

/// NCCL-like preset: per-message latencies from NCCL 2.30's per-hop ring NVLink latencies minus
/// the link alpha already paid, and a per-thread-block (channel) copy cap of NCCL's per-channel
/// NVLink speed (model/runtime_constants.h and model/hardware.h).
simulator::CostModel nccl_preset();

} // namespace syncoll::nccl
