// NCCL releases the model knows, and what each one can run.
//
// NCCL's choice of algorithm changed as algorithms were added: NVLS tree (NVLink SHARP inside each
// node, a tree across them) arrived in 2.18, PAT (AllGather and ReduceScatter with one GPU per
// node) in 2.23. The same call on the same machine can therefore run differently under 2.21 and
// 2.29; `--nccl-version` says which NCCL is modelled. The default is the newest release here.
#pragma once

#include "model/diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace syncoll::nccl {

enum class NcclAlgorithm; // nccl/tuning.h

/// A published NCCL 2.x release, 2.18.1 to 2.29.7.
struct NcclVersion {
  int minor = 29;
  int patch = 7;

  friend bool operator==(const NcclVersion &, const NcclVersion &) = default;
};

/// "2.29.7".
std::string nccl_version_name(NcclVersion version);

/// Every release the model knows, oldest first.
const std::vector<NcclVersion> &known_nccl_versions();

/// "2.21.5", or "2.21" for the newest patch of 2.21. Anything else (a release outside 2.18 to
/// 2.29, a patch never published, a malformed string) is bad input naming the releases known.
[[nodiscard]] Expected<NcclVersion> parse_nccl_version(std::string_view text);

/// Whether `version` has `algorithm` at all (the tuning still decides where it runs).
bool nccl_has_algorithm(NcclVersion version, NcclAlgorithm algorithm);

/// The first release with `algorithm`, for messages: "2.23".
std::string nccl_algorithm_since(NcclAlgorithm algorithm);

} // namespace syncoll::nccl
