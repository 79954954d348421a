#include "lowering/dsl.h"

#include "model/collective_traits.h"

#include <fmt/format.h>

namespace syncoll::lowering {

std::string to_string(const Buffer &b) {
  switch (b.kind) {
  case BufferKind::Input:
    return "input";
  case BufferKind::Output:
    return "output";
  case BufferKind::Scratch:
    return "scratch '" + b.scratch + "'";
  }
  return "?";
}

std::string to_string(const ChunkRef &r) {
  return r.count == 1
             ? fmt::format("chunk(rank {}, {}, {})", r.rank.value(), to_string(r.buffer), r.index)
             : fmt::format("chunk(rank {}, {}, {}, count {})", r.rank.value(), to_string(r.buffer),
                           r.index, r.count);
}

Expected<DslProgram> DslProgram::create(std::string name, Topology topology,
                                        CollectiveSpec collective, DslOptions options) {
  if (topology.num_ranks() != collective.num_ranks())
    return fail({}, fmt::format("program '{}': the topology has {} ranks, the collective {}", name,
                                topology.num_ranks(), collective.num_ranks()));
  if (options.in_place && collective.in_place() == InPlaceKind::None)
    return fail({}, fmt::format("program '{}': collective '{}' has no in-place form", name,
                                collective.name()));
  DslProgram p(std::move(name), std::move(topology), std::move(collective), options);
  // The input's pre chunks hold values at the start (in place, through the aliased slot).
  const CollectiveSpec &c = p.collective_;
  for (int ch = 0; ch < c.num_chunks(); ++ch)
    for (const ChunkPlace &place : c.chunk(ChunkId(ch)).pre)
      p.version_[p.physical(place.rank.value(), Buffer::input(), place.slot)] = 0;
  return p;
}

DslProgram::SlotKey DslProgram::physical(int rank, const Buffer &buffer, int index) const {
  if (!options_.in_place || buffer.kind == BufferKind::Scratch)
    return {rank, buffer, index};
  const AliasedSlot home = in_place_slot(collective_, RankId(rank), buffer.kind, index);
  return {rank, home.buffer == BufferKind::Input ? Buffer::input() : Buffer::output(), home.index};
}

std::string DslProgram::where() const {
  return fmt::format("program '{}', operation {}", name_, operations_.size());
}

Expected<void> DslProgram::check_range(int rank, const Buffer &buffer, int index, int count) const {
  if (rank < 0 || rank >= topology_.num_ranks())
    return fail({}, fmt::format("{}: rank {} out of range 0..{}", where(), rank,
                                topology_.num_ranks() - 1));
  if (count < 1)
    return fail({}, fmt::format("{}: count {} must be at least 1", where(), count));
  if (index < 0)
    return fail({}, fmt::format("{}: negative index {}", where(), index));
  int size = -1;
  if (buffer.kind == BufferKind::Input)
    size = collective_.input_chunks();
  if (buffer.kind == BufferKind::Output)
    size = collective_.output_chunks();
  if (buffer.kind == BufferKind::Scratch && buffer.scratch.empty())
    return fail({}, fmt::format("{}: a scratch buffer needs a name", where()));
  if (size >= 0 && index + count > size)
    return fail({}, fmt::format("{}: {} [{}, {}) runs past its {} chunks on rank {}", where(),
                                to_string(buffer), index, index + count, size, rank));
  return {};
}

ChunkRef DslProgram::make_ref(int rank, const Buffer &buffer, int index, int count) const {
  ChunkRef r{RankId(rank), buffer, index, count, {}};
  for (int k = 0; k < count; ++k) {
    auto it = version_.find(physical(rank, buffer, index + k));
    r.versions.push_back(it == version_.end() ? ~std::uint64_t(0) : it->second);
  }
  return r;
}

Expected<ChunkRef> DslProgram::chunk(int rank, const Buffer &buffer, int index, int count) const {
  SYNCOLL_CHECK(check_range(rank, buffer, index, count));
  for (int k = 0; k < count; ++k)
    if (!version_.contains(physical(rank, buffer, index + k)))
      return fail({}, fmt::format("{}: {} is uninitialized: no value was placed there", where(),
                                  to_string(make_ref(rank, buffer, index + k, 1))));
  return make_ref(rank, buffer, index, count);
}

Expected<void> DslProgram::check_current(const ChunkRef &r, const std::string &role) const {
  SYNCOLL_CHECK(check_range(r.rank.value(), r.buffer, r.index, r.count));
  if (r.versions.size() != size_t(r.count))
    return fail({},
                fmt::format("{}: {} {} was not made by this program", where(), role, to_string(r)));
  for (int k = 0; k < r.count; ++k) {
    auto it = version_.find(physical(r.rank.value(), r.buffer, r.index + k));
    if (it == version_.end())
      return fail({}, fmt::format("{}: {} {} is uninitialized", where(), role, to_string(r)));
    if (it->second != r.versions[size_t(k)])
      return fail({}, fmt::format("{}: {} {} is stale: slot {} was overwritten after the "
                                  "reference was made",
                                  where(), role, to_string(r), r.index + k));
  }
  return {};
}

void DslProgram::write(const ChunkRef &r) {
  for (int k = 0; k < r.count; ++k) {
    const SlotKey key = physical(r.rank.value(), r.buffer, r.index + k);
    auto it = version_.find(key);
    version_[key] = it == version_.end() ? 1 : it->second + 1;
  }
  if (r.buffer.kind == BufferKind::Scratch) {
    int &size = scratch_[{r.rank.value(), r.buffer.scratch}];
    size = std::max(size, r.index + r.count);
  }
}

Expected<ChunkRef> DslProgram::copy(const ChunkRef &src, int dst_rank, const Buffer &buffer,
                                    int index, const CopyOptions &options) {
  SYNCOLL_CHECK(check_current(src, "source"));
  SYNCOLL_CHECK(check_range(dst_rank, buffer, index, src.count));
  if (dst_rank != src.rank.value() && !topology_.reaches(src.rank, RankId(dst_rank)))
    return fail({}, fmt::format("{}: copy from rank {} to rank {}: the topology has no such link "
                                "or switched route",
                                where(), src.rank.value(), dst_rank));
  if (options.channel && (*options.channel < 0 || *options.channel > kMaxChannelIndex))
    return fail({}, fmt::format("{}: channel {} out of range 0..{}", where(), *options.channel,
                                kMaxChannelIndex));
  ChunkRef dst{RankId(dst_rank), buffer, index, src.count, {}};
  if (dst_rank == src.rank.value()) {
    const SlotKey from = physical(dst_rank, src.buffer, src.index);
    const SlotKey to = physical(dst_rank, buffer, index);
    if (from == to)
      return src; // copying a chunk onto itself does nothing (gc3)
    if (from.buffer == to.buffer && from.index < to.index + src.count &&
        to.index < from.index + src.count)
      return fail({}, fmt::format("{}: local copy between overlapping ranges of {}", where(),
                                  to_string(to.buffer)));
  }
  operations_.push_back({OperationKind::Copy, src, dst, options});
  write(dst);
  return make_ref(dst_rank, buffer, index, src.count);
}

Expected<ChunkRef> DslProgram::reduce(const ChunkRef &dst, const ChunkRef &other,
                                      const CopyOptions &options) {
  SYNCOLL_CHECK(check_current(dst, "reduction target"));
  SYNCOLL_CHECK(check_current(other, "reduction operand"));
  if (dst.count != other.count)
    return fail({},
                fmt::format("{}: reduce of {} chunks into {}", where(), other.count, dst.count));
  if (dst.rank != other.rank && !topology_.reaches(other.rank, dst.rank))
    return fail({}, fmt::format("{}: reduce from rank {} into rank {}: the topology has no such "
                                "link or switched route",
                                where(), other.rank.value(), dst.rank.value()));
  if (options.channel && (*options.channel < 0 || *options.channel > kMaxChannelIndex))
    return fail({}, fmt::format("{}: channel {} out of range 0..{}", where(), *options.channel,
                                kMaxChannelIndex));
  if (dst.rank == other.rank) {
    const SlotKey a = physical(dst.rank.value(), dst.buffer, dst.index);
    const SlotKey b = physical(other.rank.value(), other.buffer, other.index);
    if (a.buffer == b.buffer && a.index < b.index + dst.count && b.index < a.index + dst.count)
      return fail({}, fmt::format("{}: local reduce between overlapping ranges of {}", where(),
                                  to_string(a.buffer)));
  }
  operations_.push_back({OperationKind::Reduce, other, dst, options});
  write(dst);
  return make_ref(dst.rank.value(), dst.buffer, dst.index, dst.count);
}

} // namespace syncoll::lowering
