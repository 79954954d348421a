// Families of programs for property runs (testing/check.h): the reference programs of
// testing/programs.h over a rank range, and a folder of a user's MSCCL-IR files.
#pragma once

#include "model/diagnostics.h"
#include "testing/check.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::testing {

/// The reference families, each on a fully connected topology of its rank count:
/// ring_allreduce and ring_allgather (variant: channels 1..4), allpairs_allreduce,
/// recursive_doubling_allgather (powers of two), two_step_alltoall (variant: nodes 1..4 that
/// divide the ranks), and broken_allpairs_allreduce, whose seeded bug races at 2 ranks only.
/// `ranks` is the rank range of the run.
std::vector<Family> reference_families(IntRange ranks);
/// The reference family of that name; unknown names fail with the list of known ones.
[[nodiscard]] Expected<Family> reference_family(const std::string &name, IntRange ranks);

/// Algorithms synthesized for a topology family and lowered by the compiler: SAT synthesis of the
/// fewest steps (rounds up to steps + 4, at most 16 steps, 30 s per solver call) of `collective`
/// with 1..2 chunks per rank (the variant) on the library topology `topology` sized by the
/// case's ranks (`-n` for line, ring, fully_connected, star and hub_and_spoke; powers of two for
/// hypercube; fixed machines such as dgx1 ignore the rank range). A case whose synthesis finds
/// nothing is outside the family. Each (ranks, chunks) is synthesized once per family.
[[nodiscard]] Expected<Family> synthesized_family(const std::string &topology,
                                                  CollectiveKind collective,
                                                  std::optional<int> root, IntRange ranks);

/// Every program file in `folder` (.xml, and .json that holds a program), in name order, as one
/// family whose variant is the file: each checked for `collective` when given, else for the
/// standard collective its header names, on a fully connected topology. Fails for a folder that
/// cannot be read or holds no program, and for a file that does not parse or whose collective is
/// unknown (`custom` without `collective`), with its location.
[[nodiscard]] Expected<Family>
program_folder_family(const std::string &folder,
                      const std::optional<CollectiveSpec> &collective = std::nullopt);

/// A family of one program file, checked as program_folder_family checks each.
[[nodiscard]] Expected<Family>
program_file_family(const std::string &file,
                    const std::optional<CollectiveSpec> &collective = std::nullopt);

} // namespace syncoll::testing
