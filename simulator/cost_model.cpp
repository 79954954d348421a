#include "simulator/cost_model.h"

namespace syncoll::simulator {

CostModel nccl_preset() {
  CostModel m;
  // Per-hop latency beyond the 0.6 us NVLink alpha of the library topologies.
  m.message_latency = {(3400 - 600) * 1000, 0, (1900 - 600) * 1000};
  m.thread_block_gbps = 20;
  m.memory_gbps = 900;
  return m;
}

} // namespace syncoll::simulator
