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

std::string regime(Protocol p, bool split, int iterations) {
  return fmt::format("{} protocol, {} messages per FIFO, {}, {} pipeline iterations",
                     protocol_name(p), fifo_capacity(p),
                     split ? "large messages (one transfer per chunk)"
                           : "small messages (one transfer per step)",
                     iterations);
}

std::string step_text(const Program &p, const StepRef &s) {
  const ThreadBlock &tb = p.rank(s.rank).thread_blocks[s.tb.index()];
  return fmt::format("{} ({})", describe(s), op_type_name(tb.steps[size_t(s.step)].op));
}

DeadlockCounterexample explain_deadlock(const Program &p, const ConnectionMap &cm,
                                        const detail::ExecutionResult &r, Protocol proto,
                                        bool split, int iterations) {
  DeadlockCounterexample ce;
  ce.regime = regime(proto, split, iterations);
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

} // namespace

Report verify(const Program &program, const VerifyOptions &options) {
  Report report;
  const Protocol proto = options.protocol.value_or(program.protocol());
  const int iterations = std::max(2, options.iterations);
  std::optional<CollectiveSpec> collective = options.collective;
  std::string no_collective;
  if (!collective) {
    auto inferred = collective_for_program(program, options.root);
    if (inferred)
      collective = *inferred;
    else
      no_collective = inferred.error().items().front().message;
  }

  std::vector<StructuralIssue> structure =
      check_structure(program, collective ? &*collective : nullptr);
  const bool linear_sound = !breaks_persistence(structure);
  report.verdicts.push_back(issues_verdict(Property::Structure, structure));
  report.verdicts.push_back(
      issues_verdict(Property::Resources, check_resources(program, options.limits)));

  // Deadlock freedom, in both count-splitting regimes.
  const ConnectionMap cm = detail::map_connections(program);
  Verdict deadlock{Property::DeadlockFreedom, VerdictKind::Holds, "", "", std::monostate{}};
  deadlock.decided_by = linear_sound ? "linear check" : "model checker";
  for (bool split : {false, true}) {
    if (linear_sound) {
      detail::ExecutionConfig cfg{fifo_capacity(proto), split, iterations};
      auto r = detail::execute(program, cm, cfg, nullptr);
      if (options.cross_check) {
        auto mc = model_check_deadlock(
            program, {fifo_capacity(proto), split, iterations, options.model_check_states, true});
        SYNCOLL_INVARIANT(mc.outcome == ModelCheckResult::Outcome::Unknown ||
                              (mc.outcome == ModelCheckResult::Outcome::Deadlock) == !r.completed,
                          "linear deadlock check and model checker disagree");
      }
      if (!r.completed) {
        deadlock.kind = VerdictKind::Violated;
        auto ce = explain_deadlock(program, cm, r, proto, split, iterations);
        deadlock.summary =
            fmt::format("violated: {} thread block(s) stuck ({}){}", r.blocked.size(),
                        split ? "large messages" : "small messages",
                        ce.lost_wakeup ? ", a lost wake-up" : ", a wait-for cycle");
        deadlock.counterexample = std::move(ce);
        break;
      }
    } else {
      auto mc = model_check_deadlock(
          program, {fifo_capacity(proto), split, iterations, options.model_check_states, true});
      if (mc.outcome == ModelCheckResult::Outcome::Unknown) {
        deadlock.kind = VerdictKind::Unknown;
        deadlock.summary =
            fmt::format("unknown: the model checker stopped at {} states", mc.states);
        break;
      }
      if (mc.outcome == ModelCheckResult::Outcome::Deadlock) {
        deadlock.kind = VerdictKind::Violated;
        DeadlockCounterexample ce;
        ce.regime = regime(proto, split, iterations);
        for (const StepRef &s : mc.stuck)
          ce.cycle.push_back({s, "cannot move", std::nullopt, std::nullopt});
        ce.prefix = mc.trace;
        deadlock.summary =
            fmt::format("violated: an interleaving deadlocks ({} states explored)", mc.states);
        deadlock.counterexample = std::move(ce);
        break;
      }
    }
  }
  if (deadlock.kind == VerdictKind::Holds)
    deadlock.summary = fmt::format("holds: {} protocol ({} messages per FIFO), small and large "
                                   "messages, {} iterations",
                                   protocol_name(proto), fifo_capacity(proto), iterations);
  report.verdicts.push_back(std::move(deadlock));

  // Race freedom, in every aliasing mode the program claims.
  Verdict races{Property::RaceFreedom, VerdictKind::Holds, "", "happens-before (vector clocks)",
                std::monostate{}};
  std::vector<RaceCounterexample> found;
  std::string modes_checked;
  for (const auto &[in_place, name] : aliasing_modes(program)) {
    detail::SymbolicMemory cells(program, collective ? &*collective : nullptr, in_place);
    auto r = detail::find_races(program, cm, cells, options.race_mode, name, 10);
    found.insert(found.end(), r.begin(), r.end());
    modes_checked += (modes_checked.empty() ? "" : " and ") + name;
  }
  const char *mode = options.race_mode == RaceMode::Strict ? "strict" : "relaxed";
  if (found.empty()) {
    races.summary = fmt::format("holds ({} mode, {})", mode, modes_checked);
  } else {
    races.kind = VerdictKind::Violated;
    races.summary = fmt::format("violated: {}{} unordered conflicting access pair(s) ({} mode)",
                                found.size() >= 10 ? "at least " : "", found.size(), mode);
    races.counterexample = std::move(found);
  }
  report.verdicts.push_back(std::move(races));

  // Postcondition, by symbolic execution in every aliasing mode the program claims.
  Verdict post{Property::Postcondition, VerdictKind::Holds, "", "symbolic execution",
               std::monostate{}};
  if (!collective) {
    post.kind = VerdictKind::Unknown;
    post.summary = "unknown: " + no_collective;
  } else {
    for (const auto &[in_place, name] : aliasing_modes(program)) {
      detail::SymbolicMemory memory(program, &*collective, in_place);
      detail::ExecutionConfig cfg{fifo_capacity(proto), false, iterations};
      auto r = detail::execute(program, cm, cfg, &memory);
      bool first_iteration_done =
          std::all_of(r.blocked.begin(), r.blocked.end(),
                      [](const BlockedTb &b) { return b.at.iteration > 0; });
      PostconditionCounterexample ce{name, {}};
      if (!first_iteration_done) {
        post.kind = VerdictKind::Violated;
        post.summary =
            fmt::format("violated: the program deadlocks before it completes ({})", name);
        post.counterexample = ce;
        break;
      }
      for (int c = 0; c < collective->num_chunks(); ++c) {
        detail::Value expected{true, collective->expected_value(ChunkId(c))};
        for (const ChunkPlace &place : collective->chunk(ChunkId(c)).post) {
          detail::Value got = memory.read(place.rank, BufferKind::Output, place.slot);
          if (got == expected)
            continue;
          if (ce.slots.size() < 20)
            ce.slots.push_back({place.rank, place.slot,
                                detail::describe_value(expected, *collective),
                                detail::describe_value(got, *collective)});
          else
            break;
        }
      }
      if (!ce.slots.empty()) {
        post.kind = VerdictKind::Violated;
        post.summary = fmt::format("violated: wrong output {} ({}{} slot(s))", name,
                                   ce.slots.size() >= 20 ? "at least " : "", ce.slots.size());
        post.counterexample = std::move(ce);
        break;
      }
    }
    if (post.kind == VerdictKind::Holds) {
      std::string modes;
      for (const auto &m : aliasing_modes(program))
        modes += (modes.empty() ? "" : " and ") + m.second;
      post.summary = fmt::format("holds: {} with chunk factor {}, {}", collective->name(),
                                 collective->chunk_factor(), modes);
      // Races make the data depend on the interleaving; one execution decides nothing then.
      if (report.verdict(Property::RaceFreedom).kind != VerdictKind::Holds)
        post.summary += " (in one execution order only: the races make the result order-dependent)";
    }
  }
  report.verdicts.push_back(std::move(post));
  return report;
}

tl::expected<VerifiedProgram, Report> certify(const Program &program,
                                              const VerifyOptions &options) {
  Report report = verify(program, options);
  if (!report.all_hold())
    return tl::unexpected(std::move(report));
  return VerifiedProgram(program, std::move(report));
}

} // namespace syncoll::verifier
