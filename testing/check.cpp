#include "testing/check.h"

#include "model/collective_traits.h"
#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace syncoll::testing {
namespace {

// SplitMix64: a case's knobs depend only on the seed and the case's index, so a run is
// reproducible from the seed it prints, whatever ran before.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int draw(uint64_t &state, IntRange range) {
  state = mix(state);
  const uint64_t span = uint64_t(int64_t(range.max) - range.min + 1);
  return range.min + int(state % span);
}

CaseParams draw_case(const Family &family, const CheckOptions &options, int index) {
  uint64_t state = mix(options.seed ^ mix(uint64_t(index)));
  CaseParams p;
  p.ranks = draw(state, family.ranks);
  p.variant = draw(state, family.variants);
  p.size_log2 = draw(state, options.size_log2);
  state = mix(state);
  p.data_seed = 1 + state % 1000000;
  return p;
}

// The first law that breaks on the case, or the unknown one when none breaks.
struct CaseOutcome {
  std::optional<LawVerdict> broken;
  std::optional<LawVerdict> unknown;
};

CaseOutcome run_laws(const FamilyCase &c, const CaseParams &params, int64_t size_bytes,
                     const std::vector<LawId> &laws) {
  CaseOutcome outcome;
  for (LawId law : laws) {
    LawVerdict v;
    switch (law) {
    case LawId::Verifies:
      v = verifies(c.program, c.collective);
      break;
    case LawId::Agrees:
      v = simulator_agrees_with_verifier(c.program, c.topology, c.collective);
      break;
    case LawId::Bound:
      v = simulated_time_respects_bound(c.program, c.topology, c.collective, size_bytes);
      break;
    case LawId::Cpu:
      v = cpu_executor_matches_reference(c.program, c.collective, size_bytes, params.data_seed);
      break;
    }
    if (v.broken()) {
      outcome.broken = std::move(v);
      return outcome;
    }
    if (v.outcome == LawOutcome::Unknown && !outcome.unknown)
      outcome.unknown = std::move(v);
  }
  return outcome;
}

// Smaller values of a knob to try, the smallest first: the minimum, halfway, one less.
std::vector<int> smaller(int value, int min) {
  std::vector<int> out;
  for (int v : {min, min + (value - min) / 2, value - 1})
    if (v >= min && v < value && std::ranges::find(out, v) == out.end())
      out.push_back(v);
  return out;
}

std::vector<CaseParams> shrink_candidates(const CaseParams &p, const Family &family,
                                          const CheckOptions &options) {
  std::vector<CaseParams> out;
  for (int v : smaller(p.ranks, family.ranks.min))
    out.push_back(CaseParams{v, p.variant, p.size_log2, p.data_seed});
  for (int v : family.shrink_variant ? smaller(p.variant, family.variants.min) : std::vector<int>())
    out.push_back(CaseParams{p.ranks, v, p.size_log2, p.data_seed});
  for (int v : smaller(p.size_log2, options.size_log2.min))
    out.push_back(CaseParams{p.ranks, p.variant, v, p.data_seed});
  if (p.data_seed != 1)
    out.push_back(CaseParams{p.ranks, p.variant, p.size_log2, 1});
  return out;
}

// A failure of the same law on the knobs, if they are in the family and break it.
Expected<std::optional<CaseFailure>> fails_again(const Family &family, const CaseParams &params,
                                                 const CaseFailure &failure) {
  SYNCOLL_TRY(instance, family.make(params));
  if (!instance)
    return std::optional<CaseFailure>();
  const int64_t size = case_size_bytes(params.size_log2, instance->program, instance->collective);
  const std::vector<LawId> laws = {*parse_law(failure.verdict.law)};
  CaseOutcome outcome = run_laws(*instance, params, size, laws);
  if (!outcome.broken)
    return std::optional<CaseFailure>();
  return CaseFailure{failure.case_index, params, size, std::move(*instance),
                     std::move(*outcome.broken)};
}

} // namespace

const std::vector<LawId> &all_laws() {
  static const std::vector<LawId> laws = {LawId::Verifies, LawId::Agrees, LawId::Bound, LawId::Cpu};
  return laws;
}

std::string_view law_name(LawId law) {
  switch (law) {
  case LawId::Verifies:
    return "verifies";
  case LawId::Agrees:
    return "agrees";
  case LawId::Bound:
    return "bound";
  case LawId::Cpu:
    return "cpu";
  }
  SYNCOLL_UNREACHABLE("law");
}

std::optional<LawId> parse_law(std::string_view name) {
  for (LawId law : all_laws())
    if (law_name(law) == name)
      return law;
  return std::nullopt;
}

int64_t case_size_bytes(int size_log2, const Program &program, const CollectiveSpec &collective) {
  const int64_t unit = int64_t(std::lcm(std::max(1, program.chunks_per_loop()),
                                        std::max(1, nccl_tests_chunks(collective)))) *
                       4;
  const int64_t size = int64_t(1) << std::clamp(size_log2, 0, 40);
  return std::max(unit, size / unit * unit);
}

std::string describe_case(const Family &family, const CaseParams &params, int64_t size_bytes) {
  std::string out;
  if (family.ranks.max > 0)
    out += fmt::format("ranks {}, ", params.ranks);
  if (family.variants.max > family.variants.min || !family.variant_name.empty())
    out += family.describe_variant ? family.describe_variant(params.variant) + ", "
                                   : fmt::format("{} {}, ", family.variant_name, params.variant);
  return out + fmt::format("{} B, data seed {}", size_bytes, params.data_seed);
}

Expected<CheckReport> run_check(const Family &family, const CheckOptions &options) {
  CheckReport report;
  int index = 0;
  while (report.passed + report.unknown < options.cases &&
         report.discarded < options.max_discards) {
    const CaseParams params = draw_case(family, options, index++);
    SYNCOLL_TRY(instance, family.make(params));
    if (!instance) {
      ++report.discarded;
      continue;
    }
    const int64_t size = case_size_bytes(params.size_log2, instance->program, instance->collective);
    CaseOutcome outcome = run_laws(*instance, params, size, options.laws);
    if (outcome.broken) {
      report.first_failure =
          CaseFailure{index - 1, params, size, std::move(*instance), std::move(*outcome.broken)};
      break;
    }
    if (outcome.unknown) {
      ++report.unknown;
      if (!report.first_unknown)
        report.first_unknown = std::move(outcome.unknown);
    } else {
      ++report.passed;
    }
  }
  if (!report.first_failure)
    return report;
  report.minimal = report.first_failure;
  // Greedy: take the first smaller case that still breaks the law, until none does. Each step
  // lowers a knob, so this ends.
  bool progressed = options.shrink;
  while (progressed) {
    progressed = false;
    for (const CaseParams &candidate : shrink_candidates(report.minimal->params, family, options)) {
      SYNCOLL_TRY(again, fails_again(family, candidate, *report.minimal));
      if (again) {
        report.minimal = std::move(again);
        ++report.shrink_steps;
        progressed = true;
        break;
      }
    }
  }
  return report;
}

} // namespace syncoll::testing
