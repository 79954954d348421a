// Parameters of the cost model beyond the topology's per-link alpha and bandwidth
// (docs/cost-model.md says what is modelled and what is not).
#pragma once

#include "model/program.h"
#include "model/runtime_constants.h"
#include "simulator/event_queue.h"
#include "simulator/network.h"

#include <array>
#include <cstdint>
#include <vector>

namespace syncoll::simulator {

/// A per-protocol column of the runtime constants table (model/runtime_constants.h).
template <class T> std::array<T, 3> per_protocol(T ProtocolTraits::*column) {
  std::array<T, 3> out{};
  for (const ProtocolTraits &t : all_protocol_traits())
    out[static_cast<size_t>(t.protocol)] = t.*column;
  return out;
}

/// Every per-protocol default is a column of the runtime constants table; a preset or a what-if
/// study may override any of them.
struct CostModel {
  /// Share of a link's bandwidth that carries payload, per protocol (Simple, LL, LL128).
  std::array<double, 3> efficiency = per_protocol(&ProtocolTraits::payload_fraction);
  /// Fixed cost added to every message, per protocol (0 unless a preset sets it).
  std::array<Picoseconds, 3> message_latency{0, 0, 0};
  /// Bytes of one chunk moved per pipeline iteration, per protocol: the runtime loops over a
  /// chunk in pieces of its FIFO step size (docs/semantics.md, "Pipelining and count splitting").
  std::array<int64_t, 3> iteration_bytes = per_protocol(&ProtocolTraits::executor_tile_bytes);
  /// Messages a connection holds, per protocol.
  std::array<int, 3> fifo_capacity = per_protocol(&ProtocolTraits::fifo_messages);
  /// Most bytes per nanosecond one thread block copies or reduces, per protocol (0: unlimited).
  std::array<double, 3> thread_block_gbps{0, 0, 0};
  /// Most bytes per nanosecond one connection between ranks of different nodes moves (the
  /// fabric's `connection_gbps`; 0: unlimited). A node is a unit of the topology's innermost
  /// hierarchy level (its GPUs); a topology without a hierarchy has no such connections.
  double connection_gbps = 0;
  /// The share of `connection_gbps` a connection moves in each protocol (the fabric's LL128
  /// share; Simple and LL move all of it).
  std::array<double, 3> connection_share{1, 1, 1};
  /// What one message across nodes occupies its sending rank's network proxy (NCCL's proxy
  /// thread, one a GPU, posting its connections' messages one after another; 0: nothing): a
  /// message leaves no earlier than the proxy has posted the rank's messages before it.
  Picoseconds proxy_message_cost = 0;
  /// Memory bandwidth a reduction uses, reading two operands and writing one (0: free).
  double memory_gbps = 0;
  /// How transfers cross intermediate ranks when two ranks have no direct link.
  Switching switching = Switching::CutThrough;
  /// Start time of each rank (empty: all start at 0).
  std::vector<Picoseconds> start_skew;
  /// Host-side cost of the call before any thread block runs (kernel launch): every rank starts
  /// this late.
  Picoseconds launch = 0;
  /// Cost of each instruction step beyond its data movement, before the step moves anything: an
  /// interpreting executor's primitive call, flag handling and dependency check (0 for NCCL's
  /// own compiled kernels, whose per-hop cost is in `message_latency`).
  Picoseconds step_overhead = 0;
  /// Max-min fair rates are shared out again at most once per this much simulated time (0: at
  /// every start and end of a fair-shared transfer, exact). A large Alltoall on fair ports needs
  /// it: there every event moves every rate (Network::set_sharing_window says what it costs).
  Picoseconds sharing_window = 0;
  /// The window holds only while the median fair-shared hop lasts at least this many windows
  /// (0: always). Where hops are short (a composed plan's few pieces per port) exact sharing is
  /// cheap and a window would only add error: a piece waits up to a window for its rate.
  int sharing_window_hop_ratio = 0;
  /// The window also holds while more than this many fair-shared hops are carried (0: no such
  /// rule): tens of thousands of short pieces at once, where exact sharing takes minutes.
  size_t sharing_window_from_hops = 0;

  static size_t index(Protocol p) { return static_cast<size_t>(p); }
};

/// Whether a connection from rank s to rank r is one `CostModel::connection_gbps` caps: its ends
/// in different nodes, units of the topology's innermost hierarchy level (its GPUs). A topology
/// without two levels has no such connections.
inline bool crosses_nodes(const Topology &topology, RankId s, RankId r) {
  const auto &levels = topology.hierarchy().levels;
  if (levels.size() < 2)
    return false;
  const int per_node = levels.back().size;
  return s.value() / per_node != r.value() / per_node;
}

} // namespace syncoll::simulator
