// lower(): a traced DSL program through the GC3 compiler passes (the GC3 paper, sections 4-5;
// docs/lowering.md) to a Program, which goes through verifier/ before anyone can write it out
// (write_deployment_xml takes a VerifiedProgram only). The passes, one file each under detail/:
//
//   1. trace            chunk DAG: operations and the memory they touch      detail/trace.cpp
//   2. instruction DAG  send/receive pairs, cpy and re detail/instruction_dag.cpp
//   3. fusion           r+s -> rcs, rrc+s -> rrcs or rrs                     detail/fusion.cpp
//   4. ordering         flows share a channel; one global order that keeps   detail/ordering.cpp
//                       every connection's FIFO order
//   5. thread blocks    one send and one receive peer each detail/thread_blocks.cpp
//   6. dependencies     cross-thread-block waits, nops detail/dependencies.cpp
//   7. emission         the Program in the executor's conventions            detail/emission.cpp
//   8. instances        N interleaved copies                                 detail/instances.cpp
//
// Passes 4 and 5 repeat, moving one flow to the next channel, until both succeed.
#pragma once

#include "lowering/dsl.h"
#include "model/program.h"
#include "verifier/verify.h"

#include <optional>
#include <string>
#include <vector>

namespace syncoll::lowering {

/// True dependencies read what an earlier operation wrote; false ones (write after read, write
/// after write) only order memory reuse (GC3, section 4.1).
enum class DependencyKind { True, False };

struct DagEdge {
  int from = 0;
  int to = 0;
  DependencyKind kind = DependencyKind::True;
  auto operator<=>(const DagEdge &) const = default;
};

/// Nodes are the traced operations (DslProgram::operations), edges between operations that touch
/// the same memory of a rank.
struct ChunkDag {
  std::vector<Operation> operations;
  std::vector<DagEdge> edges;
};

/// The program's placement requests an instruction carries through scheduling: the thread
/// block each side asked for, a channel fixed by hand, or one to start from.
struct PlacementHints {
  std::optional<int> send_tb;
  std::optional<int> recv_tb;
  std::optional<int> channel;
  std::optional<int> preferred_channel;
  /// The thread block the instruction asks for (a fused one: its sending side's first).
  std::optional<int> thread_block() const { return send_tb ? send_tb : recv_tb; }
};

/// One instruction of the instruction DAG, after fusion.
struct DagInstruction {
  RankId rank;
  OpType op = OpType::Nop;
  Buffer src_buffer;
  int src_index = 0;
  Buffer dst_buffer;
  int dst_index = 0;
  int count = 1;
  std::optional<RankId> send_peer;
  std::optional<RankId> recv_peer;
  std::vector<int> operations; ///< the traced operations it came from (two when fused)
  bool removed = false;        ///< fused into another instruction
  PlacementHints hints;
  // Where the scheduler put it.
  int channel = 0;
  int thread_block = -1;
};

struct InstructionDag {
  std::vector<DagInstruction> instructions;
  std::vector<DagEdge> edges;                ///< same-rank data dependencies
  std::vector<std::pair<int, int>> messages; ///< (sending instruction, receiving instruction)
  std::vector<int> order;                    ///< the global topological order used
};

struct LowerOptions {
  /// Replicates the whole program (GC3, section 5.3): chunk k of the input and output becomes
  /// k * instances + i for instance i, scratch gets one block per instance, channels and thread
  /// blocks are offset per instance. Multi-chunk steps are split where replication makes their
  /// chunks non-adjacent.
  int instances = 1;
  std::int64_t min_bytes = 0;
  std::int64_t max_bytes = 0;
};

struct Lowered {
  ChunkDag chunk_dag;
  InstructionDag instruction_dag;
  Program program;
  CollectiveSpec collective; ///< what the program implements (chunk factor x instances)
  /// The verifier's report; the VerifiedProgram when every property holds.
  tl::expected<verifier::VerifiedProgram, verifier::Report> verified;
};

/// Runs every pass and the verifier. Fails (bad input) for hints that cannot be met: a thread
/// block asked to talk to two peers in one direction, or more than 32 channels needed.
[[nodiscard]] Expected<Lowered> lower(const DslProgram &program, const LowerOptions &options = {});

/// The executor dialect of MSCCL-IR for a program that passed every check.
std::string write_deployment_xml(const verifier::VerifiedProgram &program);

} // namespace syncoll::lowering
