// An MSCCL++ execution plan: the JSON MSCCL++'s DSL writes and its executor (and the NCCL-API
// shim, RCCL and serving stacks built on it) runs. Per GPU: its buffers in chunks, its channels
// to peers (memory channels that GPU threads write through, port channels a proxy drives, switch
// channels over NVLS), the peers' buffers it reaches, its device semaphores, and its thread
// blocks' operations in order. The plan repeats over a message: every chunk is 1 / chunks of a
// rank's buffer, whatever the message size in the plan's window.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::mscclpp {

/// A GPU's own buffers ("i", "o", "s").
enum class PlanBuffer { Input, Output, Scratch };
/// How a thread block reaches a peer: GPU threads writing its memory (memory), a proxy posting
/// the transfer (port: DMA or RDMA), NVLink SHARP multicast (switch); none for local ops.
enum class ChannelKind { Memory, Port, Switch, None };

/// Every operation of MSCCL++'s executor (one row each in op_traits.cpp).
enum class OpKind {
  Nop,
  Barrier,
  Put,
  PutWithSignal,
  PutWithSignalAndFlush,
  Get,
  Copy,
  Signal,
  Wait,
  Flush,
  Reduce,
  ReduceSend,
  ReadReduce,
  ReadReduceSend,
  PutPackets,
  ReadPutPackets,
  ReduceSendPackets,
  CopyPackets,
  UnpackPackets,
  ReducePackets,
  ReduceCopyPackets,
  ReduceCopySendPackets,
  MultiLoadReduceStore,
  MultiStore,
  RelaxedSignal,
  RelaxedWait,
  Pipeline,
  SemAcquire,
  SemRelease,
};

/// What an operation is, as a row of the table every use reads (op_traits.cpp).
struct OpTraits {
  OpKind kind;
  std::string_view name; ///< as the plan spells it ("pws")
  std::string_view what; ///< what it does, in a few words
  /// Whether it names channels (channel_type and channel_ids).
  bool uses_channels;
  /// The channel kinds it may run on (empty: none).
  std::span<const ChannelKind> channel_kinds;
  /// Whether it moves packets (data with its flag, like NCCL's LL): the plan's LL protocol.
  bool packets;
  /// Whether it sums its sources into its destinations (else destination i takes source i, or
  /// every destination the one source).
  bool reduces;
  /// Whether it raises its peers' semaphores (after its data, for a put with a signal).
  bool signals;
};
[[nodiscard]] std::span<const OpTraits> all_op_traits();
[[nodiscard]] const OpTraits &op_traits(OpKind kind);
[[nodiscard]] const OpTraits *find_op(std::string_view name);

[[nodiscard]] std::string_view channel_kind_name(ChannelKind kind);
/// Whether MSCCL++'s executor runs plans of the collective: allreduce, allgather, reducescatter,
/// broadcast (from GPU 0) and alltoall.
[[nodiscard]] bool is_mscclpp_collective(CollectiveKind kind);
[[nodiscard]] std::string_view plan_buffer_name(PlanBuffer buffer);

/// Chunks [index, index + size) of a buffer: the GPU's own, a peer's through one of the thread
/// block's remote buffer references (`remote`, an index into them for the op's channel kind), or
/// the multicast buffer of one of its switch channels (`switch_channel`).
struct BufferSlice {
  std::optional<PlanBuffer> local;
  std::optional<int> remote;
  std::optional<int> switch_channel;
  int index = 0;
  int size = 1;
  SourceLocation where;
};

struct PlanOp {
  OpKind kind = OpKind::Nop;
  ChannelKind channel_kind = ChannelKind::None;
  std::vector<int> channels; ///< indices into the thread block's channels of `channel_kind`
  std::vector<BufferSlice> src;
  std::vector<BufferSlice> dst;
  std::optional<int> barrier_id;
  std::optional<int> barrier_threadblocks; ///< thread blocks a barrier joins
  std::vector<int> semaphores;             ///< device semaphores (sem_acquire, sem_release)
  /// A thread-block group: this block does slice `group_index` of `group_size` of every slice.
  int group_index = 0;
  int group_size = 1;
  /// A pipeline: its body `ops` repeats over `pipeline_chunks` chunks in units of
  /// `pipeline_unit_bytes`.
  int64_t pipeline_unit_bytes = 0;
  int pipeline_chunks = 0;
  std::vector<PlanOp> ops;
  SourceLocation where;
};

/// A thread block's view of its GPU's channels and remote buffers.
struct ThreadBlockChannels {
  ChannelKind kind = ChannelKind::Memory;
  std::vector<int> ids; ///< indices into the GPU's channels of that kind
};
struct ThreadBlockRemoteBuffers {
  ChannelKind access = ChannelKind::Memory;
  std::vector<int> ids; ///< indices into the GPU's remote buffers
};

struct PlanThreadBlock {
  int id = 0;
  std::vector<PlanOp> ops;
  std::vector<ThreadBlockChannels> channels;
  std::vector<ThreadBlockRemoteBuffers> remote_buffers;
  SourceLocation where;
};

/// One channel to each of `peers` (memory, port), or a switch channel over `rank_groups`, bound
/// to the GPU's `buffer`.
struct PlanChannel {
  ChannelKind kind = ChannelKind::Memory;
  std::vector<int> peers;
  std::optional<PlanBuffer> buffer;
  std::vector<std::vector<int>> rank_groups;
  SourceLocation where;
};

/// A peer's buffer the GPU reaches, and through which kinds of channel.
struct PlanRemoteBuffer {
  int rank = 0;
  PlanBuffer buffer = PlanBuffer::Input;
  std::vector<ChannelKind> access;
  SourceLocation where;
};

struct PlanGpu {
  int id = 0;
  int input_chunks = 0;
  int output_chunks = 0;
  int scratch_chunks = 0;
  std::vector<PlanChannel> channels;
  std::vector<PlanRemoteBuffer> remote_buffers;
  std::vector<int> semaphores; ///< initial values
  std::vector<PlanThreadBlock> threadblocks;
  SourceLocation where;
  int chunks(PlanBuffer buffer) const;
  /// The peer of the GPU's `index`-th channel of `kind` (each listed peer is one channel).
  std::optional<int> channel_peer(ChannelKind kind, int index) const;
  int channel_count(ChannelKind kind) const;
};

struct ExecutionPlan {
  std::string name;
  CollectiveKind collective = CollectiveKind::Allreduce;
  bool packets = false; ///< protocol LL (else Simple)
  bool in_place = false;
  bool reuse_resources = false;
  bool double_scratch = false;
  int buffer_alignment = 16;
  uint64_t min_message_bytes = 0;
  uint64_t max_message_bytes = UINT64_MAX;
  int threads_per_block = 1024;
  std::vector<PlanGpu> gpus; ///< by rank
  std::string file;
};

} // namespace syncoll::mscclpp
