// Collective traits: every convention a collective kind carries, in one row per kind.
//
// The buffer sizes of the standard specification, how the runtimes alias input and output when
// the collective is called in place, how the MSCCL executor cuts a message into nchunksperloop
// chunks, what nccl-tests calls the message size and how it turns algorithm bandwidth into bus
// bandwidth, whether the kind has a root, and how MSCCL-IR spells it. Every layer reads these
// facts from here; adding a collective kind means adding a row (and its chunk layout in
// make_collective), nothing outside model/. docs/semantics.md, "Collectives", explains the rows.
#pragma once

#include "model/collective.h"
#include "model/program.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace syncoll {

/// A size in units of the chunk factor C: C itself, or C times the rank count.
enum class PerRank { One, Ranks };

/// nccl-tests' bus bandwidth factor: 1, (n-1)/n, or 2(n-1)/n.
enum class BusFactor { One, RingShare, TwiceRingShare };

struct CollectiveTraits {
  CollectiveKind kind;
  std::string_view name;          ///< our spelling (CLI, JSON)
  std::string_view executor_name; ///< MSCCL-IR `coll`; "custom" where the executor has no name
  std::string_view nccl_name;     ///< NCCL's spelling in its logs; empty where NCCL has none
  bool rooted;                    ///< takes a root rank
  bool standard;                  ///< make_collective builds it from ranks, chunk factor, root
  PerRank input_chunks;           ///< per-rank input buffer of the standard specification
  PerRank output_chunks;          ///< per-rank output buffer of the standard specification
  InPlaceKind in_place;           ///< how the runtimes alias the buffers when called in place
  /// The executor's sizeMultiplier: nBytes = count x type size x this.
  PerRank size_multiplier;
  /// The buffer whose chunks `count x sizeMultiplier` covers, i.e. what nchunksperloop cuts.
  BufferKind loop_buffer;
  /// The buffer nccl-tests reports as the message size (the larger one).
  BufferKind nccl_tests_buffer;
  BusFactor bus_factor;
  /// nccl-tests' program for the kind ("all_reduce_perf") and the reduction its table's `redop`
  /// column names by default ("sum", or "none" where nothing is reduced); empty where nccl-tests
  /// has no program.
  std::string_view nccl_tests_binary;
  std::string_view nccl_tests_redop;
  /// NCCL's tuning chooses an algorithm and protocol for each call, and asks a tuner plugin,
  /// which names the collective as `name` does; point-to-point (Alltoall, Gather, Scatter) never.
  bool nccl_tuned;
  /// FIFO slots per chunk NCCL's ring pipelines under Simple (its *_CHUNKSTEPS): 4 for AllReduce,
  /// AllGather and ReduceScatter, 1 for Broadcast and Reduce; 0 where NCCL has no ring.
  int nccl_chunk_steps;
};

/// The row of a kind; every kind has one.
[[nodiscard]] const CollectiveTraits &collective_traits(CollectiveKind kind);
/// Every row, in CollectiveKind order.
[[nodiscard]] std::span<const CollectiveTraits> all_collective_traits();

/// A collective's per-rank input or output size, in chunks (a collective has no scratch).
[[nodiscard]] int buffer_chunks(const CollectiveSpec &spec, BufferKind buffer);

/// The per-rank chunk count of a PerRank size.
[[nodiscard]] int scaled_chunks(PerRank scale, int ranks, int chunk_factor);

/// nccl-tests' bus bandwidth over algorithm bandwidth for `ranks` ranks.
[[nodiscard]] double bus_bandwidth_factor(CollectiveKind kind, int ranks);

/// The nchunksperloop a program implementing `spec` declares: the chunks of its loop buffer.
[[nodiscard]] int chunks_per_loop(const CollectiveSpec &spec);

/// Chunks in the buffer nccl-tests' size counts (the larger one).
[[nodiscard]] int nccl_tests_chunks(const CollectiveSpec &spec);
/// The size nccl-tests reports for a call whose per-rank input is `input_bytes`, and back (at
/// least one byte): the output for allgather and gather, the input otherwise.
[[nodiscard]] int64_t nccl_tests_size(const CollectiveSpec &spec, int64_t input_bytes);
[[nodiscard]] int64_t input_bytes_for_nccl_tests_size(const CollectiveSpec &spec, int64_t size);

/// The standard collective an MSCCL-IR program implements, read from its `coll`, `ngpus` and
/// `nchunksperloop` under the executor's conventions; `root` for rooted kinds (default 0). Fails
/// for `custom` and for a loop that does not divide into the kind's chunks.
[[nodiscard]] Expected<CollectiveSpec> collective_for_program(const Program &program,
                                                              std::optional<int> root);

/// Where chunk `index` of `buffer` lives on `rank` when `spec` runs in place: the *home* buffer
/// the runtime binds both pointers into, and the index there. The home is the input for
/// allreduce, alltoall, broadcast, reduce, reducescatter and scatter, the output for allgather and
/// gather (as msccl-tools and RCCL's programs address them). Scratch, and every buffer of a
/// collective without an in-place form, stays where it is.
struct AliasedSlot {
  BufferKind buffer;
  int index;
  auto operator<=>(const AliasedSlot &) const = default;
};
[[nodiscard]] AliasedSlot in_place_slot(const CollectiveSpec &spec, RankId rank, BufferKind buffer,
                                        int index);
/// The buffer whose memory `buffer` lives in when `spec` runs in place: `buffer` itself for the
/// home (and for every buffer of a collective without an in-place form), else the other one.
[[nodiscard]] BufferKind in_place_home(const CollectiveSpec &spec, BufferKind buffer);

/// How many slots of `buffer` a program of `spec` may name and the runtime defines, given the
/// `declared` size. Out of place, the declared size. In place, also every slot of the
/// collective's buffer: the runtimes declare the buffer that aliases the other one as 0 chunks
/// (in-place allreduce: o_chunks="0", its output *is* its input; allgather: i_chunks="0"), and
/// the postcondition still reads every output slot, through the alias.
[[nodiscard]] int slots_addressable(const CollectiveSpec &spec, int declared, BufferKind buffer,
                                    bool in_place);

} // namespace syncoll
