// Lowering by connection: a k-synchronous Algorithm straight to a thread-block Program, one thread
// block per connection and lane, for schedules of thousands of ranks (docs/lowering.md, "Lowering
// by connection").
//
// The DSL path (compile.h) gives every concurrent use of a connection its own thread block and
// fuses a receive with the send that forwards it; a breadth-first schedule on a torus, where a rank
// receives from one neighbour and forwards to all the others, needs a thread block per transfer
// there and runs out of channels at 64 ranks. Here a rank's sends to a peer go through that
// connection's thread blocks in step order, and its receives from a peer through the receiving
// side's, so a rank has about as many thread blocks as it has neighbours times the lanes:
//
//   lanes    the connections of one link: as many as the link's capacity and a step's sends over
//            it need to overlap (at most that; fewer where a rank would pass the SM budget),
//            more where one lane would pass the executor's steps per thread block; the k-th
//            transfer over a link takes lane k mod lanes, on both ends, and lane i is channel i
//            (detail/lanes.h)
//   pairs    a receiving link shares its thread blocks with the sending link it forwards most
//            to, where one thread block holds both and neither carries two transfers on a lane
//            in a step
//   memory   a received chunk lands in its output slot at a post rank, else in a scratch slot of
//            its own; a value written in the step that also reads the old one goes to a fresh
//            scratch slot, so no step waits on a read of its own step
//   waits    a send waits for the receive that brought its chunk, a write for the reads and the
//            write before it; every wait points to an earlier step (or, for two reductions into
//            one chunk in a step, to the one before it in the step), which makes the program free
//            of deadlock by construction; the verifier checks it anyway
//
// A schedule that cannot fit the executor (32 channels, the SM budget, steps per thread block)
// still lowers: the verifier's resources verdict says which limit, and `advice` what would fit.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/program.h"
#include "model/topology.h"
#include "verifier/verify.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::lowering {

struct ConnectionLoweringOptions {
  Protocol protocol = Protocol::Simple;
  /// Interleaved copies of the whole program (as LowerOptions::instances).
  int instances = 1;
  std::int64_t min_bytes = 0;
  std::int64_t max_bytes = 0;
  /// The executor the program must fit: lanes grow until no thread block passes its steps.
  verifier::ResourceLimits limits;
  /// Also check deadlock, races and the postcondition of a program past those limits (off: they
  /// are "not checked", and the resources verdict comes in time linear in the steps).
  bool check_unfit_programs = false;
  /// Told each stage as it starts (laying out, emitting, verifying), for a long run's stderr.
  std::function<void(std::string_view)> progress;
};

/// What the lowering made, for a summary line and the bench.
struct ConnectionLoweringStats {
  size_t transfers = 0;         ///< sends of the algorithm
  size_t steps = 0;             ///< instructions over all thread blocks, nops included
  int max_thread_blocks = 0;    ///< on the rank with the most
  int max_lanes = 0;            ///< on the link with the most (= channels per instance)
  int longest_thread_block = 0; ///< steps
  int scratch_chunks = 0;       ///< on the rank with the most
};

struct LoweredAlgorithm {
  Program program;
  CollectiveSpec collective; ///< what the program implements (chunk factor x instances)
  ConnectionLoweringStats stats;
  /// Where a limit of `limits` is broken: which one, and what would need to change. Empty when
  /// the program fits.
  std::vector<std::string> advice;
  tl::expected<verifier::VerifiedProgram, verifier::Report> verified;
};

/// Lowers and verifies. Fails (bad input) for a send of a chunk its source does not hold, a
/// reduction into a rank without a contribution, two copies of one chunk into one rank in a step,
/// a rank or chunk out of range, or a send over a pair of ranks with no link.
[[nodiscard]] Expected<LoweredAlgorithm>
lower_by_connection(const Algorithm &algorithm, const Topology &topology,
                    const CollectiveSpec &collective,
                    const ConnectionLoweringOptions &options = {});

} // namespace syncoll::lowering
