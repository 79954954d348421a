// The verdicts of an MSCCL++ plan, read from its one execution (detail/plan_execution.h).
#include "mscclpp/verify_plan.h"

#include "model/invariant.h"
#include "mscclpp/detail/plan_execution.h"

#include <algorithm>
#include <fmt/format.h>

namespace syncoll::mscclpp {
namespace {

using detail::Access;
using detail::describe;
using detail::Execution;
using detail::kChunkStride;
using detail::Tb;
using detail::Value;
using verifier::Property;
using verifier::VerdictKind;

} // namespace

bool PlanReport::all_hold() const {
  return std::all_of(verdicts.begin(), verdicts.end(),
                     [](const PlanVerdict &v) { return v.kind == VerdictKind::Holds; });
}

const PlanVerdict &PlanReport::verdict(Property property) const {
  for (const PlanVerdict &v : verdicts)
    if (v.property == property)
      return v;
  SYNCOLL_UNREACHABLE("a plan report has every property's verdict");
}

std::string PlanReport::to_text() const {
  std::string out;
  for (const PlanVerdict &v : verdicts)
    out += fmt::format("{:<17} {}\n", std::string(verifier::property_name(v.property)) + ":",
                       v.summary);
  out += "covers: " + coverage + "\n";
  for (const PlanVerdict &v : verdicts)
    if (!v.counterexample.empty()) {
      out += fmt::format("\n{} counterexample:\n", verifier::property_name(v.property));
      for (const std::string &line : v.counterexample)
        out += "  " + line + "\n";
    }
  return out;
}

namespace {

// What output chunk `k` of GPU `rank` must hold once the collective is done (Broadcast from
// GPU 0, as MSCCL++'s DSL writes it).
Value expected(const ExecutionPlan &plan, int rank, int k) {
  const int n = int(plan.gpus.size());
  const PlanGpu &g = plan.gpus[size_t(rank)];
  auto chunk = [](int q, int j) { return uint64_t(q) * kChunkStride + uint64_t(j); };
  std::vector<uint64_t> v;
  switch (plan.collective) {
  case CollectiveKind::Allgather:
    v.push_back(chunk(k / g.input_chunks, k % g.input_chunks));
    break;
  case CollectiveKind::Allreduce:
    for (int q = 0; q < n; ++q)
      v.push_back(chunk(q, k));
    break;
  case CollectiveKind::ReduceScatter:
    for (int q = 0; q < n; ++q)
      v.push_back(chunk(q, rank * g.output_chunks + k));
    break;
  case CollectiveKind::Broadcast:
    v.push_back(chunk(0, k));
    break;
  case CollectiveKind::Alltoall: {
    const int m = g.output_chunks / n;
    v.push_back(chunk(k / m, rank * m + k % m));
    break;
  }
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
  case CollectiveKind::Reduce:
  case CollectiveKind::AllToNext:
  case CollectiveKind::Custom:
    SYNCOLL_UNREACHABLE("the reader takes MSCCL++'s five collectives only");
  }
  std::sort(v.begin(), v.end());
  return v;
}

// The chunk counts the collective needs of every GPU, or what breaks them.
std::vector<std::string> shape_issues(const ExecutionPlan &plan) {
  std::vector<std::string> out;
  const int n = int(plan.gpus.size());
  for (const PlanGpu &g : plan.gpus) {
    const int in = g.input_chunks, o = g.output_chunks;
    // The reader took one of MSCCL++'s five collectives (is_mscclpp_collective).
    const CollectiveKind kind = plan.collective;
    std::string need;
    if (kind == CollectiveKind::Allgather && o != n * in)
      need = fmt::format("{} output chunks ({} GPUs x {} input chunks)", n * in, n, in);
    else if (kind == CollectiveKind::ReduceScatter && in != n * o)
      need = fmt::format("{} input chunks ({} GPUs x {} output chunks)", n * o, n, o);
    else if (kind == CollectiveKind::Alltoall && (in != o || o % n != 0))
      need = fmt::format("as many input as output chunks, a multiple of {} GPUs", n);
    else if ((kind == CollectiveKind::Allreduce || kind == CollectiveKind::Broadcast) && in != o)
      need = "as many input as output chunks";
    if (!need.empty())
      out.push_back(fmt::format("GPU {} has {} input and {} output chunks; {} needs {}", g.id, in,
                                o, collective_kind_name(plan.collective), need));
  }
  return out;
}

PlanVerdict unknown(Property p, const std::string &why) {
  return {p, VerdictKind::Unknown, "unknown: " + why, {}, {}, {}};
}

// The operation an access belongs to (a GPU's user for the accesses around its kernel).
PlanStepRef step_of(const Execution &ex, const Access &a) {
  if (size_t(a.tb) >= ex.tbs_.size())
    return {int(size_t(a.tb) - ex.tbs_.size()), -1, a.event == 1 ? "before" : "after"};
  const Tb &t = ex.tbs_[size_t(a.tb)];
  return {t.rank, t.tb->id, t.steps[size_t(a.step)].where};
}

} // namespace

PlanReport verify_plan(const ExecutionPlan &plan) {
  PlanReport report;
  report.coverage = fmt::format(
      "{} on {} GPUs, protocol {}, {} ({}); message sizes {} to {} B (the plan's window), each "
      "chunk 1 / chunks of a GPU's buffer; a pipeline's body run once over its chunks",
      collective_kind_name(plan.collective), plan.gpus.size(), plan.packets ? "LL" : "Simple",
      plan.in_place ? "in place" : "out of place",
      plan.in_place ? "input and output share memory as the executor is called" : "separate",
      plan.min_message_bytes,
      plan.max_message_bytes == UINT64_MAX ? std::string("any")
                                           : std::to_string(plan.max_message_bytes));
  std::vector<std::string> structure = shape_issues(plan);
  if (!structure.empty()) {
    report.verdicts.push_back({Property::Structure,
                               VerdictKind::Violated,
                               fmt::format("violated: {} issue(s)", structure.size()),
                               structure,
                               {},
                               {}});
    for (Property p : {Property::DeadlockFreedom, Property::RaceFreedom, Property::Postcondition})
      report.verdicts.push_back(unknown(p, "the buffers do not fit the collective"));
    return report;
  }
  Execution ex(plan);
  ex.run();
  if (std::all_of(ex.tbs_.begin(), ex.tbs_.end(),
                  [](const Tb &t) { return t.next == t.steps.size(); }))
    ex.finish();
  if (ex.structure_.empty())
    report.verdicts.push_back({Property::Structure, VerdictKind::Holds, "holds", {}, {}, {}});
  else
    report.verdicts.push_back({Property::Structure,
                               VerdictKind::Violated,
                               fmt::format("violated: {} issue(s)", ex.structure_.size()),
                               ex.structure_,
                               {},
                               {}});
  // Deadlock: a thread block that cannot finish, and where every other one got to.
  std::vector<std::string> stuck;
  std::vector<PlanStepRef> blocked;
  for (const Tb &t : ex.tbs_)
    if (t.next < t.steps.size()) {
      stuck.push_back(fmt::format("GPU {} tb {} blocked at {}", t.rank, t.tb->id, t.blocked));
      blocked.push_back({t.rank, t.tb->id, t.steps[t.next].where});
    }
  if (!stuck.empty()) {
    std::vector<std::string> lines = stuck;
    for (const Tb &t : ex.tbs_)
      if (t.next == t.steps.size())
        lines.push_back(fmt::format("GPU {} tb {} finished", t.rank, t.tb->id));
    report.verdicts.push_back(
        {Property::DeadlockFreedom,
         VerdictKind::Violated,
         fmt::format("violated: {} thread block(s) never finish", stuck.size()),
         lines,
         blocked,
         {}});
    report.verdicts.push_back(unknown(Property::RaceFreedom, "the plan deadlocks"));
    report.verdicts.push_back({Property::Postcondition,
                               VerdictKind::Violated,
                               "violated: the plan never finishes",
                               {},
                               {},
                               {}});
    return report;
  }
  report.verdicts.push_back({Property::DeadlockFreedom, VerdictKind::Holds, "holds", {}, {}, {}});
  // Races: two accesses to one chunk, one a write, neither ordered before the other.
  std::vector<std::string> races;
  std::vector<PlanStepRef> racing;
  std::vector<std::pair<size_t, size_t>> pairs;
  size_t count = 0;
  for (const std::vector<Access> &at : ex.accesses_)
    for (size_t i = 0; i < at.size(); ++i)
      for (size_t j = i + 1; j < at.size(); ++j) {
        const Access &a = at[i], &b = at[j];
        if (!(a.writes || b.writes) || !overlap(a, b) || ordered(a, b))
          continue;
        if (++count <= 5) {
          racing.push_back(step_of(ex, a));
          racing.push_back(step_of(ex, b));
          pairs.emplace_back(racing.size() - 2, racing.size() - 1);
          races.push_back(fmt::format(
              "{} and {}: {}", a.what, b.what,
              a.by_proxy ? "the proxy may still be reading the put's source (no flush between)"
              : a.writes && a.seen_when_executed ? "nothing orders it after the write"
              : a.writes
                  ? "no signal and wait (or barrier, semaphore) makes the write visible first"
                  : "nothing orders the read before the write"));
        }
      }
  if (count == 0)
    report.verdicts.push_back({Property::RaceFreedom, VerdictKind::Holds, "holds", {}, {}, {}});
  else
    report.verdicts.push_back({Property::RaceFreedom, VerdictKind::Violated,
                               fmt::format("violated: {} racing pair(s){}", count,
                                           count > 5 ? ", the first 5 shown" : ""),
                               races, racing, pairs});
  // Postcondition: every output chunk what the collective puts there.
  std::vector<std::string> wrong;
  std::vector<PlanStepRef> writers;
  size_t wrong_count = 0;
  for (const PlanGpu &g : plan.gpus)
    for (int k = 0; k < g.output_chunks; ++k) {
      const Value want = expected(plan, g.id, k);
      const Value &got = ex.values_[ex.location(g.id, PlanBuffer::Output, k)];
      if (got == want)
        continue;
      if (++wrong_count > 5)
        continue;
      wrong.push_back(fmt::format("GPU {} output chunk {}: expected {}, found {}", g.id, k,
                                  describe(want), describe(got)));
      // Who wrote what is there (none: only the user's input).
      const auto &at = ex.accesses_[ex.location(g.id, PlanBuffer::Output, k)];
      const auto last = std::find_if(at.rbegin(), at.rend(), [&](const Access &a) {
        return a.writes && size_t(a.tb) < ex.tbs_.size();
      });
      if (last != at.rend() &&
          std::find(writers.begin(), writers.end(), step_of(ex, *last)) == writers.end())
        writers.push_back(step_of(ex, *last));
    }
  if (wrong_count == 0)
    report.verdicts.push_back(
        {Property::Postcondition,
         VerdictKind::Holds,
         count == 0 ? "holds" : "holds on the interleaving run (the plan races)",
         {},
         {},
         {}});
  else
    report.verdicts.push_back({Property::Postcondition,
                               VerdictKind::Violated,
                               fmt::format("violated: {} output chunk(s) wrong{}", wrong_count,
                                           wrong_count > 5 ? ", the first 5 shown" : ""),
                               wrong,
                               writers,
                               {}});
  return report;
}

} // namespace syncoll::mscclpp
