// The executable form of a verified program: flat instruction tables, one per thread block, with
// every connection numbered. An interpreter (the CPU executor here, the CUDA kernel later) runs
// these tables as the MSCCL executor runs MSCCL-IR (docs/semantics.md): one worker per thread
// block, each step one primitive on its connections, bounded FIFOs, per-thread-block flags for
// dependencies, a tiling loop over each chunk. Only a VerifiedProgram lowers to one.
#pragma once

#include "model/collective.h"
#include "model/program.h"
#include "verifier/verify.h"

#include <cstdint>
#include <vector>

namespace syncoll::backend {

/// One step as the interpreters read it.
struct StepRecord {
  OpType op = OpType::Nop;
  BufferKind src_buffer = BufferKind::Input;
  int src_offset = 0;
  BufferKind dst_buffer = BufferKind::Input;
  int dst_offset = 0;
  int count = 0;
  int dependency_block = -1; ///< index into ExecutableProgram::blocks; -1: none
  int dependency_step = 0;
  bool publishes = false; ///< hasdep: the step sets its block's flag when done
};

struct Connection {
  RankId sender;
  RankId receiver;
  ChannelId channel;
};

struct BlockTable {
  RankId rank;
  TbId tb;
  int send_connection = -1; ///< index into ExecutableProgram::connections
  int recv_connection = -1;
  std::vector<StepRecord> steps;
};

class ExecutableProgram;
namespace detail {
/// The tables of any program, verified or not. Only tests call it, to show what an unverified
/// program does on a real executor (docs/architecture.md, "Lowering"): every other path goes
/// through ExecutableProgram::lower.
ExecutableProgram lower_unchecked(const Program &program, const CollectiveSpec &collective);
} // namespace detail

class ExecutableProgram {
public:
  /// The tables of a verified program; nothing else lowers.
  static ExecutableProgram lower(const verifier::VerifiedProgram &verified);

  const Program &program() const { return program_; }
  const CollectiveSpec &collective() const { return collective_; }
  const std::vector<BlockTable> &blocks() const { return blocks_; }
  const std::vector<Connection> &connections() const { return connections_; }
  /// The most steps of any block: a flag value is iteration * (longest + 1) + step.
  int longest() const { return longest_; }

private:
  friend ExecutableProgram detail::lower_unchecked(const Program &, const CollectiveSpec &);
  ExecutableProgram(Program program, CollectiveSpec collective)
      : program_(std::move(program)), collective_(std::move(collective)) {}
  Program program_;
  CollectiveSpec collective_;
  std::vector<BlockTable> blocks_;
  std::vector<Connection> connections_;
  int longest_ = 0;
};

} // namespace syncoll::backend
