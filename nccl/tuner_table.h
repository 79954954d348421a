// NCCL's tuner tables written from a simulated sweep: for each collective and band of sizes, the
// fastest algorithm, protocol and channel count of those NCCL can run on the machine, as NCCL's
// example tuner plugin reads them (NCCL_TUNER_CONFIG_FILE; tuner_plugin/ is syncoll's own plugin
// for the same file) and as NCCLX's built-in tuner reads them (NCCLX_TUNER_CONFIG_FILE).
// docs/nccl.md, "Tuner tables", gives both formats and how the bands are cut.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "nccl/run.h"
#include "nccl/tuning.h"
#include "simulator/system_model.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::nccl {

/// One swept size of one collective: NCCL's own choice and the fastest candidate, both simulated.
struct TunerPoint {
  CollectiveKind kind = CollectiveKind::Allreduce;
  int64_t bytes = 0; ///< NCCL's nBytes for the call: nccl-tests' size
  NcclEstimate nccl; ///< what NCCL's tuning model chooses
  double nccl_us = 0;
  NcclEstimate fastest; ///< the fastest simulated of nccl_candidates
  double fastest_us = 0;
};

/// A band of sizes that runs one choice: nBytes from `min_bytes` to `max_bytes` inclusive (none:
/// every larger size).
struct TunerRow {
  CollectiveKind kind = CollectiveKind::Allreduce;
  int64_t min_bytes = 0;
  std::optional<int64_t> max_bytes;
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  Protocol protocol = Protocol::Simple;
  int channels = 1;
};

struct TunerTable {
  int nodes = 1;
  int ranks = 1;
  std::vector<TunerPoint> points; ///< per collective, by size
  std::vector<TunerRow> rows;     ///< per collective, bands in size order, covering every size
};

struct TunerSweep {
  std::vector<CollectiveKind> kinds; ///< those NCCL's tuner is asked for (not Alltoall)
  std::vector<int64_t> sizes;        ///< ascending
  NcclRunOptions options;            ///< release, NVLS, CollNet; nothing forced
};

/// Whether NCCL asks its tuner about `kind`: Broadcast, Reduce, AllGather, ReduceScatter and
/// AllReduce (point-to-point never reaches it).
[[nodiscard]] bool nccl_tunes(CollectiveKind kind);

/// Simulates every candidate NCCL has at every size and cuts the sizes into bands. Each swept
/// size stands for the sizes geometrically halfway to its neighbours; a band's edges fall on
/// multiples of the rank count, so that NCCLX's per-rank bands say the same. `progress` hears
/// (runs done, runs in all).
[[nodiscard]] Expected<TunerTable>
tune_nccl(const simulator::SystemModel &system, const NcclMachine &machine, const TunerSweep &sweep,
          const std::function<void(std::size_t, std::size_t)> &progress = {});

/// The table as NCCL's example tuner plugin reads it: colltype, min and max bytes, algorithm,
/// protocol, channels, nNodes, nRanks, numPipeOps, regBuff; each row for this node and rank count
/// only, any pipelined-op count and buffer registration. `source` heads it as comment lines.
[[nodiscard]] std::string write_nccl_tuner_csv(const TunerTable &table, std::string_view source);

/// The table as NCCLX's tuner reads it: collective, bytesPerRank (nBytes / nRanks, as an
/// interval), algorithm, protocol, channels, nNodes, nLocalRanks.
[[nodiscard]] std::string write_ncclx_tuner_csv(const TunerTable &table, std::string_view source);

/// The names the tables give: "allreduce", "ring", "nvls_tree", "ll128", ... (a collective's
/// is its own name, for those NCCL tunes)
[[nodiscard]] std::string_view tuner_collective_name(CollectiveKind kind);
[[nodiscard]] std::string_view tuner_algorithm_name(NcclAlgorithm algorithm);
[[nodiscard]] std::string_view tuner_protocol_name(Protocol protocol);

} // namespace syncoll::nccl
