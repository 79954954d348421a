// A measured machine as the simulator sees it: the topology at the payload rates NCCL's copies
// reach, and the cost model of its generation and host side (model/hardware.h's tables).
#pragma once

#include "model/diagnostics.h"
#include "model/hardware.h"
#include "model/topology.h"
#include "simulator/algorithm_sim.h"
#include "simulator/cost_model.h"

namespace syncoll::simulator {

/// An algorithm as one of SCCL's lowerings runs it: the links at the rates its copies reach, and
/// what its executor charges (`options.costs`).
struct AlgorithmExecutor {
  Topology topology;
  AlgorithmSimOptions options;
};

struct SystemModel {
  const SystemPreset *preset = nullptr;
  const GenerationTraits *generation = nullptr;
  const FabricTraits *fabric = nullptr; ///< the network between nodes
  int nodes = 1;
  int gpus_per_node = 0;
  /// Links at the Simple protocol's payload rate (NVLink line rate x the generation's Simple
  /// share, NICs at the fabric's share); intra-node links carry no latency of their own, network
  /// links the fabric's message latency and host cost.
  Topology topology;
  /// The same links at their line rates, and where GPUs of a node lack links to each other the
  /// host's sockets as switch vertices in place of `topology`'s host paths: what NCCL's topology
  /// search sees.
  Topology line_topology;
  /// Protocol efficiencies relative to Simple, per-hop latencies, the thread-block copy cap and
  /// the launch; no executor step overhead (set it for interpreted programs: `interpreted`).
  /// Past four nodes, while the typical fair-shared hop lasts kSharingWindowHopRatio windows or
  /// more, or more than kSharingWindowFromHops hops share fair ports, max-min fair rates are
  /// shared out once per window (`default_sharing_window` and up).
  CostModel model;
  /// Whether the GPUs share an NVSwitch with multimem support (NVLS).
  bool nvls = false;
  /// Whether the node's GPUs reach each other through an NVSwitch (not a fixed NVLink mesh).
  bool nvswitch = false;

  /// The cost model for a program run by an interpreting executor (MSCCL), which pays the
  /// generation's per-step overhead that NCCL's compiled kernels do not.
  CostModel interpreted() const;
  /// The cost model for NCCL's tree kernel, whose per-hop latencies are the generation's tree
  /// hop (`nccl_tree_hop_us`) in place of the ring's.
  CostModel nccl_tree() const;

  /// The machine as a program from a file, a composed plan or a DSL example runs on it: every
  /// switch port and NIC shared max-min fairly among its transfers (`with_fair_ports`), since such
  /// programs fan in and out over many peers at once. Every command times programs on this one
  /// (`syncoll simulate --sharing` is the explicit what-if that replaces it).
  [[nodiscard]] Topology program_topology() const;

  /// The topology at `protocol`'s payload rates: NVLinks (and host paths) at the generation's
  /// share for it, network links at the NIC's share times the wire format's payload fraction
  /// (LL128 carries 120 of 128 bytes across the network as on any wire). Run a program on it at
  /// efficiency 1.
  [[nodiscard]] Topology protocol_topology(Protocol protocol) const;

  /// An algorithm run by SCCL's own generated kernel (one launch; every send a push of the whole
  /// chunk into the receiver's memory followed by a flag the next step's sender waits for, which
  /// costs an NVLink hop at Simple; a receiver combines the reducing sends into one chunk one at
  /// a time, each an executor step), on the links at Simple's rates.
  AlgorithmExecutor sccl_kernel() const;
  /// An algorithm lowered to one cudaMemcpy per send, issued by the host step after step: the
  /// links inside the node at `copy_engine_gain` times a kernel's Simple rate, and every step
  /// costs what a launch costs. Fails on more than one node (copy engines move data inside one)
  /// and for an algorithm with reducing sends (a copy engine cannot combine).
  [[nodiscard]] Expected<AlgorithmExecutor> copy_engine(const Algorithm &algorithm) const;

private:
  /// The topology with links inside a node scaled by `inside` and across nodes by `across`.
  Topology scaled_topology(double inside, double across) const;
};

/// `topology` with every bandwidth relation (switch port, NIC) shared max-min fairly, and every
/// link outside them sharing itself so (model's `with_sharing`): how the
/// hardware carries traffic to many peers at once (NCCL's point-to-point, composed plans that fan
/// in and out over a node's GPUs). First come first served would leave gaps where a transfer
/// waits for both of its ports. A ring's or tree's channels send to one peer over one link, which
/// carries one transfer at a time either way, so they keep the topology's first-come ports.
[[nodiscard]] Topology with_fair_ports(const Topology &topology);

/// The sharing window of a machine of `nodes` nodes of the preset: none (exact max-min sharing)
/// up to four nodes; past them 5 us on nodes of 400 GB/s of NICs, longer in proportion where the
/// NICs are slower, so that a window stays the same share of the time a piece takes. Exact sharing
/// of NCCL's point-to-point Alltoall on 16 nodes takes minutes per size; the window's error bound
/// is in docs/cost-model.md.
[[nodiscard]] Picoseconds default_sharing_window(const SystemPreset &preset, int nodes);

/// A system's window holds only while the median fair-shared hop lasts at least this many windows
/// (CostModel::sharing_window_hop_ratio): NCCL's point-to-point Alltoall on saturated ports,
/// whose pieces take milliseconds at their share, and not a composed plan's few short pieces per
/// port, which a window would make late by up to a window each. Ten keeps a 16-node 1 GiB
/// Alltoall on one NIC per node within 0.02% of exact sharing, in 6 s instead of 66 s.
inline constexpr int kSharingWindowHopRatio = 10;
/// A system's window also holds, at its base length, while more than this many fair-shared hops
/// are carried: a 64-node Alltoall of 1 MiB has 261,632 flows of 2 KiB pieces, short hops that
/// exact sharing would re-rate one by one, not a composed plan's few pieces per port.
inline constexpr size_t kSharingWindowFromHops = 4096;

/// `nodes` nodes of the preset, with `gpus_per_node` GPUs each (0: all of the node's; fewer:
/// behind an NVSwitch the same switch with fewer ports in use, in a fixed mesh the first
/// `gpus_per_node` GPUs and the links among them).
[[nodiscard]] Expected<SystemModel> make_system_model(const SystemPreset &preset, int nodes = 1,
                                                      int gpus_per_node = 0);
/// `nodes` nodes of `node`: a node read from NCCL's topology dump that is none of the presets'
/// (GPUs behind PCIe switches and CPU sockets; its links at their line rates, its switches as
/// vertices). `preset` gives the generation, the NICs, the fabric and the host's costs; its node
/// topology is not read. NVLS needs an NVSwitch: a vertex of that name in the node, or, where the
/// dump's GPUs all hang off one, its ports as bandwidth relations over a node without switches.
[[nodiscard]] Expected<SystemModel> make_system_model(const SystemPreset &preset,
                                                      const Topology &node, int nodes);
/// The same with other rows for the preset's generation and fabric (a calibration trying
/// constants, a what-if on another fabric); the rows must outlive the model.
[[nodiscard]] Expected<SystemModel> make_system_model(const SystemPreset &preset, int nodes,
                                                      int gpus_per_node,
                                                      const GenerationTraits &generation,
                                                      const FabricTraits &fabric);

} // namespace syncoll::simulator
