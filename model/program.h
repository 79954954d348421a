// Program: the thread-block IR, one-to-one with MSCCL-IR (docs/formats.md, "MSCCL-IR XML").
//
// Per rank: buffer sizes and thread blocks; per thread block: one send peer, one receive peer, a
// channel and an ordered list of instructions. Program::create rejects what is not MSCCL-IR at
// all (a peer that is not a rank, a negative count, a start offset past its buffer, ids that are
// not contiguous); a well-formed program that breaks a runtime *limit* (48 channels, cnt 80,
// tb id 2000) is accepted and is the verifier's resources verdict, and the hazards the executor's
// parser lets through (deadlocks, races, offsets running past a buffer, wrong results) are the
// verifier's other verdicts (docs/semantics.md, "Structure").
#pragma once

#include "model/diagnostics.h"
#include "model/ids.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll {

enum class Protocol { Simple, LL, LL128 };

/// MSCCL-IR step types (docs/semantics.md, "Step types").
enum class OpType {
  Send,               ///< s
  Recv,               ///< r
  RecvCopySend,       ///< rcs
  RecvReduceSend,     ///< rrs
  RecvReduceCopy,     ///< rrc
  RecvReduceCopySend, ///< rrcs
  Copy,               ///< cpy
  Reduce,             ///< re
  Nop,                ///< nop
};

enum class BufferKind { Input, Output, Scratch };

/// A chunk offset in one of a rank's buffers. -1 is what tools write into fields the runtime
/// ignores (a nop's operands).
struct BufferRef {
  BufferKind buffer = BufferKind::Input;
  int offset = 0;
  auto operator<=>(const BufferRef &) const = default;
};

/// Wait until step `step` of thread block `tb` on the same rank has published completion.
struct Dependency {
  TbId tb;
  StepIndex step;
  auto operator<=>(const Dependency &) const = default;
};

struct Instruction {
  OpType op = OpType::Nop;
  BufferRef src;
  BufferRef dst;
  int count = 1;
  std::optional<Dependency> dependency;
  bool has_dep = false;
  /// The `s` attribute as written. The runtime numbers steps by position and only uses `s` in
  /// dependency targets, so a value other than the position is a hazard the verifier reports.
  int declared_index = 0;
  friend bool operator==(const Instruction &, const Instruction &) = default;
};

struct ThreadBlock {
  TbId id;
  std::optional<RankId> send_peer;
  std::optional<RankId> recv_peer;
  ChannelId channel;
  std::vector<Instruction> steps;
  friend bool operator==(const ThreadBlock &, const ThreadBlock &) = default;
};

struct RankProgram {
  RankId rank;
  int input_chunks = 0;
  int output_chunks = 0;
  int scratch_chunks = 0;
  std::vector<ThreadBlock> thread_blocks;
  /// The declared size of one of the rank's buffers, in chunks.
  int chunks(BufferKind buffer) const;
  friend bool operator==(const RankProgram &, const RankProgram &) = default;
};

struct ProgramDraft {
  std::string name;
  std::string collective; ///< executor spelling: allreduce, reducescatter, ... or custom
  Protocol protocol = Protocol::Simple;
  int num_channels = 1;
  int chunks_per_loop = 1;
  int num_ranks = 0;
  bool in_place = false;
  bool out_of_place = true;
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;          ///< 0 = no upper limit
  std::optional<int> num_threads; ///< old runtime only
  std::vector<RankProgram> ranks;
  friend bool operator==(const ProgramDraft &, const ProgramDraft &) = default;
};

// The executor's limits. The verifier reports a program beyond them as a resources violation.
/// Largest `cnt` the executor's parser accepts (MSCCL_MAX_COUNT - 1).
inline constexpr int kMaxStepCount = 71;
/// Channels the runtime has (MAXCHANNELS): channel indices 0..31. Its parser accepts chan 32 too,
/// one past its array.
inline constexpr int kMaxChannelIndex = 32;
/// Largest thread block id the executor can hold (MSCCL_MAX_NUM_THREAD_BLOCKS - 1).
inline constexpr int kMaxThreadBlockId = 32 * 32 - 1;

class Program {
public:
  /// Accepts what the MSCCL executor's parser accepts. Diagnostics carry pointers of the form
  /// /gpus/G/tbs/T/steps/K/attribute, indices in the draft's order and attribute names as in the
  /// XML, which both the XML and the JSON reader resolve to text locations. On success gpus are
  /// sorted by rank and thread blocks by id, so thread_blocks[i].id == i.
  [[nodiscard]] static Expected<Program> create(ProgramDraft draft);

  const ProgramDraft &draft() const { return d_; }
  const std::string &name() const { return d_.name; }
  const std::string &collective() const { return d_.collective; }
  Protocol protocol() const { return d_.protocol; }
  int num_channels() const { return d_.num_channels; }
  int chunks_per_loop() const { return d_.chunks_per_loop; }
  int num_ranks() const { return d_.num_ranks; }
  bool in_place() const { return d_.in_place; }
  bool out_of_place() const { return d_.out_of_place; }
  const std::vector<RankProgram> &ranks() const { return d_.ranks; }
  const RankProgram &rank(RankId r) const;

  friend bool operator==(const Program &, const Program &) = default;

private:
  Program() = default;
  ProgramDraft d_;
};

/// Builds a thread block step by step, numbering every step's `s` by its position, as the runtime
/// requires (for lowering, baselines and tests).
class ThreadBlockBuilder {
public:
  ThreadBlockBuilder(TbId id, std::optional<RankId> send_peer, std::optional<RankId> recv_peer,
                     ChannelId channel);
  /// Appends a step and returns its position.
  int step(OpType op, BufferRef src, BufferRef dst, int count = 1,
           std::optional<Dependency> dependency = std::nullopt, bool has_dep = false);
  const ThreadBlock &get() const { return tb_; }
  ThreadBlock take() { return std::move(tb_); }

private:
  ThreadBlock tb_;
};

std::string_view protocol_name(Protocol p);
std::optional<Protocol> parse_protocol(std::string_view name);
/// MSCCL-IR spelling of a step type ("s", "rrcs", ...).
std::string_view op_type_name(OpType op);
std::optional<OpType> parse_op_type(std::string_view name);
/// "i", "o" or "s".
std::string_view buffer_kind_name(BufferKind b);
std::optional<BufferKind> parse_buffer_kind(std::string_view name);

/// What one step type does on the executing rank and its connections: the project's one record
/// of each op's operands (docs/semantics.md, "Step types"). The verifier, the simulator, the
/// lowering and the drawings all read it; the two executors keep their own *semantics* (how a
/// value is computed) but never their own copy of which operands an op touches.
struct OpTraits {
  OpType op;
  std::string_view name;  ///< MSCCL-IR spelling
  bool sends;             ///< pushes one message on the send connection (tb.send, tb.chan)
  bool receives;          ///< pops one message from the receive connection (tb.recv, tb.chan)
  bool reads_src;         ///< reads src[0, cnt): a send's payload, a reduction's local operand
  bool reads_dst;         ///< reads dst[0, cnt) before writing it (a local reduction's accumulator)
  bool writes_dst;        ///< writes dst[0, cnt)
  bool reduces;           ///< applies the reduction operator
  bool parser_checks_src; ///< the executor's parser bounds-checks srcoff
  bool parser_checks_dst; ///< the executor's parser bounds-checks dstoff
};

[[nodiscard]] const OpTraits &op_traits(OpType op);
/// Every step type, in OpType order.
[[nodiscard]] std::span<const OpTraits> all_op_traits();

/// Whether a step pushes onto its thread block's send connection (s, rcs, rrs, rrcs).
inline bool op_sends(OpType op) {
  return op_traits(op).sends;
}
/// Whether a step pops from its thread block's receive connection (r, rcs, rrs, rrc, rrcs).
inline bool op_receives(OpType op) {
  return op_traits(op).receives;
}

/// Collective names as the executor spells them, with the old runtime's spellings
/// (reduce_scatter, custom) mapped and flagged.
struct CollectiveNameReading {
  std::string canonical;
  bool old_runtime_spelling = false;
};
std::optional<CollectiveNameReading> parse_ir_collective_name(std::string_view name);

} // namespace syncoll
