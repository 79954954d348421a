#include "verifier/verify.h"

#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "verifier/detail/connections.h"
#include "verifier/detail/execution.h"
#include "verifier/detail/races.h"
#include "verifier/detail/symbolic.h"
#include "verifier/model_checker.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace syncoll::verifier {
namespace {

using detail::BlockedTb;
using detail::ConnectionMap;

int fifo_capacity(Protocol p) {
  return protocol_traits(p).fifo_messages;
}

std::string regime(const Coverage &coverage, Protocol p, const SplitRegime &r, int iterations) {
  return fmt::format("{} protocol, {} messages per FIFO, {}, {} pipeline iterations",
                     protocol_name(p), fifo_capacity(p), coverage.describe(r), iterations);
}

std::string step_text(const Program &p, const StepRef &s) {
  const ThreadBlock &tb = p.rank(s.rank).thread_blocks[s.tb.index()];
  return fmt::format("{} ({})", describe(s), op_type_name(tb.steps[size_t(s.step)].op));
}

DeadlockCounterexample explain_deadlock(const Program &p, const ConnectionMap &cm,
                                        const detail::ExecutionResult &r, std::string regime_text,
                                        Protocol proto, int iterations) {
  DeadlockCounterexample ce;
  ce.regime = std::move(regime_text);
  std::map<std::pair<int, int>, const BlockedTb *> blocked;
  for (const BlockedTb &b : r.blocked)
    blocked[{b.at.rank.value(), b.at.tb.value()}] = &b;
  auto wait_of = [&](const BlockedTb &b) {
    Wait w{b.at, "", std::nullopt, std::nullopt};
    std::string msg =
        b.messages > 1 ? fmt::format(", message {}/{}", b.message + 1, b.messages) : std::string();
    switch (b.kind) {
    case BlockedTb::Kind::Receive: {
      const auto &c = cm.connections[size_t(b.connection)];
      w.reason = fmt::format("receives from rank {} on channel {}{}, but the FIFO is empty",
                             c.sender.value(), c.channel.value(), msg);
      if (!c.pushers.empty())
        w.on_rank = c.sender, w.on_tb = c.pushers.front();
      else
        w.reason += "; no thread block of rank " + std::to_string(c.sender.value()) +
                    " sends on this connection";
      break;
    }
    case BlockedTb::Kind::Send: {
      const auto &c = cm.connections[size_t(b.connection)];
      w.reason = fmt::format("sends to rank {} on channel {}{}, but the FIFO is full ({} messages)",
                             c.receiver.value(), c.channel.value(), msg, fifo_capacity(proto));
      if (!c.poppers.empty())
        w.on_rank = c.receiver, w.on_tb = c.poppers.front();
      else
        w.reason += "; no thread block of rank " + std::to_string(c.receiver.value()) +
                    " receives on this connection";
      break;
    }
    case BlockedTb::Kind::Dependency: {
      const Instruction &in =
          p.rank(b.at.rank).thread_blocks[b.at.tb.index()].steps[size_t(b.at.step)];
      w.reason =
          fmt::format("waits for tb {} to publish step {} of iteration {}",
                      in.dependency->tb.value(), in.dependency->step.value(), b.at.iteration);
      if (in.dependency->tb.index() < p.rank(b.at.rank).thread_blocks.size())
        w.on_rank = b.at.rank, w.on_tb = in.dependency->tb;
      else
        w.reason += ", which does not exist";
      break;
    }
    }
    return w;
  };
  // Each blocked thread block waits for exactly one other: follow the edges to a cycle, or to a
  // thread block that finished (a lost wake-up) or does not exist.
  const BlockedTb *cur = &r.blocked.front();
  std::set<std::pair<int, int>> visited;
  std::vector<Wait> chain;
  while (cur) {
    const std::pair<int, int> key{cur->at.rank.value(), cur->at.tb.value()};
    if (!visited.insert(key).second) {
      auto start = std::find_if(chain.begin(), chain.end(), [&](const Wait &w) {
        return w.waiter.rank.value() == key.first && w.waiter.tb.value() == key.second;
      });
      ce.cycle.assign(start, chain.end());
      break;
    }
    Wait w = wait_of(*cur);
    chain.push_back(w);
    if (!w.on_tb) {
      ce.cycle = chain;
      break;
    }
    auto it = blocked.find({w.on_rank->value(), w.on_tb->value()});
    if (it == blocked.end()) {
      chain.back().reason += fmt::format(" (rank {} tb {} has finished all its iterations)",
                                         w.on_rank->value(), w.on_tb->value());
      ce.cycle = chain;
      ce.lost_wakeup = true;
      break;
    }
    cur = it->second;
  }
  constexpr size_t kShown = 12;
  for (size_t i = 0; i < r.blocked.size() && i < kShown; ++i)
    ce.prefix.push_back(
        fmt::format("{} is stuck; the steps before it completed", step_text(p, r.blocked[i].at)));
  if (r.blocked.size() > kShown)
    ce.prefix.push_back(
        fmt::format("... and {} more stuck thread blocks", r.blocked.size() - kShown));
  ce.prefix.push_back(
      fmt::format("{} thread block(s) finished all {} iterations", r.finished_tbs, iterations));
  return ce;
}

Verdict issues_verdict(Property property, std::vector<StructuralIssue> issues) {
  Verdict v{property, VerdictKind::Holds, "", "static rules", std::monostate{}};
  if (issues.empty()) {
    v.summary = "holds";
    return v;
  }
  v.kind = VerdictKind::Violated;
  v.summary = fmt::format("violated: {} rule(s) broken", issues.size());
  v.counterexample = std::move(issues);
  return v;
}

std::vector<std::pair<bool, std::string>> aliasing_modes(const Program &p) {
  std::vector<std::pair<bool, std::string>> modes;
  if (p.in_place())
    modes.emplace_back(true, "in place");
  if (p.out_of_place() || !p.in_place())
    modes.emplace_back(false, "out of place");
  return modes;
}

// What every property check shares: the program, its connections, the regime it is checked in.
struct CheckContext {
  const Program &program;
  const VerifyOptions &options;
  const ConnectionMap connections;
  const Protocol protocol;
  const int iterations;
  const std::optional<CollectiveSpec> &collective;
  const Coverage coverage;
};

// The counts of the steps that send or receive, ascending: count splitting acts on these only.
std::vector<int> transfer_counts(const Program &p) {
  std::set<int> counts{1};
  for (const RankProgram &rp : p.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks)
      for (const Instruction &in : tb.steps)
        if (op_sends(in.op) || op_receives(in.op))
          counts.insert(std::max(1, in.count));
  return {counts.begin(), counts.end()};
}

// The message sizes to check (the program's window, narrowed by the user's) and the
// count-splitting regimes they reach (docs/semantics.md, "Size windows and regimes"). A regime
// is a distinct split of the program's steps into transfers; each is named by the smallest
// message size that reaches it.
Coverage size_coverage(const Program &p, Protocol protocol, const std::optional<SizeWindow> &user) {
  Coverage c;
  c.chunks_per_loop = p.chunks_per_loop();
  const std::vector<int> counts = transfer_counts(p);
  c.largest_step_count = counts.back();
  c.min_bytes = p.draft().min_bytes;
  if (p.draft().max_bytes > 0)
    c.max_bytes = p.draft().max_bytes;
  c.source = "the program's minBytes and maxBytes";
  if (user) {
    c.min_bytes = std::max(c.min_bytes, user->min_bytes);
    if (user->max_bytes)
      c.max_bytes = c.max_bytes ? std::min(*c.max_bytes, *user->max_bytes) : *user->max_bytes;
    c.source = "the sizes asked for, within the program's minBytes and maxBytes";
  }
  // The executor runs the program for sizes whose chunks are whole (nBytes a multiple of
  // nchunksperloop, with one-byte elements); a chunk is at least one byte.
  const int64_t loop = c.chunks_per_loop;
  const int64_t first_chunk = std::max<int64_t>(1, (c.min_bytes + loop - 1) / loop);
  const std::optional<int64_t> last_chunk =
      c.max_bytes ? std::optional<int64_t>(*c.max_bytes / loop) : std::nullopt;
  if (last_chunk && *last_chunk < first_chunk)
    return c;
  const int most = max_chunks_per_transfer(protocol, first_chunk);
  const int least = last_chunk ? max_chunks_per_transfer(protocol, *last_chunk) : 1;
  // Transfers per step for every m from most down to least; consecutive m that split every step
  // alike are one regime, met first at the largest m.
  auto transfers = [&](int m) { return std::min(m, c.largest_step_count); };
  for (int m = most; m >= least; --m) {
    if (!c.regimes.empty()) {
      // Same split of every count as the previous regime: ceil(cnt/m) unchanged for all cnt.
      bool same = true;
      const int previous = c.regimes.back().max_chunks;
      for (int count : counts)
        same = same && (count + m - 1) / m == (count + previous - 1) / previous;
      if (same)
        continue;
    }
    const int64_t chunk = std::max(first_chunk, smallest_chunk_with_at_most(protocol, m));
    c.regimes.push_back({transfers(m), chunk * loop});
  }
  return c;
}

// A deadlock in one count-splitting regime, by the linear check (sound under the structural
// rules, docs/semantics.md) or else the model checker; none when that regime completes.
std::optional<Verdict> deadlock_in_regime(const CheckContext &c, const SplitRegime &regime_checked,
                                          bool linear_sound) {
  const Program &program = c.program;
  const int capacity = fifo_capacity(c.protocol);
  const int per_transfer = regime_checked.max_chunks;
  const std::string regime_text = regime(c.coverage, c.protocol, regime_checked, c.iterations);
  if (linear_sound) {
    detail::ExecutionConfig cfg{capacity, per_transfer, c.iterations};
    auto r = detail::execute(program, c.connections, cfg, nullptr);
    if (c.options.cross_check) {
      auto mc = model_check_deadlock(
          program, {capacity, per_transfer, c.iterations, c.options.model_check_states, true});
      SYNCOLL_INVARIANT(mc.outcome == ModelCheckResult::Outcome::Unknown ||
                            (mc.outcome == ModelCheckResult::Outcome::Deadlock) == !r.completed,
                        "linear deadlock check and model checker disagree");
    }
    if (r.completed)
      return std::nullopt;
    Verdict v{Property::DeadlockFreedom, VerdictKind::Violated, "", "linear check",
              std::monostate{}};
    auto ce = explain_deadlock(program, c.connections, r, regime_text, c.protocol, c.iterations);
    v.summary = fmt::format("violated: {} thread block(s) stuck ({}){}", r.blocked.size(),
                            c.coverage.describe(regime_checked),
                            ce.lost_wakeup ? ", a lost wake-up" : ", a wait-for cycle");
    v.counterexample = std::move(ce);
    return v;
  }
  auto mc = model_check_deadlock(
      program, {capacity, per_transfer, c.iterations, c.options.model_check_states, true});
  Verdict v{Property::DeadlockFreedom, VerdictKind::Violated, "", "model checker",
            std::monostate{}};
  switch (mc.outcome) {
  case ModelCheckResult::Outcome::DeadlockFree:
    return std::nullopt;
  case ModelCheckResult::Outcome::Unknown:
    v.kind = VerdictKind::Unknown;
    v.summary = fmt::format("unknown: the model checker stopped at {} states", mc.states);
    return v;
  case ModelCheckResult::Outcome::Deadlock: {
    DeadlockCounterexample ce;
    ce.regime = regime_text;
    for (const StepRef &s : mc.stuck)
      ce.cycle.push_back({s, "cannot move", std::nullopt, std::nullopt});
    ce.prefix = mc.trace;
    v.summary = fmt::format("violated: an interleaving deadlocks ({}; {} states explored)",
                            c.coverage.describe(regime_checked), mc.states);
    v.counterexample = std::move(ce);
    return v;
  }
  }
  SYNCOLL_UNREACHABLE("unknown model checker outcome");
}

// Deadlock freedom, in every count-splitting regime a message size in the window reaches.
Verdict check_deadlock(const CheckContext &c, bool linear_sound) {
  for (const SplitRegime &r : c.coverage.regimes)
    if (auto found = deadlock_in_regime(c, r, linear_sound))
      return *std::move(found);
  const std::string decided_by = linear_sound ? "linear check" : "model checker";
  if (c.coverage.regimes.empty())
    return {Property::DeadlockFreedom, VerdictKind::Holds,
            "holds: no message size in the window is a whole number of chunks, so the executor "
            "never selects the program",
            decided_by, std::monostate{}};
  return {Property::DeadlockFreedom, VerdictKind::Holds,
          fmt::format("holds: {} protocol ({} messages per FIFO), {} count-splitting regime(s) of "
                      "the size window, {} iterations",
                      protocol_name(c.protocol), fifo_capacity(c.protocol),
                      c.coverage.regimes.size(), c.iterations),
          decided_by, std::monostate{}};
}

// Race freedom, in every aliasing mode the program claims.
Verdict check_races(const CheckContext &c) {
  Verdict races{Property::RaceFreedom, VerdictKind::Holds, "", "happens-before (vector clocks)",
                std::monostate{}};
  std::vector<RaceCounterexample> found;
  std::string modes_checked;
  const CollectiveSpec *collective = c.collective ? &*c.collective : nullptr;
  for (const auto &[in_place, name] : aliasing_modes(c.program)) {
    detail::SymbolicMemory cells(c.program, collective, in_place);
    auto r = detail::find_races(c.program, c.connections, cells, c.options.race_mode, name, 10);
    found.insert(found.end(), r.begin(), r.end());
    modes_checked += (modes_checked.empty() ? "" : " and ") + name;
  }
  const char *mode = c.options.race_mode == RaceMode::Strict ? "strict" : "relaxed";
  if (found.empty()) {
    races.summary = fmt::format("holds ({} mode, {})", mode, modes_checked);
    return races;
  }
  races.kind = VerdictKind::Violated;
  races.summary = fmt::format("violated: {}{} unordered conflicting access pair(s) ({} mode)",
                              found.size() >= 10 ? "at least " : "", found.size(), mode);
  races.counterexample = std::move(found);
  return races;
}

// The postcondition in one aliasing mode, by symbolic execution of the first iteration; a
// violation when the program stops before finishing it or leaves a wrong output slot.
std::optional<Verdict> postcondition_in_mode(const CheckContext &c, bool in_place,
                                             const std::string &name) {
  const CollectiveSpec &collective = *c.collective;
  detail::SymbolicMemory memory(c.program, &collective, in_place);
  detail::ExecutionConfig cfg{fifo_capacity(c.protocol), kMaxStepCount, c.iterations};
  auto r = detail::execute(c.program, c.connections, cfg, &memory);
  const bool first_iteration_done = std::all_of(
      r.blocked.begin(), r.blocked.end(), [](const BlockedTb &b) { return b.at.iteration > 0; });
  Verdict v{Property::Postcondition, VerdictKind::Violated, "", "symbolic execution",
            std::monostate{}};
  PostconditionCounterexample ce{name, {}};
  if (!first_iteration_done) {
    v.summary = fmt::format("violated: the program deadlocks before it completes ({})", name);
    v.counterexample = ce;
    return v;
  }
  constexpr size_t kShown = 20;
  for (int chunk = 0; chunk < collective.num_chunks() && ce.slots.size() < kShown; ++chunk) {
    detail::Value expected{true, collective.expected_value(ChunkId(chunk))};
    for (const ChunkPlace &place : collective.chunk(ChunkId(chunk)).post) {
      detail::Value got = memory.read(place.rank, BufferKind::Output, place.slot);
      if (got == expected)
        continue;
      if (ce.slots.size() == kShown)
        break;
      ce.slots.push_back({place.rank, place.slot, detail::describe_value(expected, collective),
                          detail::describe_value(got, collective)});
    }
  }
  if (ce.slots.empty())
    return std::nullopt;
  v.summary = fmt::format("violated: wrong output {} ({}{} slot(s))", name,
                          ce.slots.size() >= kShown ? "at least " : "", ce.slots.size());
  v.counterexample = std::move(ce);
  return v;
}

Verdict check_postcondition(const CheckContext &c, const std::string &no_collective,
                            bool races_hold) {
  Verdict post{Property::Postcondition, VerdictKind::Holds, "", "symbolic execution",
               std::monostate{}};
  if (!c.collective) {
    post.kind = VerdictKind::Unknown;
    post.summary = "unknown: " + no_collective;
    return post;
  }
  std::string modes;
  for (const auto &[in_place, name] : aliasing_modes(c.program)) {
    if (auto wrong = postcondition_in_mode(c, in_place, name))
      return *std::move(wrong);
    modes += (modes.empty() ? "" : " and ") + name;
  }
  post.summary = fmt::format("holds: {} with chunk factor {}, {}", c.collective->name(),
                             c.collective->chunk_factor(), modes);
  // Races make the data depend on the interleaving; one execution decides nothing then.
  if (!races_hold)
    post.summary += " (in one execution order only: the races make the result order-dependent)";
  return post;
}

// The collective the program is checked against: the one given, or the one its header names.
Expected<CollectiveSpec> collective_checked(const Program &program, const VerifyOptions &options) {
  if (options.collective)
    return *options.collective;
  return collective_for_program(program, options.root);
}

} // namespace

Report verify(const Program &program, const VerifyOptions &options) {
  std::optional<CollectiveSpec> collective;
  std::string no_collective;
  if (auto checked = collective_checked(program, options))
    collective = *checked;
  else
    no_collective = checked.error().items().front().message;
  const Protocol protocol = options.protocol.value_or(program.protocol());
  const CheckContext context{program,
                             options,
                             detail::map_connections(program),
                             protocol,
                             std::max(2, options.iterations),
                             collective,
                             size_coverage(program, protocol, options.sizes)};
  Report report;
  report.coverage = context.coverage;
  std::vector<int> transfer_sizes;
  for (const SplitRegime &r : context.coverage.regimes)
    transfer_sizes.push_back(r.max_chunks);
  std::vector<StructuralIssue> structure =
      check_structure(program, collective ? &*collective : nullptr, transfer_sizes);
  const bool linear_sound = !breaks_persistence(structure);
  report.verdicts.push_back(issues_verdict(Property::Structure, std::move(structure)));
  report.verdicts.push_back(
      issues_verdict(Property::Resources, check_resources(program, options.limits)));
  if (!options.check_unfit_programs &&
      report.verdict(Property::Resources).kind == VerdictKind::Violated) {
    for (Property p : {Property::DeadlockFreedom, Property::RaceFreedom, Property::Postcondition})
      report.verdicts.push_back({p, VerdictKind::Unknown,
                                 "unknown: not checked (the program does not fit the executor)",
                                 "not run", std::monostate{}});
    return report;
  }
  report.verdicts.push_back(check_deadlock(context, linear_sound));
  report.verdicts.push_back(check_races(context));
  const bool races_hold = report.verdict(Property::RaceFreedom).kind == VerdictKind::Holds;
  report.verdicts.push_back(check_postcondition(context, no_collective, races_hold));
  return report;
}

tl::expected<VerifiedProgram, Report> certify(const Program &program,
                                              const VerifyOptions &options) {
  Report report = verify(program, options);
  if (!report.all_hold())
    return tl::unexpected(std::move(report));
  // The postcondition held, so there was a collective to hold against.
  auto collective = collective_checked(program, options);
  SYNCOLL_INVARIANT(collective.has_value(), "a postcondition held without a collective");
  return VerifiedProgram(program, std::move(*collective), std::move(report));
}

} // namespace syncoll::verifier
