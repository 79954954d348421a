// nccl-tests' output formats, written from simulated rows: the text table its *_perf programs
// print (size, count, type, redop, root, then time, algbw, busbw and #wrong out of place and in
// place) and the JSON document `-J FILE` writes (format version 2). A log written here reads like
// a run of nccl-tests; the lines that are not nccl-tests' own start with '#' and say what was
// simulated.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::nccl {

struct NcclTestsRow {
  int64_t size = 0; ///< bytes as nccl-tests counts them
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

struct NcclTestsRun {
  CollectiveKind kind = CollectiveKind::Allreduce;
  int ranks = 0;
  /// GPUs per host where the machine has several hosts (0: one host): the device lines name a
  /// host per node, or per tray of an NVL72 rack ("simulated-host1"), and each GPU's device on
  /// its host, as a run across hosts prints them.
  int ranks_per_host = 0;
  std::optional<int> root; ///< rooted collectives
  std::string what;        ///< what was simulated, one line ("NCCL's choice (NCCL 2.29.7) on ...")
  std::optional<int> nccl_version_code; ///< the NCCL release modelled (22907), where one is
  std::vector<NcclTestsRow> rows;
  /// The simulation times one call: in place and out of place are the same number here.
};

/// One size of a measured nccl-tests run: its out-of-place figures, and NCCL's algorithm and
/// protocol for it where the log has NCCL_DEBUG=INFO's tuning line ("... 1024 Bytes -> Algo RING
/// proto LL ...").
struct MeasuredRow {
  int64_t size = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string algorithm, protocol;
  SourceLocation where;
};

struct MeasuredLog {
  std::optional<CollectiveKind> kind; ///< from its program's name, where the log says it
  std::optional<int> ranks;           ///< from its device lines (text) or config (JSON)
  /// The distinct hosts its device lines (text) or devices (JSON) name: its nodes.
  std::optional<int> hosts;
  /// The NCCL release it ran, as NCCL_VERSION_CODE (22105 for 2.21.5): from nccl-tests' header
  /// ("nccl-library=22105"), NCCL's or RCCL's INFO line ("NCCL version 2.21.5+cuda12.4") or the
  /// JSON's "nccl_version".
  std::optional<int> nccl_version_code;
  std::vector<MeasuredRow> rows;
};

/// An nccl-tests log: the text its *_perf programs print (with or without NCCL's INFO lines, MPI
/// launchers' prefixes and other programs' lines mixed in) or the JSON its -J option writes.
/// Malformed numbers in a result line, or a log without one, are one located error.
[[nodiscard]] Expected<MeasuredLog> read_nccl_tests_log(std::string_view text,
                                                        const std::string &file);

/// nccl-tests' text: its header, one line per size (out of place and in place, "#wrong" N/A as
/// with -c 0, the simulation checks no data), its footer with the average bus bandwidth.
[[nodiscard]] std::string nccl_tests_text(const NcclTestsRun &run);

/// nccl-tests' JSON (-J): version, config, results (size, count, type, redop, root, out_of_place
/// and in_place with time, alg_bw, bus_bw, nwrong), out_of_bounds, average_bus_bandwidth, errors.
/// Deterministic: no start or end time, no environment.
[[nodiscard]] std::string nccl_tests_json(const NcclTestsRun &run);

} // namespace syncoll::nccl
