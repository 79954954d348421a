// NCCL releases the model knows, and what each one can run.
//
// NCCL's choice of algorithm changed as algorithms were added: NVLS tree (NVLink SHARP inside each
// node, a tree across them) arrived in 2.18, PAT (AllGather and ReduceScatter with one GPU per
// node) in 2.23. The same call on the same machine can therefore run differently under 2.21 and
// 2.29; `--nccl-version` says which NCCL is modelled. The default is the newest release here.
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace syncoll::nccl {

enum class NcclAlgorithm; // nccl/tuning.h

/// A published NCCL 2.x release.
struct NcclVersion {
  int minor;
  int patch;

  friend auto operator<=>(const NcclVersion &, const NcclVersion &) = default;
};

/// NCCL's public releases from 2.18 on, oldest first (NVIDIA's download index,
/// compute/redist/nccl).
inline constexpr NcclVersion kNcclReleases[] = {
    {18, 1}, {18, 3}, {18, 5}, {19, 3}, {20, 3}, {20, 5}, {21, 5}, {22, 3},
    {23, 4}, {24, 3}, {25, 1}, {26, 2}, {26, 5}, {27, 3}, {27, 5}, {27, 6},
    {27, 7}, {28, 3}, {28, 7}, {28, 9}, {29, 2}, {29, 3}, {29, 7},
};
/// What every command models unless told otherwise.
inline constexpr NcclVersion kNewestNcclVersion = kNcclReleases[std::size(kNcclReleases) - 1];

/// "2.29.7".
std::string nccl_version_name(NcclVersion version);

/// The release named "2.21.5", or by "2.21" the newest patch of 2.21; none for anything else.
std::optional<NcclVersion> find_nccl_version(std::string_view name);

/// NCCL_VERSION_CODE of a release (22105 for 2.21.5), as NCCL's headers and nccl-tests print it.
int nccl_version_code(NcclVersion version);

/// The release NCCL_VERSION_CODE names (22105: 2.21.5; before 2.9, 2708: 2.7.8); none where the
/// code is not an NCCL 2.x release's.
std::optional<NcclVersion> nccl_version_of_code(int code);

/// The modelled release a run of `ran` is held against: `ran` itself where the model has it,
/// else the newest modelled release before it, else (older than every one) the oldest.
NcclVersion nearest_modelled_release(NcclVersion ran);

/// The releases known, for messages: "2.18.1 to 2.29.7 (or 2.M for the newest patch of 2.M)".
std::string known_nccl_versions();

/// Whether `version` has `algorithm` at all (the tuning still decides where it runs).
bool nccl_has_algorithm(NcclVersion version, NcclAlgorithm algorithm);

/// The first release with `algorithm`, for messages: "2.23".
std::string nccl_algorithm_since(NcclAlgorithm algorithm);

} // namespace syncoll::nccl
