// The CPU executor against the simulator on random programs: both say the same program hangs.
#include "backend/executor.h"
#include "model/collective_traits.h"
#include "model/runtime_constants.h"
#include "model/topology_library.h"
#include "simulator/program_sim.h"
#include "testing/generators.h"

#include <chrono>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::backend {
namespace {

// Random communicating programs, verified or not, with the gate bypassed (so the tsan preset does
// not run this one: an unverified program may race on its own data by design): the CPU executor
// finishes exactly when the simulator does, in one transfer per step or in two chunks per
// transfer (the executor's FIFO depth and count splitting are the simulator's).
RC_GTEST_PROP(CpuExecutorProperty, TerminatesExactlyWhenTheSimulatorDoes, ()) {
  const Program p = *testing::gen_connected_program(false);
  auto collective = make_collective(CollectiveKind::Allreduce, p.num_ranks(), 4);
  RC_ASSERT(collective.has_value());
  const ExecutableProgram e = detail::lower_unchecked(p, *collective);
  const int64_t tile = protocol_traits(p.protocol()).executor_tile_bytes;
  {
    const int64_t chunk_bytes = *rc::gen::element(int64_t(64), tile / 2);
    simulator::ProgramSimOptions so;
    so.size_bytes = chunk_bytes * p.chunks_per_loop();
    auto sim = simulator::simulate_program(p, *fully_connected(p.num_ranks()), so);
    RC_ASSERT(sim.has_value());
    RunOptions o;
    o.size_bytes = chunk_bytes * nccl_tests_chunks(*collective);
    // A run the simulator says finishes gets seconds; one it says deadlocks gets a short watchdog
    // (these programs do microseconds of work, so a pause that long is a hang).
    o.watchdog = std::chrono::milliseconds(sim->deadlocked ? 30 : 3000);
    o.seed = *rc::gen::arbitrary<uint64_t>();
    auto run = run_on_cpu(e, o);
    RC_ASSERT(run.has_value());
    RC_TAG(run->completed ? "finishes" : "hangs");
    RC_ASSERT(run->completed == !sim->deadlocked);
  }
}

} // namespace
} // namespace syncoll::backend
