// One row per operation of MSCCL++'s executor: its name in the plan, what it does, the channels
// it runs on. docs/semantics.md ("MSCCL++ execution plans") says what each reads and writes.
#include "model/invariant.h"
#include "mscclpp/plan.h"

#include <algorithm>

namespace syncoll::mscclpp {
namespace {

constexpr ChannelKind kNone[] = {ChannelKind::None};
constexpr ChannelKind kMemory[] = {ChannelKind::Memory};
constexpr ChannelKind kPort[] = {ChannelKind::Port};
constexpr ChannelKind kMemoryOrPort[] = {ChannelKind::Memory, ChannelKind::Port};
constexpr ChannelKind kSwitch[] = {ChannelKind::Switch};

constexpr OpTraits kOps[] = {
    {OpKind::Nop, "nop", "nothing (a thread-block group's place holder)", false, kNone, false,
     false, false},
    {OpKind::Barrier, "barrier", "waits for the GPU's other thread blocks of the barrier", false,
     kNone, false, false, false},
    {OpKind::Put, "put", "writes local chunks into peers' buffers", true, kMemoryOrPort, false,
     false, false},
    {OpKind::PutWithSignal, "pws", "put, then signal the peer, in the proxy's order", true, kPort,
     false, false, true},
    {OpKind::PutWithSignalAndFlush, "pwsf", "put, signal, and wait until the source is read", true,
     kPort, false, false, true},
    {OpKind::Get, "get", "reads peers' chunks into local buffers", true, kMemory, false, false,
     false},
    {OpKind::Copy, "copy", "copies local chunks to local chunks", false, kNone, false, false,
     false},
    {OpKind::Signal, "signal", "makes earlier writes visible, then raises the peers' semaphores",
     true, kMemoryOrPort, false, false, true},
    {OpKind::Wait, "wait", "waits until the peers have signalled once more", true, kMemoryOrPort,
     false, false, false},
    {OpKind::Flush, "flush", "waits until the proxy has read every earlier put's source", true,
     kPort, false, false, false},
    {OpKind::Reduce, "re", "adds local chunks into a local chunk", false, kNone, false, true,
     false},
    {OpKind::ReduceSend, "res", "adds local chunks into a local chunk and puts the sum to peers",
     true, kMemoryOrPort, false, true, false},
    {OpKind::ReadReduce, "rre", "adds peers' chunks into a local chunk", true, kMemory, false, true,
     false},
    {OpKind::ReadReduceSend, "rres", "adds peers' chunks into a local chunk and puts the sum", true,
     kMemory, false, true, false},
    {OpKind::PutPackets, "ppkt", "writes local chunks as packets into peers' scratch", true,
     kMemoryOrPort, true, false, false},
    {OpKind::ReadPutPackets, "rppkt", "forwards received packets to peers", true, kMemoryOrPort,
     true, false, false},
    {OpKind::ReduceSendPackets, "respkt",
     "adds received packets into a chunk, puts the sum as "
     "packets",
     true, kMemoryOrPort, true, true, false},
    {OpKind::CopyPackets, "cpkt", "copies local chunks into packets", false, kNone, true, false,
     false},
    {OpKind::UnpackPackets, "upkt", "waits for packets and copies their data out", false, kNone,
     true, false, false},
    {OpKind::ReducePackets, "repkt", "waits for packets and adds their data into a chunk", false,
     kNone, true, true, false},
    {OpKind::ReduceCopyPackets, "recpkt",
     "adds received packets into a chunk, keeps a packet "
     "copy",
     false, kNone, true, true, false},
    {OpKind::ReduceCopySendPackets, "recspkt", "recpkt, and puts the sum as packets to peers", true,
     kMemoryOrPort, true, true, false},
    {OpKind::MultiLoadReduceStore, "glres",
     "NVLS: loads the sum over the group, stores it to "
     "every member",
     true, kSwitch, false, true, false},
    {OpKind::MultiStore, "gstore", "NVLS: stores local chunks to every member of the group", true,
     kSwitch, false, false, false},
    {OpKind::RelaxedSignal, "rlxsignal", "raises the peers' semaphores, ordering no data", true,
     kMemory, false, false, true},
    {OpKind::RelaxedWait, "rlxwait", "waits for a relaxed signal, ordering no data", true, kMemory,
     false, false, false},
    {OpKind::Pipeline, "pipeline", "repeats its operations over the chunks, a unit at a time",
     false, kNone, false, false, false},
    {OpKind::SemAcquire, "sem_acquire", "waits for and takes a device semaphore", false, kNone,
     false, false, false},
    {OpKind::SemRelease, "sem_release", "gives a device semaphore back", false, kNone, false, false,
     false},
};

} // namespace

std::span<const OpTraits> all_op_traits() {
  return kOps;
}

const OpTraits &op_traits(OpKind kind) {
  const OpTraits &row = kOps[static_cast<size_t>(kind)];
  SYNCOLL_INVARIANT(row.kind == kind, "the op table is in OpKind's order");
  return row;
}

const OpTraits *find_op(std::string_view name) {
  const auto row = std::find_if(std::begin(kOps), std::end(kOps),
                                [&](const OpTraits &t) { return t.name == name; });
  return row == std::end(kOps) ? nullptr : row;
}

std::string_view channel_kind_name(ChannelKind kind) {
  switch (kind) {
  case ChannelKind::Memory:
    return "memory";
  case ChannelKind::Port:
    return "port";
  case ChannelKind::Switch:
    return "switch";
  case ChannelKind::None:
    return "none";
  }
  SYNCOLL_UNREACHABLE("a channel kind without a name");
}

bool is_mscclpp_collective(CollectiveKind kind) {
  return kind == CollectiveKind::Allreduce || kind == CollectiveKind::Allgather ||
         kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::Broadcast ||
         kind == CollectiveKind::Alltoall;
}

std::string_view plan_buffer_name(PlanBuffer buffer) {
  switch (buffer) {
  case PlanBuffer::Input:
    return "i";
  case PlanBuffer::Output:
    return "o";
  case PlanBuffer::Scratch:
    return "s";
  }
  SYNCOLL_UNREACHABLE("a plan buffer without a name");
}

int PlanGpu::chunks(PlanBuffer buffer) const {
  switch (buffer) {
  case PlanBuffer::Input:
    return input_chunks;
  case PlanBuffer::Output:
    return output_chunks;
  case PlanBuffer::Scratch:
    return scratch_chunks;
  }
  SYNCOLL_UNREACHABLE("a plan buffer without chunks");
}

int PlanGpu::channel_count(ChannelKind kind) const {
  int n = 0;
  for (const PlanChannel &c : channels)
    if (c.kind == kind)
      n += kind == ChannelKind::Switch ? int(c.rank_groups.size()) : int(c.peers.size());
  return n;
}

std::optional<int> PlanGpu::channel_peer(ChannelKind kind, int index) const {
  for (const PlanChannel &c : channels) {
    if (c.kind != kind)
      continue;
    if (index < int(c.peers.size()))
      return c.peers[size_t(index)];
    index -= int(c.peers.size());
  }
  return std::nullopt;
}

} // namespace syncoll::mscclpp
