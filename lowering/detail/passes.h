// The compiler passes behind lowering::lower(), one per file, in the order lower() runs them
// (lowering/compile.h lists them; docs/lowering.md explains each):
//
//   trace.cpp            chunk DAG: the traced operations and the memory they touch
//   instruction_dag.cpp  each operation becomes its instructions (send, receive, cpy, re)
//   fusion.cpp           receive + send of the same value -> rcs, rrs, rrcs
//   ordering.cpp         flows (instructions joined by messages share a channel), priorities, and
//                        one global topological order that keeps every connection's FIFO order
//   thread_blocks.cpp    thread blocks in that order: one send and one receive peer each
//   dependencies.cpp     cross-thread-block waits, with nops where a step waits more than once
//   emission.cpp         the Program: scratch layout, buffer references, the executor's header
//   instances.cpp        N interleaved copies of the whole program
//
// Everything here is internal to lowering/; the types the passes share live in this header.
#pragma once

#include "lowering/compile.h"
#include "lowering/dsl.h"
#include "model/collective.h"
#include "model/program.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace syncoll::lowering::detail {

/// One chunk of memory of a rank, with in-place aliasing resolved and scratch names kept apart.
struct Memory {
  int rank;
  BufferKind kind;
  std::string scratch;
  int index;
  auto operator<=>(const Memory &) const = default;
};

/// Where a buffer slot lives in the aliasing mode being lowered (model's in_place_slot).
class Aliasing {
public:
  Aliasing(const CollectiveSpec &collective, bool in_place)
      : collective_(collective), in_place_(in_place) {}
  Memory at(int rank, const Buffer &buffer, int index) const;
  std::vector<Memory> range(RankId rank, const Buffer &buffer, int index, int count) const;

private:
  const CollectiveSpec &collective_;
  bool in_place_;
};

/// Last writer and readers since, per chunk of memory: the edges a new access needs.
class AccessTracker {
public:
  void access(int node, const std::vector<Memory> &reads, const std::vector<Memory> &writes,
              std::set<DagEdge> &edges);

private:
  struct Slot {
    int writer = -1;
    std::vector<int> readers;
  };
  std::map<Memory, Slot> slots_;
};

/// The memory an instruction reads and writes on its own rank (model's op table).
std::vector<Memory> reads_of(const Aliasing &alias, const DagInstruction &in);
std::vector<Memory> writes_of(const Aliasing &alias, const DagInstruction &in);
/// Recomputes the same-rank data edges of the instruction DAG, in trace order.
void recompute_edges(const Aliasing &alias, InstructionDag &dag);

/// Why a schedule attempt failed: a flow that must move to another channel.
struct Conflict {
  int flow;
  std::string why;
  bool by_hand = false; ///< the program's own thread block hints clash: no channel fixes that
};

/// Flows (instructions joined by messages, which share a channel) and the scheduling priorities.
struct Flows {
  std::vector<int> parent;                  ///< union-find over instructions
  std::vector<int> channel;                 ///< per flow root
  std::vector<bool> channel_by_hand;        ///< per flow root: the program fixed the channel
  std::vector<int> depth;                   ///< messages on the longest path from the start
  std::vector<int> height;                  ///< longest path to the end
  std::vector<std::vector<int>> successors; ///< data edges and messages
  int find(int instruction);
  int channel_of(int instruction) { return channel[size_t(find(instruction))]; }
};

/// A thread block as the scheduler builds it: peers, channel, the hint it was opened for, and
/// its instructions in order.
struct ThreadBlockPlan {
  std::optional<RankId> send_peer, recv_peer;
  int channel = 0;
  std::optional<int> hint;
  std::vector<int> steps;
};
using ThreadBlockPlans = std::vector<std::vector<ThreadBlockPlan>>; ///< per rank

/// Per instruction: the (thread block, instruction) pairs it waits for, and its final step index
/// in its thread block once nops are in front.
struct Dependencies {
  std::vector<std::vector<std::pair<int, int>>> waits;
  std::vector<int> final_index;
  std::set<int> depended_on;
};

ChunkDag trace_chunk_dag(const DslProgram &program, const Aliasing &alias);
InstructionDag expand_instructions(const DslProgram &program, const Aliasing &alias);
void fuse(const Aliasing &alias, InstructionDag &dag);
Flows build_flows(const InstructionDag &dag);
std::optional<Conflict> order(InstructionDag &dag, Flows &flows);
std::optional<Conflict> assign_thread_blocks(InstructionDag &dag, Flows &flows, int ranks,
                                             ThreadBlockPlans &plans);
Dependencies insert_dependencies(const InstructionDag &dag, const ThreadBlockPlans &plans);
[[nodiscard]] Expected<Program> emit_program(const DslProgram &program, const LowerOptions &options,
                                             const InstructionDag &dag,
                                             const ThreadBlockPlans &plans,
                                             const Dependencies &dependencies);
[[nodiscard]] Expected<std::pair<Program, CollectiveSpec>>
replicate(const Program &one, const CollectiveSpec &collective, int instances);

} // namespace syncoll::lowering::detail
