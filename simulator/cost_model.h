// Parameters of the cost model beyond the topology's per-link alpha and bandwidth
// (docs/cost-model.md says what is modelled and what is not).
#pragma once

#include "model/program.h"
#include "simulator/event_queue.h"
#include "simulator/network.h"

#include <array>
#include <cstdint>
#include <vector>

namespace syncoll::simulator {

struct CostModel {
  /// Share of a link's bandwidth that carries payload, per protocol (Simple, LL, LL128): LL
  /// sends 4 bytes of flag with every 4 of data, LL128 8 of 128 (reference/cost-models.md 3.2).
  std::array<double, 3> efficiency{1.0, 0.5, 120.0 / 128.0};
  /// Fixed cost added to every message, per protocol (0 unless a preset sets it).
  std::array<Picoseconds, 3> message_latency{0, 0, 0};
  /// Bytes of one chunk moved per pipeline iteration, per protocol: the runtime loops over a
  /// chunk in pieces of its FIFO step size (reference 1.2). Approximations of NCCL's buffers:
  /// Simple 4 MiB / 8 steps x 2, LL 32 KiB of payload, LL128 576 KiB.
  std::array<int64_t, 3> iteration_bytes{1 << 20, 32 << 10, 576 << 10};
  /// Messages a connection holds, per protocol (reference 1.5).
  std::array<int, 3> fifo_capacity{2, 8, 8};
  /// Most bytes per nanosecond one thread block copies or reduces (0: unlimited).
  double thread_block_gbps = 0;
  /// Memory bandwidth a reduction uses, reading two operands and writing one (0: free).
  double memory_gbps = 0;
  /// How transfers cross intermediate ranks when two ranks have no direct link.
  Switching switching = Switching::CutThrough;
  /// Start time of each rank (empty: all start at 0).
  std::vector<Picoseconds> start_skew;

  static size_t index(Protocol p) { return static_cast<size_t>(p); }
};

/// NCCL-like preset: per-message latencies from NCCL 2.30's per-hop NVLink latencies (LL 0.6,
/// LL128 1.9, Simple 3.4 us, reference/cost-models.md 3.2) minus the link alpha already paid,
/// and a per-thread-block (channel) copy cap of 20 GB/s, NCCL's per-channel NVLink speed on
/// Volta and Ampere (reference 3.1).
CostModel nccl_preset();

} // namespace syncoll::simulator
