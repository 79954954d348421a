// MSCCL-IR programs as MSCCL++ execution plans: every DSL example of a collective MSCCL++'s
// executor runs, lowered (`syncoll lower --example NAME`), verified, written as a plan
// (mscclpp/from_program.h) that verifies too, and both timed on a DGX H100 (the hierarchical ones
// on two, their nodes joined by port channels): the program as the MSCCL executor runs it
// (`syncoll simulate program.xml --system dgx_h100`), the plan as MSCCL++'s executor does
// (`syncoll simulate plan.json --system dgx_h100`), and their ratio. The plan pays for its
// one-sided form: each message lands in a scratch slot of its own and is copied out after a
// wait, where MSCCL's receiver copies straight from the connection's buffer.
//
//   ./build/default/bench/mscclpp_bench [--quick]
#include "bench/quick_flag.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/hardware.h"
#include "model/text.h"
#include "mscclpp/mscclpp.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  using namespace syncoll;
  const bool quick = bench::quick_flag(argc, argv, "mscclpp_bench");
  const std::vector<int64_t> sizes =
      quick ? std::vector<int64_t>{int64_t(64) << 10}
            : std::vector<int64_t>{int64_t(64) << 10, int64_t(1) << 20, int64_t(64) << 20};
  const SystemPreset *preset = find_system_preset("dgx_h100");
  std::printf("%-30s %6s %-14s %9s %12s %12s %8s\n", "example", "ranks", "system", "size",
              "MSCCL-IR us", "MSCCL++ us", "plan/IR");
  int failures = 0;
  for (const examples::ProgramExample &example : examples::program_examples()) {
    examples::ExampleParams params;
    params.ranks = example.takes_nodes ? 16 : 8;
    params.nodes = 2;
    const int nodes = example.takes_nodes ? 2 : 1;
    auto dsl = example.build(params);
    auto lowered = dsl ? lowering::lower(*dsl) : tl::unexpected(dsl.error());
    if (!lowered || !lowered->verified) {
      std::printf("%-30s not lowered and verified\n", example.name.c_str());
      ++failures;
      continue;
    }
    auto plan = mscclpp::plan_from_program(*lowered->verified, dsl->topology().ranks_per_node());
    if (!plan) {
      std::printf("%-30s no plan: %s\n", example.name.c_str(), plan.error().to_string().c_str());
      continue; // a collective MSCCL++'s executor does not run (alltonext)
    }
    if (!mscclpp::verify_plan(*plan).all_hold()) {
      std::printf("%-30s its plan does not verify\n", example.name.c_str());
      ++failures;
      continue;
    }
    auto system = simulator::make_system_model(*preset, nodes);
    if (!system) {
      std::printf("no system: %s\n", system.error().to_string().c_str());
      return 1;
    }
    for (int64_t size : sizes) {
      simulator::ProgramSimOptions o;
      o.size_bytes = size;
      o.model = system->interpreted();
      auto program = simulator::simulate_program(lowered->program, system->program_topology(), o);
      auto timed = mscclpp::simulate_plan(*plan, system->topology, size, system->interpreted());
      if (!program || program->deadlocked || !timed || timed->deadlocked) {
        std::printf("%-30s simulation failed\n", example.name.c_str());
        ++failures;
        break;
      }
      const double ir_us = double(program->result.completion) / 1e6;
      const double plan_us = double(timed->result.completion) / 1e6;
      std::printf("%-30s %6d %-14s %9s %12.1f %12.1f %7.2fx\n", example.name.c_str(), params.ranks,
                  nodes > 1 ? "dgx_h100 x2" : "dgx_h100", format_size(size).c_str(), ir_us, plan_us,
                  plan_us / ir_us);
    }
  }
  std::printf("\nprograms or plans that failed to lower, verify or simulate: %d (target 0)\n",
              failures);
  return failures == 0 ? 0 : 1;
}
