// Runtime constants: what the MSCCL executor and NCCL do per protocol, in one table.
//
// The verifier's FIFO bound, the simulator's protocol efficiency and pipeline tiling, and the
// NCCL ring baseline's latencies and bandwidth factors all come from here; each column says where
// its number comes from (docs/references.md lists the sources). Two columns look alike and are
// not: `payload_fraction` is what a protocol's wire format carries (LL128: 120 of 128 bytes),
// `nccl_tuning_bandwidth_factor` is the factor NCCL's own tuning model applies (LL128: 0.92).
// The simulator charges the first; the NCCL formula baseline reproduces the second.
#pragma once

#include "model/program.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>

namespace syncoll {

struct ProtocolTraits {
  Protocol protocol;
  std::string_view name; ///< MSCCL-IR `proto`
  /// Messages one connection holds before a sender waits: NCCL_STEPS = 8 FIFO slots, Simple posts
  /// 4 of them per message (2 slices of 2 steps), LL and LL128 one.
  int fifo_messages;
  /// Payload share of the bytes on the wire: LL lines carry 4 B of data and 4 B of flag, LL128
  /// lines 120 B of data and 8 B of flag.
  double payload_fraction;
  /// NCCL's tuning model: ring bus bandwidth factor (LL 0.5, LL128 0.92).
  double nccl_tuning_bandwidth_factor;
  /// A connection's FIFO buffer (NCCL_STEPS = 8 slots): Simple 4 MiB, LL 512 KiB, LL128
  /// 4,915,200 B.
  int64_t buffer_bytes;
  /// Payload bytes of a chunk the executor moves per pipeline iteration, its count-splitting
  /// unit and the simulator's pipeline piece: Simple 4 FIFO slots of 512 KiB, LL one slot's
  /// 32 KiB of payload, LL128 one slot's 576,000 B of payload.
  int64_t executor_tile_bytes;
  /// NCCL 2.30 tuning constants for the ring algorithm, in microseconds: the base latency and the
  /// per-hop hardware latency over NVLink and over PCIe.
  double nccl_ring_base_latency_us;
  double nccl_ring_nvlink_hop_us;
  double nccl_ring_pci_hop_us;
  double nccl_ring_net_hop_us;
  /// The same for the tree algorithm: base latency, NVLink hop, network hop.
  double nccl_tree_base_latency_us;
  double nccl_tree_nvlink_hop_us;
  double nccl_tree_net_hop_us;
  /// NCCL's channel count for a small call (enqueue.cc): while the call's bytes are under
  /// channels x threads x this threshold, it drops a channel (the ring's LL threshold is this times
  /// the rank count). Bytes per thread, and the protocol's most threads per channel.
  int nccl_thread_threshold;
  int nccl_max_threads;
};

// The table, in Protocol order. Columns: protocol, name, FIFO messages, payload fraction, NCCL
// tuning factor, FIFO buffer, executor tile; NCCL ring latencies: base, NVLink
// hop, PCIe hop, network hop; NCCL tree latencies: base, NVLink hop, network hop; NCCL thread
// threshold and most threads per channel.
inline constexpr ProtocolTraits kProtocolTable[] = {
    {Protocol::Simple, "Simple", 2, 1.0, 1.0, int64_t(4) << 20, int64_t(2) << 20, 8.4, 3.4, 5.7,
     14.0, 8.4, 4.0, 14.0, 64, 512},
    {Protocol::LL, "LL", 8, 0.5, 0.5, int64_t(512) << 10, int64_t(32) << 10, 6.6, 0.6, 1.0, 2.7,
     6.8, 0.6, 5.0, 8, 512},
    {Protocol::LL128, "LL128", 8, 120.0 / 128.0, 0.92, 4'915'200, 576'000, 14.0, 1.9, 2.5, 4.0,
     14.0, 1.25, 8.5, 8, 640},
};
static_assert(std::size(kProtocolTable) == size_t(Protocol::LL128) + 1, "one row per protocol");
static_assert(kProtocolTable[size_t(Protocol::Simple)].protocol == Protocol::Simple &&
                  kProtocolTable[size_t(Protocol::LL)].protocol == Protocol::LL &&
                  kProtocolTable[size_t(Protocol::LL128)].protocol == Protocol::LL128,
              "the protocol table is in Protocol order");

/// The row of a protocol; every protocol has one.
[[nodiscard]] constexpr const ProtocolTraits &protocol_traits(Protocol protocol) {
  return kProtocolTable[static_cast<size_t>(protocol)];
}
/// Every row, in Protocol order (Simple, LL, LL128).
[[nodiscard]] constexpr std::span<const ProtocolTraits> all_protocol_traits() {
  return kProtocolTable;
}

/// The executor's count splitting: a step of `cnt` chunks runs as ceil(cnt / m) transfers of at
/// most m chunks, m = clamp(tile / chunk bytes, 1, 71) (docs/semantics.md, "Pipelining and count
/// splitting"). Small chunks: a whole step per transfer; a chunk of a tile or more: one each.
[[nodiscard]] constexpr int max_chunks_per_transfer(Protocol protocol, int64_t chunk_bytes) {
  const int64_t m =
      protocol_traits(protocol).executor_tile_bytes / std::max<int64_t>(1, chunk_bytes);
  return static_cast<int>(std::clamp<int64_t>(m, 1, kMaxStepCount));
}

/// The smallest chunk, in bytes, whose transfers carry at most `m` chunks.
[[nodiscard]] constexpr int64_t smallest_chunk_with_at_most(Protocol protocol, int m) {
  if (m >= kMaxStepCount)
    return 1;
  return protocol_traits(protocol).executor_tile_bytes / (m + 1) + 1;
}

/// The most channels a ring or tree runs on across nodes while NVLS is enabled on NVSwitch nodes:
/// measured, B200 nodes' forced rings move 300-344 GB/s of bus bandwidth at 4 GiB on 2 to 64
/// nodes (16 connections at the fabric's rate) and 361-390 GB/s, their NICs' rate, with
/// NCCL_NVLS_ENABLE=0 (32); H100 nodes' default rings plateau at 16 channels' 321 GB/s.
inline constexpr int kNcclRingChannelsBesideNvls = 16;

/// NCCL 2.30's tuning constants of its other algorithms (microseconds): NVLS's NVLink latency
/// (Simple only), PAT's base latency, network hop and per-rank cost.
inline constexpr double kNcclNvlsLatencyUs = 25;
/// NVLS tree's network hop (NCCL's hwLat[NET][NVLS_TREE][Simple]).
inline constexpr double kNcclNvlsTreeNetHopUs = 20.9;
/// NVLS's pipeline chunk, NCCL_NVLS_CHUNKSIZE's default (NVLS tree halves it on 4 nodes or more).
inline constexpr int64_t kNcclNvlsTreeChunkBytes = int64_t(128) << 10;
/// A connection's FIFO slots (NCCL_STEPS): a Simple step moves a slot of its 4 MiB buffer.
inline constexpr int kNcclFifoSlots = 8;
/// NVLS's network latency (hwLat[NET][NVLS][Simple]): NVLS across nodes reduces through CollNet.
inline constexpr double kNcclNvlsNetHopUs = 18;
/// CollNet (in-network reduction through NCCL's CollNet plugin), Simple only: Direct's NVLink and
/// network latencies and the 0.4 us each local rank adds to its fan-in and fan-out, Chain's NVLink
/// and network latencies (hwLat[.][COLLNET_*][Simple]), the most GPUs a node may have for either
/// (NCCL_MAX_DIRECT_ARITY + 1), Direct's bus bandwidth factor on Hopper and later, and the first
/// minor release that reduces AllGather and ReduceScatter in the network (2.20, with SHARP 3.5).
inline constexpr double kNcclCollNetDirectNvlinkUs = 3.7;
inline constexpr double kNcclCollNetDirectNetUs = 31;
inline constexpr double kNcclCollNetDirectArityUs = 0.4;
inline constexpr double kNcclCollNetChainNvlinkUs = 2.8;
inline constexpr double kNcclCollNetChainNetUs = 30;
inline constexpr int kNcclCollNetMaxLocalRanks = 8;
inline constexpr double kNcclCollNetDirectHopperFactor = 0.85;
inline constexpr int kNcclCollNetGatherScatterSinceMinor = 20;
inline constexpr double kNcclPatBaseUs = 8.0;
inline constexpr double kNcclPatNetHopUs = 14.0;
inline constexpr double kNcclPatPerRankUs = 2.8;
/// NCCL's llMaxBw across nodes, by the host's CPUs (llMaxBws' rows: Intel and Arm hosts the
/// first, x86 AMD hosts the second), on 2 nodes and on 3 or more; GB/s.
inline constexpr double kNcclLlMaxMultiNodeGbps[2][2] = {{39.0, 20.4}, {22.5, 19.0}};
/// The compute capabilities (x 10) NCCL enables LL128 on by default (tuning.cc; not the 8.6 and
/// 8.9 cards).
inline constexpr int kNcclLl128ComputeCapabilities[] = {70, 80, 90, 100, 120};
/// What a ring's step across nodes costs at least in NCCL's tuning (getNetOverhead: x86 AMD
/// hosts 2 us, others 1; tripled under Simple), microseconds.
inline constexpr double kNcclNetOverheadUs[2] = {1.0, 2.0};

/// Bytes one point-to-point primitive call of NCCL moves in Simple (its P2P chunk size, the
/// defaults of NCCL_P2P_NVL_CHUNKSIZE and NCCL_P2P_NET_CHUNKSIZE): over NVLink and across the
/// network. Grouped send/receive loops over a peer's data one chunk at a time, so a message
/// through the network's proxy is a quarter of one over NVLink.
inline constexpr int64_t kNcclP2pNvlinkChunkBytes = int64_t(512) << 10;
inline constexpr int64_t kNcclP2pNetChunkBytes = int64_t(128) << 10;

/// NCCL's tree AllReduce bandwidth correction by log2(bytes / 64), 64 B to 256 MiB (Simple, LL,
/// LL128).
inline constexpr std::array<std::array<double, 24>, 3> kNcclTreeCorrection{{
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
    {1., 1., 1., 1., .9, .8, .7, .7, .7, .7, .6, .5,
     .4, .4, .5, .6, .7, .8, .9, 1., 1., 1., 1., 1.},
    {1., 1., 1., 1., 1., .9, .8, .8, .8, .7, .6, .6,
     .6, .6, .6, .6, .8, .9, .9, .9, .9, 1., 1., 1.},
}};

} // namespace syncoll
