// The oracle's symbolic values (plan_oracle.cpp): a lane's value is the (GPU, input chunk, lane)
// terms summed into it, and what the collective leaves in each output lane.
#pragma once

#include "mscclpp/plan.h"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::testing {

// A lane's value: the (GPU, input chunk, lane) terms summed into it, sorted; none for garbage
// (never written in this call, or the user's next data).
using Value = std::optional<std::vector<uint64_t>>;

inline uint64_t term(int gpu, int chunk, int lane) {
  return (uint64_t(gpu) << 40) | (uint64_t(chunk) << 16) | uint64_t(lane);
}

inline Value add(const Value &a, const Value &b) {
  if (!a || !b)
    return std::nullopt;
  std::vector<uint64_t> out(a->size() + b->size());
  std::merge(a->begin(), a->end(), b->begin(), b->end(), out.begin());
  return out;
}

inline std::string show(const Value &v) {
  if (!v)
    return "garbage";
  std::string out;
  for (uint64_t t : *v)
    out += fmt::format("{}GPU{}.in{}.lane{}", out.empty() ? "" : "+", t >> 40, (t >> 16) & 0xffffff,
                       t & 0xffff);
  return out.empty() ? "zero" : out;
}

/// What the collective leaves in output lane `lane` of chunk `chunk` of GPU `gpu` (Broadcast from
/// GPU 0); none for a collective MSCCL++'s executor does not run.
inline Value oracle_expected(const mscclpp::ExecutionPlan &plan, int gpu, int chunk, int lane) {
  const int n = int(plan.gpus.size());
  const mscclpp::PlanGpu &g = plan.gpus[size_t(gpu)];
  Value sum = std::vector<uint64_t>{};
  switch (plan.collective) {
  case CollectiveKind::Allreduce:
    for (int r = 0; r < n; ++r)
      sum = add(sum, std::vector<uint64_t>{term(r, chunk, lane)});
    return sum;
  case CollectiveKind::ReduceScatter:
    for (int r = 0; r < n; ++r)
      sum = add(sum, std::vector<uint64_t>{term(r, gpu * g.output_chunks + chunk, lane)});
    return sum;
  case CollectiveKind::Allgather: {
    const int per = plan.gpus[0].input_chunks;
    return std::vector<uint64_t>{term(chunk / per, chunk % per, lane)};
  }
  case CollectiveKind::Alltoall: {
    const int per = g.output_chunks / n;
    return std::vector<uint64_t>{term(chunk / per, gpu * per + chunk % per, lane)};
  }
  case CollectiveKind::Broadcast:
    return std::vector<uint64_t>{term(0, chunk, lane)};
  case CollectiveKind::Reduce:
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
  case CollectiveKind::Custom:
  case CollectiveKind::AllToNext:
    break;
  }
  return std::nullopt;
}

} // namespace syncoll::testing
