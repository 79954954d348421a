#include "backend/instruction_table.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace syncoll::backend {
namespace {

constexpr BufferKind kBuffers[] = {BufferKind::Input, BufferKind::Output, BufferKind::Scratch};

uint32_t step_bits(const Instruction &in) {
  const OpTraits &t = op_traits(in.op);
  uint32_t bits = 0;
  bits |= t.receives ? device::kReceives : 0;
  bits |= t.sends ? device::kSends : 0;
  bits |= t.reads_src ? device::kReadsSrc : 0;
  bits |= t.reads_dst ? device::kReadsDst : 0;
  bits |= t.writes_dst ? device::kWritesDst : 0;
  bits |= t.reduces ? device::kReduces : 0;
  bits |= in.has_dep ? device::kPublishes : 0;
  return bits;
}

} // namespace

ExecutableProgram ExecutableProgram::lower(const verifier::VerifiedProgram &verified,
                                           const LoweringOptions &options) {
  return detail::lower_unchecked(verified.program(), verified.collective(), options);
}

ExecutableProgram detail::lower_unchecked(const Program &program, const CollectiveSpec &collective,
                                          const LoweringOptions &options) {
  ExecutableProgram e(program, collective);
  e.build_chunk_table();
  e.build_blocks();
  if (options.direct_puts && program.protocol() != Protocol::LL)
    e.mark_direct_puts();
  return e;
}

int32_t ExecutableProgram::chunk_index(RankId rank, BufferKind buffer, int slot) const {
  const size_t row = rank.index() * std::size(kBuffers) + size_t(buffer);
  SYNCOLL_INVARIANT(slot >= 0 && slot < chunk_slots_[row], "a chunk outside its buffer");
  return chunk_base_[row] + slot;
}

int32_t ExecutableProgram::slots(RankId rank, BufferKind buffer) const {
  return chunk_slots_[rank.index() * std::size(kBuffers) + size_t(buffer)];
}

// Each rank's arena holds its input, output and scratch slots in that order; in place, a slot
// whose home is the other buffer names the home's unit, so both names reach the same memory.
void ExecutableProgram::build_chunk_table() {
  const bool in_place = program_.in_place() && !program_.out_of_place();
  for (const RankProgram &rp : program_.ranks()) {
    int32_t layout_base[std::size(kBuffers)] = {};
    int32_t units = 0;
    for (BufferKind b : kBuffers) {
      const int declared = rp.chunks(b);
      const int slots = std::max(0, b == BufferKind::Scratch
                                        ? declared
                                        : slots_addressable(collective_, declared, b, in_place));
      layout_base[size_t(b)] = units;
      chunk_base_.push_back(int32_t(units_.size()));
      chunk_slots_.push_back(slots);
      units += slots;
      for (int s = 0; s < slots; ++s)
        units_.push_back(layout_base[size_t(b)] + s);
    }
    units_per_rank_ = std::max<int64_t>(units_per_rank_, units);
    if (!in_place)
      continue;
    for (BufferKind b : {BufferKind::Input, BufferKind::Output}) {
      const size_t row = rp.rank.index() * std::size(kBuffers) + size_t(b);
      for (int s = 0; s < chunk_slots_[row]; ++s) {
        const AliasedSlot home = in_place_slot(collective_, rp.rank, b, s);
        units_[size_t(chunk_base_[row] + s)] = layout_base[size_t(home.buffer)] + home.index;
      }
    }
  }
}

void ExecutableProgram::build_blocks() {
  const Program &p = program_;
  std::vector<int> first_block(size_t(p.num_ranks()), 0);
  std::vector<int> inbound(size_t(p.num_ranks()), 0), outbound(size_t(p.num_ranks()), 0);
  for (const RankProgram &rp : p.ranks()) {
    first_block[rp.rank.index()] = int(blocks_.size());
    flags_per_rank_ = std::max(flags_per_rank_, int(rp.thread_blocks.size()));
    for (const ThreadBlock &tb : rp.thread_blocks) {
      device::Block b;
      b.rank = rp.rank.value();
      b.tb = tb.id.value();
      b.flag = tb.id.value();
      blocks_.push_back(b);
    }
  }
  std::map<std::tuple<int, int, int>, int> connection_index;
  auto connection = [&](RankId sender, RankId receiver, ChannelId channel) {
    auto [it, inserted] =
        connection_index.emplace(std::make_tuple(sender.value(), receiver.value(), channel.value()),
                                 int(connections_.size()));
    if (inserted)
      connections_.push_back({sender.value(), receiver.value(), channel.value(),
                              inbound[receiver.index()]++, outbound[sender.index()]++});
    return it->second;
  };
  for (const RankProgram &rp : p.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks) {
      device::Block &b = blocks_[size_t(first_block[rp.rank.index()] + tb.id.value())];
      b.first_step = int32_t(steps_.size());
      for (const Instruction &in : tb.steps) {
        device::Step s;
        s.bits = step_bits(in);
        s.count = in.count;
        const OpTraits &t = op_traits(in.op);
        if (t.reads_src)
          s.src = chunk_index(rp.rank, in.src.buffer, in.src.offset);
        if (t.reads_dst || t.writes_dst)
          s.dst = chunk_index(rp.rank, in.dst.buffer, in.dst.offset);
        if (in.dependency) {
          s.dependency_block = first_block[rp.rank.index()] + in.dependency->tb.value();
          s.dependency_step = in.dependency->step.value();
        }
        // Program::create guarantees the peers a step's connections need.
        if (t.sends && b.send_connection < 0)
          b.send_connection = connection(rp.rank, *tb.send_peer, tb.channel);
        if (t.receives && b.recv_connection < 0)
          b.recv_connection = connection(*tb.recv_peer, rp.rank, tb.channel);
        steps_.push_back(s);
      }
      b.num_steps = int32_t(steps_.size()) - b.first_step;
      longest_ = std::max(longest_, int(b.num_steps));
    }
  for (int n : inbound)
    inbound_per_rank_ = std::max(inbound_per_rank_, n);
  for (int n : outbound)
    outbound_per_rank_ = std::max(outbound_per_rank_, n);
}

// Mirrors what the interpreter's data loops touch (backend/interpreter.h); an LL message
// moves 16 bytes of line per 8 of payload.
Traffic ExecutableProgram::traffic(int64_t chunk_bytes) const {
  using namespace device;
  Traffic t;
  const int64_t fifo = program_.protocol() == Protocol::LL ? 2 * chunk_bytes : chunk_bytes;
  for (const Step &s : steps_) {
    const int64_t n = s.count;
    const bool landed = s.bits & kLandsDirect, reduces = s.bits & kReduces;
    const bool writes_dst = (s.bits & kWritesDst) && !(landed && !reduces);
    if (s.bits & kReceives) {
      if (!landed) {
        t.read += n * fifo;
        t.staged += n * fifo;
      } else if (writes_dst || (s.bits & kSends)) {
        t.read += n * chunk_bytes;
      }
    }
    if (s.bits & kReadsSrc)
      t.read += n * chunk_bytes;
    if (reduces && !(s.bits & kReceives))
      t.read += n * chunk_bytes; // a local reduction reads its accumulator
    if (writes_dst)
      t.written += n * chunk_bytes;
    if (s.bits & kSends) {
      const bool direct = s.bits & kPutsDirect;
      t.written += n * (direct ? chunk_bytes : fifo);
      t.staged += direct ? 0 : n * fifo;
    }
  }
  return t;
}

device::RunShape ExecutableProgram::shape(int64_t chunk_elements, int element_bytes) const {
  device::RunShape s;
  const Protocol protocol = program_.protocol();
  const ProtocolTraits &traits = protocol_traits(protocol);
  s.chunk_elements = chunk_elements;
  s.tile_elements =
      std::min(chunk_elements, std::max<int64_t>(1, traits.executor_tile_bytes / element_bytes));
  s.iterations = int32_t((chunk_elements + s.tile_elements - 1) / s.tile_elements);
  s.per_message = max_chunks_per_transfer(protocol, chunk_elements * element_bytes);
  s.ll = protocol == Protocol::LL ? 1 : 0;
  const int64_t chunk_payload = s.tile_elements * element_bytes;
  // LL pads each chunk of a message to whole 8-byte lines and doubles them with flags.
  const int64_t per_chunk = s.ll ? (chunk_payload + 7) / 8 * 16 : (chunk_payload + 15) / 16 * 16;
  s.slot_bytes = per_chunk * s.per_message;
  s.fifo_depth = std::max(1, traits.fifo_messages);
  s.flag_stride = longest_ + 1;
  s.units_per_rank = units_per_rank_;
  s.flags_per_rank = flags_per_rank_;
  s.inbound_per_rank = inbound_per_rank_;
  s.outbound_per_rank = outbound_per_rank_;
  return s;
}

} // namespace syncoll::backend
