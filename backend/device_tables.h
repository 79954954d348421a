// The executable form of a verified program as plain data: what the CUDA interpreter kernel
// reads from device memory and the CPU executor reads from host memory, byte for byte the same.
// Only backend/executable.cpp writes these tables, from a VerifiedProgram.
//
// Memory: each rank owns one arena of chunk-sized units (its input, output and scratch chunks,
// in-place aliases folded in at lowering) and one communication area (flags of its thread blocks,
// the counters and FIFOs of the connections it receives on, the credits of those it sends on).
// A step names chunks by their index in the chunk table, which gives the unit in the rank's arena.
#pragma once

#include "backend/element.h"

#include <cstdint>

namespace syncoll::backend::device {

// What a step does, as bits the interpreter tests; derived from model/'s op table at lowering.
inline constexpr uint32_t kReceives = 1u << 0;
inline constexpr uint32_t kSends = 1u << 1;
inline constexpr uint32_t kReadsSrc = 1u << 2;
inline constexpr uint32_t kReadsDst = 1u << 3;
inline constexpr uint32_t kWritesDst = 1u << 4;
inline constexpr uint32_t kReduces = 1u << 5;
/// hasdep: the step sets its thread block's flag when done.
inline constexpr uint32_t kPublishes = 1u << 6;
/// The send writes its value straight into the receiver's destination chunks (zero-copy); the
/// FIFO slot only carries the announcement. Lowering sets it only where the receiver provably
/// does not touch those chunks until its receive completes.
inline constexpr uint32_t kPutsDirect = 1u << 7;
/// The matching send puts directly: the data is in the destination when the message is
/// announced, so the receive only waits for the announcement.
inline constexpr uint32_t kLandsDirect = 1u << 8;

struct Step {
  uint32_t bits = 0;
  int32_t count = 0;
  int32_t src = -1; ///< chunk-table index of the first source chunk; chunk c is src + c
  int32_t dst = -1; ///< the same for the destination
  int32_t put = -1; ///< kPutsDirect: the receiver's first destination chunk (its chunk table)
  int32_t dependency_block = -1; ///< global thread-block index on the same rank; -1: none
  int32_t dependency_step = 0;
  int32_t reserved = 0;
};
static_assert(sizeof(Step) == 32, "steps are read as 32-byte records");

struct Block {
  int32_t rank = 0;
  int32_t tb = 0;
  int32_t send_connection = -1;
  int32_t recv_connection = -1;
  int32_t first_step = 0;
  int32_t num_steps = 0;
  int32_t flag = 0; ///< this block's flag in its rank's communication area
  int32_t reserved = 0;
};

struct Connection {
  int32_t sender = 0;
  int32_t receiver = 0;
  int32_t channel = 0;
  /// The connection's place among the receiver's inbound connections (its tail counter and FIFO)
  /// and among the sender's outbound ones (its credit counter).
  int32_t inbound = 0;
  int32_t outbound = 0;
};

/// Where a thread block stood when a run was stopped; written by the block itself.
enum WaitKind : int32_t { kNotWaiting = 0, kWaitsFlag = 1, kWaitsMessage = 2, kWaitsRoom = 3 };
struct BlockStatus {
  int32_t step = 0;
  int32_t iteration = 0;
  int32_t waiting = kNotWaiting;
  int32_t finished = 0;
};

/// Sizes of one run, the same for every block.
struct RunShape {
  int64_t chunk_elements = 0;
  int64_t tile_elements = 0; ///< elements of a chunk per pipeline iteration
  int32_t iterations = 0;
  int32_t per_message = 1;       ///< chunks a message carries at most (count splitting)
  int64_t slot_bytes = 0;        ///< one FIFO slot (Simple: payload; LL: 16-byte lines)
  int32_t fifo_depth = 1;        ///< messages a connection holds
  int32_t ll = 0;                ///< the LL protocol: data and flag travel in one 16-byte line
  int64_t flag_stride = 1;       ///< longest thread block + 1
  int64_t units_per_rank = 0;    ///< arena size in chunks, the same on every rank
  int32_t flags_per_rank = 0;    ///< blocks of the rank with the most
  int32_t inbound_per_rank = 0;  ///< the most inbound connections of any rank
  int32_t outbound_per_rank = 0; ///< the most outbound connections of any rank
  int32_t reserved = 0;
};

/// Per rank, in the address space of whoever runs the blocks: its arena and communication area.
struct RankBases {
  char *arena = nullptr;
  char *comm = nullptr;
};

/// The communication area of a rank: 64-byte counters (flags, then inbound tails and taken
/// counts, then outbound credits and sent counts), then the FIFO slots of its inbound connections.
/// Tails and credits are written by the peer; taken and sent counts are private to their block
/// and carry its position across launches.
struct CommLayout {
  static constexpr int64_t kCounterBytes = 64;
  int64_t flags = 0, tails = 0, taken = 0, credits = 0, sent = 0, fifos = 0, bytes = 0;
};
SYNCOLL_HOST_DEVICE inline CommLayout comm_layout(const RunShape &s) {
  CommLayout l;
  const int64_t c = CommLayout::kCounterBytes;
  l.flags = 0;
  l.tails = l.flags + c * s.flags_per_rank;
  l.taken = l.tails + c * s.inbound_per_rank;
  l.credits = l.taken + c * s.inbound_per_rank;
  l.sent = l.credits + c * s.outbound_per_rank;
  l.fifos = l.sent + c * s.outbound_per_rank;
  l.bytes = l.fifos + int64_t(s.inbound_per_rank) * s.fifo_depth * s.slot_bytes;
  return l;
}

} // namespace syncoll::backend::device
