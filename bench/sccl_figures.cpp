// The SCCL paper's DGX-1 figures in simulation (sccl_figures.h).
#include "bench/sccl_figures.h"

#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/text.h"
#include "model/topology_library.h"
#include "mscclpp/mscclpp.h"
#include "nccl/run.h"
#include "simulator/algorithm_sim.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"
#include "synth/synthesize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::bench {
namespace {

struct Instance {
  std::string name;
  int chunks;
  synth::StepsRounds sr;
};

struct Case {
  CollectiveKind kind;
  std::vector<Instance> instances;
  double paper_small; ///< the paper's best speedup at small sizes
  double paper_large; ///< and at large sizes
  /// Whether the paper's figure for the collective has a cudaMemcpy line (only Allgather's: the
  /// paper plots (6, 7, 7) both ways); other copy-engine rows are shown beside, not counted.
  bool paper_plots_copy_engine;
};

// NCCL as the paper's baseline ran it: NCCL_PROTO=Simple, at its best channel count; none when
// NCCL fails (the message printed).
inline std::optional<double> nccl_simple_us(CollectiveKind kind, int64_t size,
                                            const simulator::SystemModel &system,
                                            const nccl::NcclMachine &machine) {
  double fastest = 1e300;
  for (int channels : {1, 2, 4, 8, 12, 16, 24, 32}) {
    nccl::NcclRunOptions o;
    o.protocol = Protocol::Simple;
    o.channels = channels;
    auto run = nccl::simulate_nccl(kind, size, system, machine, o);
    if (!run) {
      std::printf("NCCL fails: %s\n", run.error().to_string().c_str());
      return std::nullopt;
    }
    fastest = std::min(fastest, double(run->result.completion) / 1e6);
  }
  return fastest;
}

// An instance synthesized, with its collective; none when synthesis fails (the message printed).
struct Synthesized {
  Algorithm algorithm;
  CollectiveSpec collective;
};
inline std::optional<Synthesized> synthesize(const Topology &topology, const synth::Target &target,
                                             const Instance &inst) {
  auto answer = synth::synthesize(topology, target, inst.chunks, inst.sr, {});
  if (!answer || !answer->algorithm) {
    std::printf("%s: no algorithm synthesized\n", inst.name.c_str());
    return std::nullopt;
  }
  auto spec = target.collective(topology.num_ranks(), inst.chunks);
  if (!spec) {
    std::printf("%s: %s\n", inst.name.c_str(), spec.error().to_string().c_str());
    return std::nullopt;
  }
  return Synthesized{*answer->algorithm, *spec};
}

// The algorithm lowered and verified, replicated 1, 2 or 4 times (GC3's instances); empty when
// any stage fails (the message printed).
inline std::vector<verifier::VerifiedProgram>
msccl_programs(const Topology &topology, const Synthesized &s, const Instance &inst) {
  auto dsl = lowering::algorithm_to_dsl(s.algorithm, topology, s.collective);
  if (!dsl) {
    std::printf("%s: no MSCCL-IR program: %s\n", inst.name.c_str(),
                dsl.error().to_string().c_str());
    return {};
  }
  std::vector<verifier::VerifiedProgram> programs;
  std::string why;
  for (int instances : {1, 2, 4}) {
    auto lowered = lowering::lower(*dsl, {instances, 0, 0});
    if (lowered && lowered->verified)
      programs.push_back(*lowered->verified);
    else if (why.empty())
      why = lowered ? "not verified" : lowered.error().to_string();
  }
  if (programs.empty())
    std::printf("%s: no MSCCL-IR program: %s\n", inst.name.c_str(), why.c_str());
  return programs;
}

// The fastest of the programs at `size`, in Simple, as the MSCCL executor runs them; none when
// a simulation fails. On the machine as every command runs programs there.
inline std::optional<double>
fastest_program_us(const std::vector<verifier::VerifiedProgram> &programs, int64_t size,
                   const simulator::SystemModel &system) {
  double fastest = 1e300;
  for (const verifier::VerifiedProgram &verified : programs) {
    const Program &program = verified.program();
    simulator::ProgramSimOptions o;
    o.size_bytes = size;
    o.model = system.interpreted();
    o.protocol = Protocol::Simple;
    auto sim = simulator::simulate_program(program, system.program_topology(), o);
    if (!sim || sim->deadlocked) {
      std::printf("  simulation failed\n");
      return std::nullopt;
    }
    fastest = std::min(fastest, double(sim->result.completion) / 1e6);
  }
  return fastest;
}

// The programs as verified MSCCL++ plans; empty when one does not lower or verify (printed).
std::vector<mscclpp::ExecutionPlan>
mscclpp_plans(const std::vector<verifier::VerifiedProgram> &programs) {
  std::vector<mscclpp::ExecutionPlan> plans;
  for (const verifier::VerifiedProgram &verified : programs) {
    auto plan = mscclpp::plan_from_program(verified);
    if (!plan || !mscclpp::verify_plan(*plan).all_hold()) {
      std::printf("  no verified MSCCL++ plan: %s\n",
                  plan ? "the plan does not verify" : plan.error().to_string().c_str());
      return {};
    }
    plans.push_back(std::move(*plan));
  }
  return plans;
}

// The fastest of the plans at `size` on the machine (its topology and interpreted model, as
// `syncoll simulate plan.json --system` runs plans).
inline std::optional<double> fastest_plan_us(const std::vector<mscclpp::ExecutionPlan> &plans,
                                             int64_t size, const simulator::SystemModel &system) {
  double fastest = 1e300;
  for (const mscclpp::ExecutionPlan &plan : plans) {
    auto sim = mscclpp::simulate_plan(plan, system.topology, size, system.interpreted());
    if (!sim || sim->deadlocked) {
      std::printf("  plan simulation failed\n");
      return std::nullopt;
    }
    fastest = std::min(fastest, double(sim->result.completion) / 1e6);
  }
  return fastest;
}

// The algorithm under one of SCCL's own lowerings at an nccl-tests `size`; none when the
// simulation fails (the message printed).
inline std::optional<double> lowered_algorithm_us(const Synthesized &s, int64_t size,
                                                  const simulator::AlgorithmExecutor &executor) {
  auto sim = simulator::simulate_algorithm(s.algorithm, executor.topology, s.collective,
                                           input_bytes_for_nccl_tests_size(s.collective, size),
                                           executor.options);
  if (!sim) {
    std::printf("  simulation failed: %s\n", sim.error().to_string().c_str());
    return std::nullopt;
  }
  return double(sim->completion) / 1e6;
}

} // namespace

std::vector<ScclFigure> sccl_figures(bool quick, bool print_table) {
  // The per-size table, printed or not.
  auto say = [print_table](const char *format, auto... args) {
    if (print_table)
      std::printf(format, args...);
  };

  const SystemPreset *preset = find_system_preset("dgx1");
  auto system = simulator::make_system_model(*preset);
  auto machine = system ? nccl::nccl_machine(*system)
                        : Expected<nccl::NcclMachine>(tl::unexpected(system.error()));
  if (!machine) {
    std::printf("no DGX-1 system: %s\n", machine.error().to_string().c_str());
    return {};
  }
  const Topology sccl_dgx1 = dgx1();
  // SCCL's Table 4 instances on the DGX-1 that section 6 measured: Allgather latency-optimal,
  // bandwidth-optimal in 7 steps (plotted as kernel and cudaMemcpy) and in 3, and the Allreduces
  // composed from them (ReduceScatter + Allgather, 8x the chunks, 2x steps and rounds).
  const std::vector<Case> cases = {
      {CollectiveKind::Allgather,
       {{"C1 S2 R2", 1, {2, 2}}, {"C6 S7 R7", 6, {7, 7}}, {"C6 S3 R7", 6, {3, 7}}},
       2.2,
       1.14,
       true},
      {CollectiveKind::Allreduce,
       {{"C8 S4 R4", 8, {4, 4}}, {"C48 S14 R14", 48, {14, 14}}, {"C48 S6 R14", 48, {6, 14}}},
       1.8,
       1.06,
       false},
      // Alltoall chunks count per (source, destination) pair; NCCL's Alltoall is its grouped
      // point-to-point, which on a DGX-1 crosses the CPU sockets for the pairs without NVLink.
      {CollectiveKind::Alltoall,
       {{"C8 S3 R3", 1, {3, 3}}, {"C24 S2 R8", 3, {2, 8}}},
       1.4,
       6.8,
       false},
  };
  std::vector<int64_t> sizes;
  for (int64_t s = 1024; s <= (quick ? int64_t(1) << 20 : int64_t(1) << 30); s *= 4)
    sizes.push_back(s);
  say("%-10s %-32s", "collective", "program");
  for (int64_t s : sizes)
    say(" %9s", format_size(s).c_str());
  say("\n");
  std::vector<std::array<double, 4>> summary; // ours small, paper small, ours large, paper large
  for (const Case &c : cases) {
    synth::Target target;
    target.kind = c.kind;
    std::vector<double> nccl_us;
    for (int64_t size : sizes) {
      const auto us = nccl_simple_us(c.kind, size, *system, *machine);
      if (!us)
        return {};
      nccl_us.push_back(*us);
    }
    say("%-10s %-32s", std::string(collective_kind_name(c.kind)).c_str(), "NCCL Simple (us)");
    for (double us : nccl_us)
      say(" %9.1f", us);
    say("\n");
    std::vector<double> best(sizes.size(), 0);
    for (const Instance &inst : c.instances) {
      const auto synthesized = synthesize(sccl_dgx1, target, inst);
      if (!synthesized)
        return {};
      const std::vector<verifier::VerifiedProgram> programs =
          msccl_programs(sccl_dgx1, *synthesized, inst);
      const std::vector<mscclpp::ExecutionPlan> plans = mscclpp_plans(programs);
      // The paper's lowerings, counted; the MSCCL and MSCCL++ executors' rows are shown beside.
      struct Row {
        std::string name;
        std::optional<simulator::AlgorithmExecutor> executor; ///< none: programs or plans
        bool counted;
        bool plans = false;
      };
      std::vector<Row> rows = {{inst.name + " kernel", system->sccl_kernel(), true}};
      if (auto copy = system->copy_engine(synthesized->algorithm))
        rows.push_back(
            {inst.name + (c.paper_plots_copy_engine ? " cudaMemcpy" : " cudaMemcpy (beside)"),
             *copy, c.paper_plots_copy_engine});
      if (!programs.empty())
        rows.push_back({inst.name + " MSCCL (beside)", std::nullopt, false});
      if (!plans.empty())
        rows.push_back({inst.name + " MSCCL++ plan (beside)", std::nullopt, false, true});
      for (const Row &row : rows) {
        say("%-10s %-32s", "", row.name.c_str());
        for (size_t i = 0; i < sizes.size(); ++i) {
          const auto us = row.executor ? lowered_algorithm_us(*synthesized, sizes[i], *row.executor)
                          : row.plans  ? fastest_plan_us(plans, sizes[i], *system)
                                       : fastest_program_us(programs, sizes[i], *system);
          if (!us)
            return {};
          const double speedup = nccl_us[i] / *us;
          if (row.counted)
            best[i] = std::max(best[i], speedup);
          say(" %8.2fx", speedup);
        }
        say("\n");
      }
    }
    double small = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] <= (int64_t(64) << 10))
        small = std::max(small, best[i]);
    summary.push_back({small, c.paper_small, best.back(), c.paper_large});
  }
  std::vector<ScclFigure> figures;
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::string name(collective_kind_name(cases[k].kind));
    figures.push_back({name + ", best at 1-64 KiB", summary[k][1], summary[k][0]});
    figures.push_back(
        {name + (quick ? ", at 1 MiB (quick)" : ", at 1 GiB"), summary[k][3], summary[k][2]});
  }
  return figures;
}

} // namespace syncoll::bench
