// A study's points: every machine x collective x variant x size, in one fixed order, each with a
// key that says everything its result depends on. Points are evaluated in groups (one machine,
// collective and variant, every size), because a group shares its work: NCCL's topology search,
// or a composed plan lowered and verified once and simulated per size.
#pragma once

#include "study/study_file.h"

#include <cstdint>
#include <string>
#include <vector>

namespace syncoll::study {

struct Point {
  size_t machine = 0; ///< index into Study::machines
  CollectiveKind collective = CollectiveKind::Allreduce;
  size_t variant = 0; ///< index into Study::variants
  int64_t size = 0;
  /// Everything the result depends on, as text; its hash names the point's cache file.
  std::string key;
  uint64_t hash = 0;
};

struct Group {
  size_t machine = 0;
  CollectiveKind collective = CollectiveKind::Allreduce;
  size_t variant = 0;
  std::vector<size_t> points; ///< indices into the point list, one per size, ascending
};

struct Plan {
  std::vector<Point> points; ///< machine-major, then collective, variant, size
  std::vector<Group> groups; ///< in the same order
};

[[nodiscard]] Plan plan_points(const Study &study);

/// 64-bit FNV-1a: stable across runs and machines (std::hash is neither).
[[nodiscard]] uint64_t fnv1a(std::string_view text);

/// The groups shard `index` of `count` evaluates: every count-th group from the index-th.
[[nodiscard]] std::vector<size_t> shard_groups(const Plan &plan, int index, int count);

} // namespace syncoll::study
