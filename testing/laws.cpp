#include "testing/laws.h"

#include "backend/executor.h"
#include "backend/instruction_table.h"
#include "lowering/compile.h"
#include "simulator/program_sim.h"
#include "verifier/detail/execution.h"
#include "verifier/detail/races.h"

#include <algorithm>
#include <fmt/format.h>
#include <rapidcheck.h>

namespace syncoll::testing {
namespace {

LawVerdict holds(std::string law) {
  return {LawOutcome::Holds, std::move(law), {}};
}
LawVerdict broken(std::string law, std::string why) {
  return {LawOutcome::Broken, std::move(law), std::move(why)};
}

bool any_violated(const verifier::Report &report) {
  return std::ranges::any_of(report.verdicts, [](const verifier::Verdict &v) {
    return v.kind == verifier::VerdictKind::Violated;
  });
}

verifier::VerifyOptions options_for(const CollectiveSpec &collective) {
  verifier::VerifyOptions options;
  options.collective = collective;
  return options;
}

std::string mode_name(bool in_place) {
  return in_place ? "in place" : "out of place";
}

// One aliasing mode and one size regime of simulator_agrees_with_verifier; empty when they agree.
Expected<std::string> disagreement(const Program &program, const Topology &topology,
                                   const CollectiveSpec &collective, bool in_place, bool large) {
  namespace vd = verifier::detail;
  simulator::ProgramSimOptions o;
  const size_t pi = simulator::CostModel::index(program.protocol());
  // Large: every chunk fills two of the runtime's tiles, so steps split per chunk and the program
  // runs two pipeline iterations. Small: one transfer per step, one iteration.
  o.size_bytes = large ? 2 * o.model.iteration_bytes[pi] * program.chunks_per_loop() : 4096;
  o.collective = &collective;
  o.in_place = in_place;
  SYNCOLL_TRY(sim, simulator::simulate_program(program, topology, o));
  const vd::ConnectionMap connections = vd::map_connections(program);
  vd::SymbolicMemory cells(program, &collective, in_place);
  const bool race_free =
      vd::find_races(program, connections, cells, verifier::RaceMode::Strict, "", 1).empty();
  vd::SymbolicMemory memory(program, &collective, in_place);
  const vd::ExecutionConfig config{int(o.model.fifo_capacity[pi]), large ? 1 : kMaxStepCount,
                                   sim.iterations};
  const vd::ExecutionResult run = vd::execute(program, connections, config, &memory);
  const std::string where =
      fmt::format("{}, {} ({} B, {} iteration(s))", mode_name(in_place),
                  large ? "large messages" : "small messages", o.size_bytes, sim.iterations);
  if (sim.deadlocked == run.completed)
    return fmt::format("{}: the simulator {} but the verifier's executor {}", where,
                       sim.deadlocked ? "deadlocks" : "finishes",
                       run.completed ? "finishes" : "deadlocks");
  if (!run.completed || !race_free)
    return std::string();
  for (const RankProgram &rp : program.ranks())
    for (size_t k = 0; k < sim.outputs[rp.rank.index()].size(); ++k) {
      const vd::Value v = memory.read(rp.rank, BufferKind::Output, int(k));
      const simulator::SymbolicSlot &s = sim.outputs[rp.rank.index()][k];
      if (s.defined != v.defined || s.parts != v.parts)
        return fmt::format("{}: rank {} output slot {}: the simulator computes {}, the "
                           "verifier's executor {}",
                           where, rp.rank.index(), k,
                           vd::describe_value({s.defined, s.parts}, collective),
                           vd::describe_value(v, collective));
    }
  return std::string();
}

} // namespace

void require(const LawVerdict &verdict) {
  switch (verdict.outcome) {
  case LawOutcome::Holds:
    return;
  case LawOutcome::Broken:
    RC_FAIL(fmt::format("law '{}' broken: {}", verdict.law, verdict.counterexample));
  case LawOutcome::Unknown:
    RC_DISCARD(fmt::format("law '{}' unknown: {}", verdict.law, verdict.counterexample));
  }
}

LawVerdict verifies(const Program &program, const CollectiveSpec &collective) {
  const verifier::Report report = verifier::verify(program, options_for(collective));
  if (report.all_hold())
    return holds("verifies");
  return {any_violated(report) ? LawOutcome::Broken : LawOutcome::Unknown, "verifies",
          report.to_text()};
}

LawVerdict lowers_and_verifies(const lowering::DslProgram &program) {
  auto lowered = lowering::lower(program);
  if (!lowered)
    return broken("lowers and verifies",
                  "the compiler refuses the program: " + lowered.error().to_string());
  if (lowered->verified)
    return holds("lowers and verifies");
  const verifier::Report &report = lowered->verified.error();
  return {any_violated(report) ? LawOutcome::Broken : LawOutcome::Unknown, "lowers and verifies",
          report.to_text()};
}

LawVerdict simulator_agrees_with_verifier(const Program &program, const Topology &topology,
                                          const CollectiveSpec &collective) {
  for (bool in_place : {false, true})
    for (bool large : {false, true}) {
      auto why = disagreement(program, topology, collective, in_place, large);
      if (!why)
        return broken("agrees", "the simulator refuses the case: " + why.error().to_string());
      if (!why->empty())
        return broken("agrees", *why);
    }
  return holds("agrees");
}

double receive_bound_ps(const Program &program, const Topology &topology,
                        const CollectiveSpec &collective, int64_t size_bytes) {
  const double chunk_bytes =
      double(std::max<int64_t>(1, size_bytes / std::max(1, program.chunks_per_loop())));
  double bound = 0;
  for (int r = 0; r < collective.num_ranks(); ++r) {
    const RankId rank(r);
    int needed = 0;
    for (int c = 0; c < collective.num_chunks(); ++c) {
      const ChunkId chunk(c);
      if (!collective.is_post(chunk, rank))
        continue;
      // A rank that starts with everything the chunk must end as needs nothing for it.
      const bool has_it = collective.is_pre(chunk, rank) &&
                          collective.expected_value(chunk) ==
                              std::vector<Contribution>{collective.initial_value(chunk, rank)};
      needed += has_it ? 0 : 1;
    }
    double incoming = 0; // bytes per ns
    for (LinkId l : topology.in_links(rank))
      incoming += topology.link(l).bandwidth.value;
    if (needed > 0 && incoming > 0)
      bound = std::max(bound, double(needed) * chunk_bytes / incoming * 1e3);
  }
  return bound;
}

LawVerdict simulated_time_respects_bound(const Program &program, const Topology &topology,
                                         const CollectiveSpec &collective, int64_t size_bytes) {
  simulator::ProgramSimOptions o;
  o.size_bytes = size_bytes;
  auto sim = simulator::simulate_program(program, topology, o);
  if (!sim)
    return broken("bound", "the simulator refuses the case: " + sim.error().to_string());
  if (sim->deadlocked)
    return broken("bound", fmt::format("the simulation of {} B deadlocks", size_bytes));
  const double bound = receive_bound_ps(program, topology, collective, size_bytes);
  const double took = double(sim->result.completion);
  // Rounding of picoseconds in the event queue: a part in a million.
  if (took < bound * (1 - 1e-6))
    return broken("bound", fmt::format("{} B simulate in {:.3f} us, below the receive bound "
                                       "of {:.3f} us on topology '{}'",
                                       size_bytes, took / 1e6, bound / 1e6, topology.name()));
  return holds("bound");
}

LawVerdict cpu_executor_matches_reference(const Program &program, const CollectiveSpec &collective,
                                          int64_t size_bytes, uint64_t seed) {
  auto verified = verifier::certify(program, options_for(collective));
  if (!verified)
    return {any_violated(verified.error()) ? LawOutcome::Broken : LawOutcome::Unknown, "cpu",
            "not run, the program does not verify:\n" + verified.error().to_text()};
  const auto executable = backend::ExecutableProgram::lower(*verified);
  backend::RunOptions options;
  options.size_bytes = size_bytes;
  options.seed = seed;
  auto run = backend::run_on_cpu(executable, options);
  if (!run)
    return broken("cpu", "the CPU executor refuses the case: " + run.error().to_string());
  if (run->correct())
    return holds("cpu");
  std::string why =
      run->completed
          ? fmt::format("{} of {} elements differ from the host reference (seed {}, {} B):",
                        run->mismatches, run->elements_checked, seed, size_bytes)
          : fmt::format("the run hangs ({} B):", size_bytes);
  for (const std::string &m : run->first_mismatches)
    why += "\n  " + m;
  for (const backend::BlockedBlock &b : run->blocked)
    why += fmt::format("\n  rank {} tb {} step {} iteration {} waits for {}", b.rank.index(),
                       b.tb.index(), b.step, b.iteration, b.waiting_for);
  return broken("cpu", why);
}

} // namespace syncoll::testing
