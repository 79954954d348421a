#include "synth/synthesize.h"

#include "model/invariant.h"
#include "synth/combining.h"
#include "synth/sat.h"
#include "synth/smt.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <numeric>

namespace syncoll::synth {
namespace {

Answer solve_backend(const Topology &topology, const CollectiveSpec &spec, StepsRounds sr,
                     const SynthOptions &options) {
  return options.backend == Backend::Sat ? solve_sat(topology, spec, sr, options)
                                         : solve_smt(topology, spec, sr, options);
}

// One instance of a collective that is not a composed Allreduce: through the non-combining
// dual when the collective has one, directly otherwise.
Answer solve_one(const Topology &topology, const CollectiveSpec &spec, StepsRounds sr,
                 const SynthOptions &options) {
  if (spec.is_combining())
    if (auto dual = non_combining_dual(spec)) {
      Answer a = solve_backend(reverse_topology(topology), *dual, sr, options);
      if (a.algorithm)
        a.algorithm = invert_dual(*a.algorithm);
      a.detail = a.detail.empty() ? "inverse of the non-combining dual on the reversed topology"
                                  : a.detail + " (for the non-combining dual)";
      return a;
    }
  if (auto transposed = fan_in_transpose(spec)) {
    Answer a = solve_backend(reverse_topology(topology), *transposed, sr, options);
    if (a.algorithm)
      a.algorithm = invert_transpose(*a.algorithm, *transposed);
    a.detail = a.detail.empty() ? "inverse of the transposed (converging) collective"
                                : a.detail + " (for the transposed collective)";
    return a;
  }
  return solve_backend(topology, spec, sr, options);
}

// Names the algorithm and has model/ check it: a synthesized algorithm that fails the
// independent checker is a bug of ours, not an answer.
void certify(Answer &a, const Topology &topology, const CollectiveSpec &spec, const Target &target,
             StepsRounds sr) {
  if (!a.algorithm)
    return;
  Algorithm &alg = *a.algorithm;
  alg.name = fmt::format("{}-{}-c{}-s{}-r{}", target.name(), topology.name(), spec.chunk_factor(),
                         alg.num_steps(), alg.total_rounds());
  SYNCOLL_INVARIANT(alg.num_steps() == sr.steps && alg.total_rounds() <= sr.rounds,
                    "an answer outside its instance");
  alg.target = {target.kind == CollectiveKind::Custom
                    ? std::string("custom")
                    : std::string(collective_kind_name(target.kind)),
                spec.num_ranks(), spec.chunk_factor(), target.root, topology.name()};
  const AlgorithmCheck check = check_algorithm(alg, topology, spec);
  if (!check.holds()) {
    const std::string why =
        "synthesized algorithm fails check_algorithm: " + check.violations.front().message;
    SYNCOLL_INVARIANT(check.holds(), why.c_str());
  }
}

// The encodings count chunks on rank-to-rank links; a fabric's switches hold no chunks.
Expected<void> without_switches(const Topology &topology) {
  if (topology.num_switches() > 0)
    return fail({}, fmt::format("topology '{}' routes through switches; synthesis needs "
                                "rank-to-rank links (write the fabric as bandwidth relations)",
                                topology.name()));
  return {};
}

Expected<void> usable(const Topology &topology, const Target &target, int chunks, StepsRounds sr,
                      const SynthOptions &options) {
  SYNCOLL_CHECK(without_switches(topology));
  if (options.backend == Backend::Sat && target.kind == CollectiveKind::Allreduce &&
      target.allreduce == AllreduceMethod::Direct)
    return fail({}, "the SAT backend has no direct combining encoding: use --backend smt for a "
                    "direct Allreduce, or the composed method");
  if (options.backend == Backend::Sat && target.kind == CollectiveKind::Custom && target.custom &&
      target.custom->is_combining() && !non_combining_dual(*target.custom))
    return fail({}, "the SAT backend has no direct combining encoding: use --backend smt");
  if (sr.steps < 1)
    return fail({}, fmt::format("steps must be at least 1, got {}", sr.steps));
  if (sr.rounds < sr.steps)
    return fail({}, fmt::format("rounds ({}) must be at least steps ({}): every step takes a "
                                "round",
                                sr.rounds, sr.steps));
  if (chunks < 1)
    return fail({}, fmt::format("chunks must be at least 1, got {}", chunks));
  if (target.kind == CollectiveKind::Allreduce && target.allreduce == AllreduceMethod::Composed &&
      chunks % topology.num_ranks() != 0)
    return fail({}, fmt::format("a composed Allreduce has ranks x (ReduceScatter chunks) chunks: "
                                "{} is not a multiple of {} (or use --allreduce direct)",
                                chunks, topology.num_ranks()));
  return {};
}

Answer unknown_answer(std::string detail) {
  Answer a;
  a.verdict = Verdict::Unknown;
  a.detail = std::move(detail);
  return a;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

Expected<CollectiveSpec> Target::collective(int ranks, int chunks) const {
  if (kind == CollectiveKind::Custom) {
    SYNCOLL_INVARIANT(custom.has_value(), "custom target without its collective");
    if (chunks != custom->chunk_factor())
      return fail({}, fmt::format("a custom collective has its own chunks ({}); got {}",
                                  custom->chunk_factor(), chunks));
    if (custom->num_ranks() != ranks)
      return fail({}, fmt::format("the collective has {} ranks, the topology {}",
                                  custom->num_ranks(), ranks));
    return *custom;
  }
  return make_collective(kind, ranks, chunks, root);
}

std::string Target::name() const {
  return kind == CollectiveKind::Custom ? custom->name() : std::string(collective_kind_name(kind));
}

Expected<Answer> synthesize(const Topology &topology, const Target &target, int chunks,
                            StepsRounds sr, const SynthOptions &options) {
  SYNCOLL_CHECK(usable(topology, target, chunks, sr, options));
  const int P = topology.num_ranks();
  if (target.kind != CollectiveKind::Allreduce || target.allreduce == AllreduceMethod::Direct) {
    SYNCOLL_TRY(spec, target.collective(P, chunks));
    Answer a = solve_one(topology, spec, sr, options);
    if (a.verdict == Verdict::Unsat && spec.is_combining() && !non_combining_dual(spec))
      a.unsat_scope = "algorithms that reduce each chunk up one tree into a root and copy it "
                      "down another (exchanges such as recursive doubling are not in it)";
    certify(a, topology, spec, target, sr);
    return a;
  }
  // Composed Allreduce: every split of the steps and rounds into a ReduceScatter and an
  // Allgather, the most even first (the two phases are duals, so even splits tend to fit).
  const auto start = std::chrono::steady_clock::now();
  const int per_rank = chunks / P;
  SYNCOLL_TRY(rs, make_collective(CollectiveKind::ReduceScatter, P, per_rank));
  SYNCOLL_TRY(ag, make_collective(CollectiveKind::Allgather, P, per_rank));
  SYNCOLL_TRY(ar, make_collective(CollectiveKind::Allreduce, P, chunks));
  std::vector<std::pair<StepsRounds, StepsRounds>> splits;
  for (int s1 = 1; s1 < sr.steps; ++s1)
    for (int r1 = s1; sr.rounds - r1 >= sr.steps - s1; ++r1)
      splits.push_back({{s1, r1}, {sr.steps - s1, sr.rounds - r1}});
  std::stable_sort(splits.begin(), splits.end(), [](const auto &a, const auto &b) {
    return std::abs(a.first.steps - a.second.steps) + std::abs(a.first.rounds - a.second.rounds) <
           std::abs(b.first.steps - b.second.steps) + std::abs(b.first.rounds - b.second.rounds);
  });
  Answer result;
  result.verdict = Verdict::Unsat;
  result.detail = "no ReduceScatter + Allgather split of these steps and rounds exists";
  result.unsat_scope = "ReduceScatter followed by Allgather";
  if (splits.empty())
    result.detail = "a composed Allreduce needs at least 2 steps";
  for (const auto &[first, second] : splits) {
    Answer a = solve_one(topology, rs, first, options);
    if (a.verdict != Verdict::Sat) {
      if (a.verdict == Verdict::Unknown)
        result = unknown_answer("ReduceScatter " + a.detail);
      continue;
    }
    Answer b = solve_one(topology, ag, second, options);
    if (b.verdict == Verdict::Unknown)
      result = unknown_answer("Allgather " + b.detail);
    if (b.verdict != Verdict::Sat)
      continue;
    result.verdict = Verdict::Sat;
    result.unsat_scope.clear();
    result.algorithm = compose_allreduce(*a.algorithm, *b.algorithm, P, per_rank);
    result.detail = fmt::format("ReduceScatter (S{},R{}) + Allgather (S{},R{})", first.steps,
                                first.rounds, second.steps, second.rounds);
    break;
  }
  result.seconds = seconds_since(start);
  certify(result, topology, ar, target, sr);
  return result;
}

Expected<LeastSteps> least_steps(const Topology &topology, const Target &target, int chunks,
                                 std::optional<int> rounds, int k, int max_steps,
                                 const SynthOptions &options) {
  SYNCOLL_CHECK(without_switches(topology));
  SYNCOLL_TRY(spec, target.collective(topology.num_ranks(), chunks));
  LeastSteps out;
  out.steps_lower_bound = steps_lower_bound(topology, spec);
  if (out.steps_lower_bound >= kUnreachable)
    return fail({}, "some post rank cannot be reached from the chunk's pre ranks at all");
  // With the SAT backend the fewest rounds come from the same formula, by assumptions; a
  // composed Allreduce (two formulas per split) and the SMT backend try the rounds one by one.
  const bool composed =
      target.kind == CollectiveKind::Allreduce && target.allreduce == AllreduceMethod::Composed;
  SynthOptions search = options;
  search.fewest_rounds = !rounds && options.backend == Backend::Sat && !composed;
  const auto start = std::chrono::steady_clock::now();
  // Gives each call what is left of the search's limit; false once it is spent.
  auto budget = [&](SynthOptions &o) {
    if (options.search_time_limit_s <= 0)
      return true;
    const double left =
        options.search_time_limit_s -
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left <= 0)
      return false;
    o.time_limit_s = options.time_limit_s > 0 ? std::min(options.time_limit_s, left) : left;
    return true;
  };
  for (int s = std::max(1, out.steps_lower_bound); s <= max_steps; ++s) {
    const StepsRounds sr{s, rounds ? std::max(*rounds, s) : s + k};
    if (rounds && *rounds < s)
      break;
    if (!budget(search))
      break;
    SYNCOLL_TRY(a, synthesize(topology, target, chunks, sr, search));
    out.attempts.push_back({chunks, sr, a.verdict, a.seconds, a.detail});
    if (a.verdict == Verdict::Sat) {
      out.proven_least = std::all_of(out.attempts.begin(), out.attempts.end() - 1,
                                     [](const Attempt &x) { return x.verdict == Verdict::Unsat; });
      out.found = std::move(a);
      break;
    }
  }
  // The fewest rounds at the fewest steps, when the rounds were left open.
  if (out.found && !rounds && !search.fewest_rounds)
    for (int r = out.found->algorithm->num_steps(); r < out.found->algorithm->total_rounds(); ++r) {
      const StepsRounds sr{out.found->algorithm->num_steps(), r};
      SynthOptions call = options;
      if (!budget(call))
        break;
      SYNCOLL_TRY(a, synthesize(topology, target, chunks, sr, call));
      out.attempts.push_back({chunks, sr, a.verdict, a.seconds, a.detail});
      if (a.verdict == Verdict::Sat) {
        out.found = std::move(a);
        break;
      }
    }
  return out;
}

Expected<Pareto> pareto(const Topology &topology, const Target &target,
                        const ParetoOptions &options) {
  SYNCOLL_CHECK(without_switches(topology));
  const int P = topology.num_ranks();
  if (target.kind == CollectiveKind::Custom)
    return fail({}, "the Pareto search varies the chunk count; a custom collective has its own "
                    "(use instance or least-steps)");
  if (options.k < 0 || options.max_chunks < 1)
    return fail({}, "k must be at least 0 and --max-chunks at least 1");
  const bool composed =
      target.kind == CollectiveKind::Allreduce && target.allreduce == AllreduceMethod::Composed;
  if (target.kind == CollectiveKind::Allreduce && !composed)
    return fail({}, "the Pareto search needs a rounds-per-chunk bound, which a direct Allreduce "
                    "lacks; use the composed method");
  // The search runs on the Allgather for a composed Allreduce; each point gets its dual.
  Target searched = target;
  if (composed)
    searched.kind = CollectiveKind::Allgather;
  SYNCOLL_TRY(one, searched.collective(P, 1));
  Pareto out;
  out.steps_lower_bound = steps_lower_bound(topology, one);
  if (out.steps_lower_bound >= kUnreachable)
    return fail({}, "some post rank cannot be reached from the chunk's pre ranks at all");
  if (auto dual = non_combining_dual(one))
    out.rounds_per_chunk_bound = rounds_per_chunk_bound(reverse_topology(topology), *dual);
  else
    out.rounds_per_chunk_bound = rounds_per_chunk_bound(topology, one);
  SYNCOLL_INVARIANT(out.rounds_per_chunk_bound.has_value(), "a bound for a searchable collective");
  const Fraction bound = *out.rounds_per_chunk_bound;
  const int max_steps = options.max_steps > 0 ? options.max_steps : out.steps_lower_bound + 6;
  std::optional<Fraction> best;
  bool unknown_seen = false;
  for (int S = std::max(1, out.steps_lower_bound); S <= max_steps; ++S) {
    struct Candidate {
      int rounds, chunks;
      Fraction rpc;
    };
    std::vector<Candidate> candidates;
    for (int R = S; R <= S + options.k; ++R)
      for (int C = 1; C <= options.max_chunks; ++C) {
        const Fraction rpc = Fraction::of(R, C);
        if (less(rpc, bound) || (best && !less(rpc, *best)))
          continue;
        candidates.push_back({R, C, rpc});
      }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate &a, const Candidate &b) {
                       return less(a.rpc, b.rpc) || (a.rpc == b.rpc && a.chunks < b.chunks);
                     });
    for (const Candidate &c : candidates) {
      const StepsRounds sr{S, c.rounds};
      SYNCOLL_TRY(a, synthesize(topology, searched, c.chunks, sr, options.synth));
      Attempt attempt{c.chunks, sr, a.verdict, a.seconds, a.detail};
      out.attempts.push_back(attempt);
      if (options.on_attempt)
        options.on_attempt(attempt);
      if (a.verdict == Verdict::Unknown)
        unknown_seen = true;
      if (a.verdict != Verdict::Sat)
        continue;
      ParetoPoint point{c.chunks,       sr,           c.rpc,    S == out.steps_lower_bound,
                        c.rpc == bound, *a.algorithm, a.seconds};
      if (composed) {
        // The ReduceScatter of the same shape, inverted from the Allgather's dual problem.
        SYNCOLL_TRY(r, synthesize(topology, Target{CollectiveKind::ReduceScatter, {}, {}}, c.chunks,
                                  sr, options.synth));
        out.attempts.push_back({c.chunks, sr, r.verdict, r.seconds, "ReduceScatter " + r.detail});
        if (r.verdict != Verdict::Sat) {
          out.note = fmt::format("the ReduceScatter for Allgather (S{},R{},C{}) was {}; the "
                                 "Allreduce frontier stops there",
                                 S, c.rounds, c.chunks, verdict_name(r.verdict));
          return out;
        }
        SYNCOLL_TRY(ar, make_collective(CollectiveKind::Allreduce, P, P * c.chunks));
        Answer composed_answer;
        composed_answer.verdict = Verdict::Sat;
        composed_answer.algorithm = compose_allreduce(*r.algorithm, *a.algorithm, P, c.chunks);
        composed_answer.seconds = a.seconds + r.seconds;
        const StepsRounds total{2 * S, 2 * c.rounds};
        certify(composed_answer, topology, ar, target, total);
        point = {P * c.chunks,
                 total,
                 Fraction::of(2 * c.rounds, P * c.chunks),
                 false,
                 false,
                 *composed_answer.algorithm,
                 composed_answer.seconds};
      }
      out.frontier.push_back(std::move(point));
      best = c.rpc;
      break;
    }
    if (best && *best == bound) {
      out.complete = !unknown_seen;
      if (unknown_seen)
        out.note = "some instances were unknown (time limit): points may be missing";
      return out;
    }
  }
  out.note = fmt::format("stopped at {} steps before reaching the rounds-per-chunk bound {}",
                         max_steps, to_string(bound));
  return out;
}

} // namespace syncoll::synth
