// The study's result cache: one small JSON file per point, named by the hash of the point's key
// and holding the key itself, written through a temporary file renamed into place. A study that
// is killed keeps every point it finished; run again, it evaluates only the missing ones. Shards
// (processes, MPI ranks, job-runner tasks) share the cache, and the report is always built from
// it, so its bytes do not depend on how the points were shared out.
#pragma once

#include "study/evaluate.h"

#include <optional>
#include <string>

namespace syncoll::study {

class ResultCache {
public:
  /// The cache under `directory`/cache (created when missing).
  [[nodiscard]] static Expected<ResultCache> open(const std::string &directory);

  /// The stored outcome of the point; none when missing, unreadable or stored for another key.
  std::optional<Outcome> find(const Point &point) const;
  [[nodiscard]] Expected<void> store(const Point &point, const Outcome &outcome) const;

private:
  explicit ResultCache(std::string folder) : folder_(std::move(folder)) {}
  std::string path_of(const Point &point) const;
  std::string folder_;
};

} // namespace syncoll::study
