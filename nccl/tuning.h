// NCCL's choice: its tuning model (NCCL 2.30 src/graph/tuning.cc) predicts the time of every
// enabled algorithm and protocol from the searched graph and picks the fastest, as the runtime
// does for each call. docs/cost-model.md, "NCCL's choice", gives the formula.
#pragma once

#include "model/collective.h"
#include "model/hardware.h"
#include "model/program.h"
#include "nccl/algorithms.h"
#include "nccl/search.h"
#include "nccl/version.h"

#include <string>
#include <string_view>
#include <vector>

namespace syncoll::nccl {

/// NCCL's collective algorithms (NvlsTree: NVLS inside each node, a tree between nodes; CollNet
/// Direct and Chain: the network's switches reduce, IB SHARP), and P2P: the grouped sends and
/// receives of its Alltoall, which its tuning model does not cost.
enum class NcclAlgorithm { Ring, Tree, Nvls, NvlsTree, Pat, CollNetDirect, CollNetChain, P2p };

std::string_view nccl_algorithm_name(NcclAlgorithm algorithm);

/// Whether `algorithm` reduces in the network's switches (CollNet Direct or Chain): NCCL runs it,
/// forced or chosen, only with NCCL_COLLNET_ENABLE=1.
[[nodiscard]] bool nccl_is_collnet(NcclAlgorithm algorithm);

/// What NCCL's tuning model predicts for one algorithm and protocol.
struct NcclEstimate {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  Protocol protocol = Protocol::Simple;
  int channels = 1;      ///< the channels the call runs on
  double latency_us = 0; ///< the model's fixed part
  double bus_gbps = 0;   ///< its bus bandwidth
  double time_us = 0;    ///< latency + bytes / algorithm bandwidth
};

/// The machine as the tuning model sees it.
struct NcclTuningInput {
  const GenerationTraits *generation = nullptr;
  const NcclRingGraph *ring = nullptr; ///< also stands for the tree graph (same channels)
  /// NVLS's graph, which costs NVLS on one node; none where the machine has no NVLS.
  const NcclNvlsGraph *nvls_graph = nullptr;
  int ranks = 0;
  int nodes = 1;
  bool nvls = false;                        ///< NVLink SHARP available inside a node
  NcclVersion version = kNewestNcclVersion; ///< its algorithms are the ones listed
  /// CollNet enabled (NCCL_COLLNET_ENABLE=1) on a fabric whose switches reduce: CollNet Direct
  /// and Chain join the choice, and NVLS runs across nodes with the network reducing.
  bool collnet = false;
  bool nvswitch = false;   ///< the GPUs of a node share an NVSwitch (CollNet Direct needs one)
  int nics_per_node = 0;   ///< CollNet's heads: one aggregation flow per NIC rail
  double collnet_gbps = 0; ///< CollNet's per-channel speed: one channel on a whole NIC
  /// The tree graph's pattern (NCCL's maxTreePattern): NCCL prices a plain tree (every network
  /// hop at the chain's head) at 0.85 of its bandwidth.
  NcclTreePattern tree_pattern = NcclTreePattern::BalancedTree;
  /// The hosts' CPUs: across nodes an x86 AMD host's ring steps cost more and its LL is capped
  /// lower (kNcclNetOverheadUs, kNcclLlMaxMultiNodeGbps).
  HostCpu host_cpu = HostCpu::Intel;
};

/// The pattern NCCL's search settles on for the tree graph of a machine of `generation` with
/// `gpus_per_node` GPUs and `nics_per_node` NICs a node: it starts from a balanced tree and, on
/// SM90 and later, also tries the plain tree ("a simpler tree"), keeping whichever carries more;
/// a balanced tree's first child takes a second NIC's bandwidth per channel, so on nodes with a
/// NIC per GPU the plain one does. Fewer NICs, RCCL's search and older GPUs keep the balanced
/// tree.
NcclTreePattern nccl_searched_tree_pattern(GpuGeneration generation, int gpus_per_node,
                                           int nics_per_node);

/// Every algorithm and protocol NCCL has for `kind`, with its predicted time for `bytes`
/// (nccl-tests' size), in the order NCCL's table lists them. Empty when NCCL has none.
std::vector<NcclEstimate> nccl_estimates(CollectiveKind kind, double bytes,
                                         const NcclTuningInput &in);

/// The fastest of nccl_estimates, restricted to `only` when given; none when nothing is enabled.
std::optional<NcclEstimate> nccl_choose(CollectiveKind kind, double bytes,
                                        const NcclTuningInput &in,
                                        std::optional<NcclAlgorithm> only = std::nullopt);

/// The choice as NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING reports it:
/// "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channels 24 time 27.35".
std::string nccl_info_line(CollectiveKind kind, double bytes, const NcclEstimate &choice);

} // namespace syncoll::nccl
