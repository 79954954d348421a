#include "nccl/version.h"

#include "model/invariant.h"
#include "nccl/tuning.h"

#include <charconv>
#include <fmt/format.h>

namespace syncoll::nccl {
namespace {

// NCCL's public releases from 2.18 on (NVIDIA's download index, compute/redist/nccl).
const std::vector<NcclVersion> kReleases = {
    {18, 1}, {18, 3}, {18, 5}, {19, 3}, {20, 3}, {20, 5}, {21, 5}, {22, 3},
    {23, 4}, {24, 3}, {25, 1}, {26, 2}, {26, 5}, {27, 3}, {27, 5}, {27, 6},
    {27, 7}, {28, 3}, {28, 7}, {28, 9}, {29, 2}, {29, 3}, {29, 7},
};

// The minor release that added each algorithm the tuning model lists (release notes). Ring, tree,
// single-node NVLS (2.17) and point-to-point predate every release here.
int first_minor(NcclAlgorithm algorithm) {
  switch (algorithm) {
  case NcclAlgorithm::Ring:
  case NcclAlgorithm::Tree:
  case NcclAlgorithm::Nvls:
  case NcclAlgorithm::P2p:
    return 0;
  case NcclAlgorithm::NvlsTree:
    return 18;
  case NcclAlgorithm::Pat:
    return 23;
  }
  SYNCOLL_UNREACHABLE("an NCCL algorithm without a first release");
}

std::string known_list() {
  return fmt::format("2.{}.{} to 2.{}.{} (or 2.M for the newest patch of 2.M)",
                     kReleases.front().minor, kReleases.front().patch, kReleases.back().minor,
                     kReleases.back().patch);
}

} // namespace

std::string nccl_version_name(NcclVersion version) {
  return fmt::format("2.{}.{}", version.minor, version.patch);
}

const std::vector<NcclVersion> &known_nccl_versions() {
  return kReleases;
}

Expected<NcclVersion> parse_nccl_version(std::string_view text) {
  auto bad = [&] {
    return fail({}, fmt::format("--nccl-version: '{}' is not an NCCL release the model knows: {}",
                                text, known_list()));
  };
  if (!text.starts_with("2."))
    return bad();
  std::string_view rest = text.substr(2);
  int minor = 0;
  int patch = -1;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), minor);
  if (ec != std::errc())
    return bad();
  if (end != rest.data() + rest.size()) {
    if (*end != '.')
      return bad();
    auto [pend, pec] = std::from_chars(end + 1, rest.data() + rest.size(), patch);
    if (pec != std::errc() || pend != rest.data() + rest.size())
      return bad();
  }
  std::optional<NcclVersion> found;
  for (const NcclVersion &v : kReleases)
    if (v.minor == minor && (patch < 0 || v.patch == patch))
      found = v; // the newest patch when none is named
  if (!found)
    return bad();
  return *found;
}

bool nccl_has_algorithm(NcclVersion version, NcclAlgorithm algorithm) {
  return version.minor >= first_minor(algorithm);
}

std::string nccl_algorithm_since(NcclAlgorithm algorithm) {
  return fmt::format("2.{}", first_minor(algorithm));
}

} // namespace syncoll::nccl
