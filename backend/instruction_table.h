// The executable form of a verified program: the device tables (backend/device_tables.h)
// an interpreter runs, the CPU executor on host threads or the CUDA kernel on a GPU, as the MSCCL
// executor runs MSCCL-IR (docs/semantics.md): one worker per thread block, each step one primitive
// on its connections, bounded FIFOs, per-thread-block flags for dependencies, a tiling loop over
// each chunk. Only a VerifiedProgram lowers to one.
#pragma once

#include "backend/device_tables.h"
#include "model/collective.h"
#include "model/program.h"
#include "verifier/verify.h"

#include <cstdint>
#include <span>
#include <vector>

namespace syncoll::backend {

struct LoweringOptions {
  /// Sends whose receiver provably leaves the destination alone until its receive completes
  /// write straight into it (zero-copy) instead of through the FIFO. Only under Simple and
  /// LL128 framing: an LL message's flags travel with its data.
  bool direct_puts = true;
};

/// Bytes the interpreter reads and writes in memory over one launch, every rank together: what a
/// bandwidth comparison with a device copy counts. `staged` is the part that goes through FIFO
/// slots (written by the sender and read back by the receiver), which direct puts avoid.
struct Traffic {
  int64_t read = 0;
  int64_t written = 0;
  int64_t staged = 0;
  int64_t total() const { return read + written; }
};

class ExecutableProgram;
namespace detail {
/// The tables of any program, verified or not. Only tests call it, to show what an unverified
/// program does on a real executor (docs/architecture.md, "Lowering"): every other path goes
/// through ExecutableProgram::lower.
ExecutableProgram lower_unchecked(const Program &program, const CollectiveSpec &collective,
                                  const LoweringOptions &options = {});
} // namespace detail

class ExecutableProgram {
public:
  /// The tables of a verified program; nothing else lowers.
  static ExecutableProgram lower(const verifier::VerifiedProgram &verified,
                                 const LoweringOptions &options = {});

  const Program &program() const { return program_; }
  const CollectiveSpec &collective() const { return collective_; }
  std::span<const device::Step> steps() const { return steps_; }
  std::span<const device::Block> blocks() const { return blocks_; }
  std::span<const device::Connection> connections() const { return connections_; }
  /// The chunk table: the unit in its rank's arena of every (rank, buffer, slot).
  std::span<const int32_t> units() const { return units_; }
  /// The chunk-table index of slot `slot` of `buffer` on `rank`.
  int32_t chunk_index(RankId rank, BufferKind buffer, int slot) const;
  /// Slots of `buffer` on `rank` a program may name (in place: through the alias).
  int32_t slots(RankId rank, BufferKind buffer) const;
  /// The most steps of any block: a flag value is iteration * (longest + 1) + step.
  int longest() const { return longest_; }
  /// Sends lowered to direct puts.
  int direct_puts() const { return direct_puts_; }
  /// Memory traffic of one launch with chunks of `chunk_bytes`.
  Traffic traffic(int64_t chunk_bytes) const;
  /// The sizes of a run with chunks of `chunk_elements` elements of `element_bytes` bytes.
  device::RunShape shape(int64_t chunk_elements, int element_bytes) const;

private:
  friend ExecutableProgram detail::lower_unchecked(const Program &, const CollectiveSpec &,
                                                   const LoweringOptions &);
  ExecutableProgram(Program program, CollectiveSpec collective)
      : program_(std::move(program)), collective_(std::move(collective)) {}
  void build_chunk_table();
  void build_blocks();
  void mark_direct_puts();

  Program program_;
  CollectiveSpec collective_;
  std::vector<device::Step> steps_;
  std::vector<device::Block> blocks_;
  std::vector<device::Connection> connections_;
  std::vector<int32_t> units_;
  std::vector<int32_t> chunk_base_; ///< per rank and buffer: first chunk-table index
  std::vector<int32_t> chunk_slots_;
  int longest_ = 0;
  int64_t units_per_rank_ = 0;
  int flags_per_rank_ = 0, inbound_per_rank_ = 0, outbound_per_rank_ = 0;
  int direct_puts_ = 0;
};

} // namespace syncoll::backend
