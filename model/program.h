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

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
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

/// Consecutive steps of one thread block that differ only by constant strides: in the source and
/// destination offsets, in a dependency's step, and by one in `s`. Loop-shaped programs (NCCL's
/// ring and tree, the families of the lowering) are a few runs per thread block, however many
/// ranks they span.
struct StepRun {
  Instruction first;
  int src_stride = 0;
  int dst_stride = 0;
  int dependency_stride = 0; ///< meaningful only when `first` has a dependency
  int length = 1;
  /// Step `i` of the run, 0 <= i < length (or i == length, the step that would extend it).
  Instruction at(int i) const {
    Instruction in = first;
    in.src.offset = int(in.src.offset + int64_t(i) * src_stride);
    in.dst.offset = int(in.dst.offset + int64_t(i) * dst_stride);
    if (in.dependency)
      in.dependency->step =
          StepIndex(int(in.dependency->step.value() + int64_t(i) * dependency_stride));
    in.declared_index += i;
    return in;
  }
  friend bool operator==(const StepRun &, const StepRun &) = default;
};

/// A thread block's steps, held as runs (StepRun) rather than one record per step: a program over
/// thousands of ranks costs memory per run, and every reader (verifier, simulator, writers) reads
/// the same form. Runs are maximal and built greedily, so two lists hold the same steps exactly
/// when their runs are equal. Steps are read by value; a list is changed only by appending.
class StepList {
public:
  class const_iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Instruction;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Instruction;
    const_iterator() = default;
    Instruction operator*() const { return list_->runs_[run_].at(pos_); }
    const_iterator &operator++() {
      if (++pos_ == list_->runs_[run_].length)
        ++run_, pos_ = 0;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const const_iterator &a, const const_iterator &b) {
      return a.run_ == b.run_ && a.pos_ == b.pos_;
    }

  private:
    friend class StepList;
    const_iterator(const StepList *list, size_t run, int pos) : list_(list), run_(run), pos_(pos) {}
    const StepList *list_ = nullptr;
    size_t run_ = 0;
    int pos_ = 0;
  };

  StepList() = default;
  StepList(std::initializer_list<Instruction> steps) : StepList(std::span(steps)) {}
  explicit StepList(std::span<const Instruction> steps);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Step `k`, 0 <= k < size(): a search over the runs (use an iterator to walk them).
  Instruction operator[](size_t k) const;
  Instruction front() const { return (*this)[0]; }
  Instruction back() const { return (*this)[size_ - 1]; }
  const_iterator begin() const { return {this, 0, 0}; }
  const_iterator end() const { return {this, runs_.size(), 0}; }

  void push_back(const Instruction &step);
  /// Appends the `length` steps of `run` (its own length is ignored) in O(1) runs of work.
  void append(StepRun run, int length);
  std::span<const StepRun> runs() const { return runs_; }
  /// The index of run `r`'s first step.
  size_t run_begin(size_t r) const { return begins_[r]; }
  std::vector<Instruction> to_vector() const { return {begin(), end()}; }
  /// Rewrites the steps as a vector, in O(size): for tools and tests that mutate programs.
  template <class Edit> void edit(Edit &&edit) {
    std::vector<Instruction> steps = to_vector();
    edit(steps);
    *this = StepList(steps);
  }

  friend bool operator==(const StepList &a, const StepList &b) { return a.runs_ == b.runs_; }

private:
  std::vector<StepRun> runs_;
  std::vector<size_t> begins_;
  size_t size_ = 0;
};

struct ThreadBlock {
  TbId id;
  std::optional<RankId> send_peer;
  std::optional<RankId> recv_peer;
  ChannelId channel;
  StepList steps;
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
  /// Appends `length` steps of one op, the k-th at offsets src + k * src_stride and
  /// dst + k * dst_stride (a loop of the schedule, stored as one run).
  void steps(OpType op, BufferRef src, int src_stride, BufferRef dst, int dst_stride, int length,
             int count = 1);
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

namespace detail {
// The runtime's step types (docs/semantics.md, "Step types"). Columns: name, sends, receives,
// reads src, reads dst, writes dst, reduces, parser checks srcoff, parser checks dstoff. The
// parser checks neither offset of rrc, and only the offset each op is named for elsewhere.
inline constexpr OpTraits kOpTraits[] = {
    {OpType::Send, "s", true, false, true, false, false, false, true, false},
    {OpType::Recv, "r", false, true, false, false, true, false, false, true},
    {OpType::RecvCopySend, "rcs", true, true, false, false, true, false, false, true},
    {OpType::RecvReduceSend, "rrs", true, true, true, false, false, true, true, false},
    {OpType::RecvReduceCopy, "rrc", false, true, true, false, true, true, false, false},
    {OpType::RecvReduceCopySend, "rrcs", true, true, true, false, true, true, true, true},
    {OpType::Copy, "cpy", false, false, true, false, true, false, true, true},
    {OpType::Reduce, "re", false, false, true, true, true, true, true, true},
    {OpType::Nop, "nop", false, false, false, false, false, false, false, false},
};
} // namespace detail

/// The row of `op` (inline: the simulator asks once per step).
[[nodiscard]] inline const OpTraits &op_traits(OpType op) {
  return detail::kOpTraits[static_cast<size_t>(op)];
}
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
