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
