#include "nccl/preset.h"

#include "model/hardware.h"

#include <cmath>

namespace syncoll::nccl {

simulator::CostModel nccl_preset() {
  simulator::CostModel m;
  // The library topologies already charge LL's NVLink hop latency as every NVLink's alpha; a
  // message pays the rest of its protocol's hop latency.
  const double link_alpha_us = protocol_traits(Protocol::LL).nccl_ring_nvlink_hop_us;
  for (const ProtocolTraits &t : all_protocol_traits())
    m.message_latency[simulator::CostModel::index(t.protocol)] =
        std::llround((t.nccl_ring_nvlink_hop_us - link_alpha_us) * 1e6);
  // NCCL's graph speed of one NVLink before Hopper: what one channel is given in its search.
  m.thread_block_gbps.fill(generation_traits(GpuGeneration::Ampere).nccl_nvlink_gbps);
  m.memory_gbps = 900;
  return m;
}

} // namespace syncoll::nccl
