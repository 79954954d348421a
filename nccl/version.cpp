#include "nccl/version.h"

#include "model/invariant.h"
#include "nccl/tuning.h"

#include <fmt/format.h>

namespace syncoll::nccl {
namespace {

// The minor release that added each algorithm the tuning model lists (release notes). Ring, tree,
// single-node NVLS (2.17), CollNet Direct and Chain and point-to-point predate every release here.
int first_minor(NcclAlgorithm algorithm) {
  switch (algorithm) {
  case NcclAlgorithm::Ring:
  case NcclAlgorithm::Tree:
  case NcclAlgorithm::Nvls:
  case NcclAlgorithm::CollNetDirect:
  case NcclAlgorithm::CollNetChain:
  case NcclAlgorithm::P2p:
    return 0;
  case NcclAlgorithm::NvlsTree:
    return 18;
  case NcclAlgorithm::Pat:
    return 23;
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm without a first release");
}

} // namespace

std::string nccl_version_name(NcclVersion version) {
  return fmt::format("2.{}.{}", version.minor, version.patch);
}

std::optional<NcclVersion> find_nccl_version(std::string_view name) {
  std::optional<NcclVersion> found;
  for (const NcclVersion &v : kNcclReleases)
    if (name == nccl_version_name(v) || name == fmt::format("2.{}", v.minor))
      found = v; // releases are oldest first: a minor alone ends at its newest patch
  return found;
}

int nccl_version_code(NcclVersion version) {
  return 20000 + version.minor * 100 + version.patch;
}

std::optional<NcclVersion> nccl_version_of_code(int code) {
  // NCCL_VERSION(X, Y, Z) is X * 1000 + Y * 100 + Z before 2.9 and X * 10000 + Y * 100 + Z after.
  const bool old_style = code >= 2000 && code < 2900;
  const int major = old_style ? code / 1000 : code / 10000;
  const int minor = old_style ? code % 1000 / 100 : code % 10000 / 100;
  if (major != 2 || (!old_style && minor < 9))
    return std::nullopt;
  return NcclVersion{minor, code % 100};
}

NcclVersion nearest_modelled_release(NcclVersion ran) {
  NcclVersion chosen = kNcclReleases[0];
  for (const NcclVersion &v : kNcclReleases)
    if (v <= ran)
      chosen = v; // releases are oldest first: the last not after `ran`
  return chosen;
}

std::string known_nccl_versions() {
  return fmt::format("{} to {} (or 2.M for the newest patch of 2.M)",
                     nccl_version_name(kNcclReleases[0]), nccl_version_name(kNewestNcclVersion));
}

bool nccl_has_algorithm(NcclVersion version, NcclAlgorithm algorithm) {
  return version.minor >= first_minor(algorithm);
}

std::string nccl_algorithm_since(NcclAlgorithm algorithm) {
  return fmt::format("2.{}", first_minor(algorithm));
}

} // namespace syncoll::nccl
