// NCCL as NCCL runs it on a system: the topology search, the tuning model's choice of algorithm,
// protocol and channels for the message size, and the simulated time of that choice. Ring and
// tree run as thread-block programs through simulate_program; NVLS and CollNet, whose reductions
// happen in a switch (NVSwitch, the network's) and have no thread-block form, run as the closed
// forms of docs/cost-model.md.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "nccl/algorithms.h"
#include "nccl/search.h"
#include "nccl/tuning.h"
#include "simulator/result.h"
#include "simulator/system_model.h"

#include <optional>
#include <string>

namespace syncoll::nccl {

/// NCCL's rings on a plain topology (a library family or a file, no system: no tuning model):
/// what its search finds there, on `channels` channels (0: its runtime channels), each ring
/// starting at `root` for a rooted collective. With `given` (a graph file's rings), those rings
/// instead of the search's; `host` is what NCCL's search knows of the machine beyond its links
/// (nccl_search_host of its topology dump; none: syncoll's own search).
struct TopologyRings {
  NcclRingGraph graph;
  int channels = 0;
  std::vector<std::vector<RankId>> rings; ///< one per channel
};
[[nodiscard]] Expected<TopologyRings>
nccl_topology_rings(const Topology &topology, CollectiveKind kind, int channels,
                    std::optional<RankId> root, const std::optional<NcclRingGraph> &given = {},
                    const NcclSearchHost &host = {});

/// The cost model NCCL's own programs of `kind` run under: Simple moved in chunks of its
/// *_CHUNKSTEPS FIFO slots (Broadcast and Reduce one, AllReduce, AllGather and ReduceScatter
/// four: the executor's tile), so each hop of a Broadcast's chain forwards a quarter as much at
/// once. Every NCCL run goes through it, on a system or a plain topology.
[[nodiscard]] simulator::CostModel nccl_chunked(simulator::CostModel model, CollectiveKind kind);

/// Whether NCCL's `algorithm` runs on a plain topology (no system): its ring and tree. NVLS, NVLS
/// tree, PAT and point-to-point need a machine (their constants are a GPU generation's).
[[nodiscard]] bool nccl_runs_on_topology(NcclAlgorithm algorithm);

/// NCCL's ring or tree program forced on a plain topology, over `rings`: what `syncoll simulate
/// --baseline nccl-ring|nccl-tree -t T` and a study's NCCL variant on a topology run. NVLS, PAT
/// and NCCL's own choice need a system (their constants are a GPU generation's): refused.
[[nodiscard]] Expected<Program> nccl_topology_program(NcclAlgorithm algorithm, CollectiveKind kind,
                                                      const Topology &topology,
                                                      const TopologyRings &rings,
                                                      Protocol protocol);

/// The piece NCCL's tree moves under `protocol` for `bytes` on `channels` channels of `nodes`
/// nodes of `ranks_per_node` GPUs (enqueue.cc), in payload bytes: one FIFO slot (chunkSteps 1,
/// not the ring's four), halved while a channel would hold fewer chunks than the tree's pipeline
/// needs, so that a small call still fills the tree. Simple: while fewer than 8, 4 and 1 times
/// the tree's depth (ranks_per_node - 1 + log2 nodes), down to 128, 64 and 32 KiB. LL128: while
/// fewer than (1 + log2 nodes + ranks_per_node / 10) x 64 / ranks_per_node, stopping at or under
/// 128 KiB of slot, then x 16, at or under 32 KiB. LL: one slot's payload at every size.
[[nodiscard]] int64_t nccl_tree_chunk_bytes(Protocol protocol, int64_t bytes, int channels,
                                            int nodes, int ranks_per_node);

struct NcclRunOptions {
  std::optional<NcclAlgorithm> algorithm; ///< force one, as NCCL_ALGO does
  std::optional<Protocol> protocol;       ///< force one, as NCCL_PROTO does
  /// Run on this many channels, as NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS do (NCCL caps it at
  /// 32); the tuning model still chooses the algorithm and protocol for its own count.
  std::optional<int> channels;
  /// Run on at least this many channels, as NCCL_MIN_CTAS does (capped at 32 likewise).
  std::optional<int> min_channels;
  /// NVLink SHARP where the machine has it, as NCCL_NVLS_ENABLE (default 1) says.
  bool nvls = true;
  /// In-network reduction, as NCCL_COLLNET_ENABLE=1 with the SHARP plugin loaded (default off):
  /// CollNet Direct and Chain, and NVLS across nodes. A fabric without it refuses the run, as does
  /// a forced CollNet algorithm without this.
  bool collnet = false;
  /// The release whose algorithms NCCL chooses among.
  NcclVersion version = kNewestNcclVersion;
  /// The system's tuner plugin picks where it has a choice (platform_tuner.h), as on the images
  /// that load it; false: NCCL's own model everywhere (OFI_NCCL_TUNER_TYPE=Internal). A forced
  /// algorithm or protocol leaves it out, as aws-ofi-nccl refuses to load beside NCCL_ALGO.
  bool tuner_plugin = true;
  /// Record the program's timeline (SimulationResult's trace); a closed form has none.
  bool trace = false;
};

struct NcclRun {
  NcclEstimate choice;
  std::string info; ///< the NCCL_DEBUG=INFO line of the choice
  simulator::SimulationResult result;
  bool closed_form = false; ///< NVLS, NVLS tree and CollNet: no program, the closed form
};

/// The NCCL graph and tuning input of a system.
struct NcclMachine {
  NcclRingGraph ring;
  NcclTuningInput tuning;
  /// A graph file's tree graph, one chain per graph channel (channel c runs c mod their
  /// number); none: the trees NCCL's model builds (nccl_tree_chains).
  std::optional<std::vector<NcclTreeChain>> tree_graph;
  /// The pattern a graph file's tree graph declares (the largest of its channels', as NCCL takes
  /// the largest of its ranks'); none: the one NCCL's search settles on
  /// (nccl_searched_tree_pattern), also where the trees were built beside a file's rings.
  std::optional<NcclTreePattern> tree_pattern;
  /// NVLS's graph (its heads and speeds), searched or a graph file's; none without NVLS.
  std::optional<NcclNvlsGraph> nvls_graph;
  /// A graph file's tree graph's own typeintra and typeinter, where it gives them.
  NcclTreeGraphTypes tree_types;

  /// The path types NCCL's tuning reads for `algorithm`'s graph (typeIntra, typeInter): the tree
  /// graph's for Tree where a file gave them, else the ring graph's.
  std::pair<NcclPathType, NcclPathType> path_types(NcclAlgorithm algorithm) const;

  /// `tuning` on this machine's graphs (they stay this machine's: copy it, not them).
  NcclTuningInput tuning_input() const;
};
[[nodiscard]] Expected<NcclMachine> nccl_machine(const simulator::SystemModel &system);
/// A calibrated system and NCCL's machine on it, what a run of NCCL on a preset starts from:
/// `nodes` nodes of the preset with `gpus_per_node` GPUs each (make_system_model's meaning).
struct NcclSystem {
  simulator::SystemModel system;
  NcclMachine nccl;
};
[[nodiscard]] Expected<NcclSystem> nccl_system(const SystemPreset &preset, int nodes = 1,
                                               int gpus_per_node = 0);
/// The machine with a graph file's rings, trees and NVLS graph in place of its search's, where
/// the file has them (an NVLS graph only where the machine has NVLS): their speeds become what
/// its tuning sees, as NCCL_GRAPH_FILE's do (NVLS's on one node: tuning.cpp says why). Rings
/// without trees keep the trees of the search (NCCL searches a graph the file does not hold).
/// The trees' `tree_types` are the file's tree graph's (NcclMachine::tree_types).
[[nodiscard]] NcclMachine with_graphs(const simulator::SystemModel &system, NcclMachine machine,
                                      std::optional<NcclRingGraph> rings,
                                      std::optional<std::vector<NcclTreeChain>> trees,
                                      std::optional<NcclNvlsGraph> nvls = std::nullopt,
                                      NcclTreeGraphTypes tree_types = {});

/// The tree chain of each of `channels` channels that NCCL's tree runs on the machine: a graph
/// file's, else channel c's chain from a GPU of NIC c, or, where the search walked chains across
/// nodes of a fixed mesh, in the order of channel c's ring (NCCL searches its tree graph as it
/// searches rings; behind a switch any order crosses the same ports).
[[nodiscard]] std::vector<NcclTreeChain> nccl_tree_chains(const simulator::SystemModel &system,
                                                          const NcclMachine &machine, int channels);

/// The program of NCCL's ring, tree, PAT or point-to-point algorithm for `choice` on the machine,
/// as simulate_nccl runs it; a failure for NVLS, NVLS tree and CollNet, which have none (their
/// closed forms run).
[[nodiscard]] Expected<Program> nccl_program(CollectiveKind kind, const NcclEstimate &choice,
                                             const simulator::SystemModel &system,
                                             const NcclMachine &machine);
/// What NCCL chooses among for `kind` at `bytes` on the machine with `options` (its release,
/// NVLS, CollNet; not what they force; only Simple where the network plugin sets NCCL_PROTO): every
/// algorithm and protocol its tuning model costs there, with that estimate. A failure where the
/// options cannot hold on the machine.
[[nodiscard]] Expected<std::vector<NcclEstimate>>
nccl_candidates(CollectiveKind kind, int64_t bytes, const simulator::SystemModel &system,
                const NcclMachine &machine, const NcclRunOptions &options = {});

/// NCCL's choice for `kind` at `bytes` (nccl-tests' size) and its simulated run; a failure when
/// NCCL has nothing for the collective on this machine, or nothing matches what was forced.
[[nodiscard]] Expected<NcclRun> simulate_nccl(CollectiveKind kind, int64_t bytes,
                                              const simulator::SystemModel &system,
                                              const NcclMachine &machine,
                                              const NcclRunOptions &options = {});

} // namespace syncoll::nccl
