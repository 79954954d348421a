#include "model/collective_traits.h"

#include "model/invariant.h"
#include "model/text.h"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>

namespace syncoll {
namespace {

constexpr PerRank One = PerRank::One;
constexpr PerRank Ranks = PerRank::Ranks;
constexpr BusFactor Unit = BusFactor::One;
constexpr BusFactor RingShare = BusFactor::RingShare;
constexpr BusFactor TwiceRingShare = BusFactor::TwiceRingShare;
constexpr BufferKind In = BufferKind::Input;
constexpr BufferKind Out = BufferKind::Output;

// One row per kind, in CollectiveKind order. The executor facts (names, sizeMultiplier, which
// buffer `count` measures, in-place pointer binding) are MSCCL's; the size and bus bandwidth
// conventions are nccl-tests'. docs/semantics.md, "Collectives", gives the reasoning per column.
//  kind                          name             executor   NCCL   rooted standard
//  input   output  in place                      multiplier loop size bus factor
constexpr CollectiveTraits kTraits[] = {
    {CollectiveKind::Allgather, "allgather", "allgather", "AllGather", false, true, //
     One, Ranks, InPlaceKind::InputInOutput, Ranks, Out, Out, RingShare, "all_gather_perf", "none",
     true, 4},
    {CollectiveKind::Alltoall, "alltoall", "alltoall", "AlltoAll", false, true, //
     Ranks, Ranks, InPlaceKind::Same, Ranks, In, In, RingShare, "alltoall_perf", "none", false, 0},
    {CollectiveKind::Broadcast, "broadcast", "broadcast", "Broadcast", true, true, //
     One, One, InPlaceKind::Same, One, In, In, Unit, "broadcast_perf", "none", true, 1},
    {CollectiveKind::Gather, "gather", "gather", "Gather", true, true, //
     One, Ranks, InPlaceKind::InputInOutput, One, In, Out, Unit, "gather_perf", "none", false, 0},
    {CollectiveKind::Scatter, "scatter", "scatter", "Scatter", true, true, //
     Ranks, One, InPlaceKind::OutputInInput, One, Out, In, Unit, "scatter_perf", "none", false, 0},
    {CollectiveKind::Reduce, "reduce", "reduce", "Reduce", true, true, //
     One, One, InPlaceKind::Same, One, In, In, Unit, "reduce_perf", "sum", true, 1},
    {CollectiveKind::ReduceScatter, "reducescatter", "reducescatter", "ReduceScatter", false,
     true, //
     Ranks, One, InPlaceKind::OutputInInput, Ranks, In, In, RingShare, "reduce_scatter_perf", "sum",
     true, 4},
    {CollectiveKind::Allreduce, "allreduce", "allreduce", "AllReduce", false, true, //
     One, One, InPlaceKind::Same, One, In, In, TwiceRingShare, "all_reduce_perf", "sum", true, 4},
    {CollectiveKind::AllToNext, "alltonext", "custom", "", false, true, //
     One, One, InPlaceKind::None, One, In, In, Unit, "", "", false, 0},
    {CollectiveKind::Custom, "custom", "custom", "", false, false, //
     One, One, InPlaceKind::None, One, In, In, Unit, "", "", false, 0},
};
static_assert(std::size(kTraits) == size_t(CollectiveKind::Custom) + 1, "one row per kind");

} // namespace

const CollectiveTraits &collective_traits(CollectiveKind kind) {
  const CollectiveTraits &row = kTraits[static_cast<size_t>(kind)];
  SYNCOLL_INVARIANT(row.kind == kind, "the collective table is out of CollectiveKind order");
  return row;
}

std::span<const CollectiveTraits> all_collective_traits() {
  return kTraits;
}

std::string_view collective_kind_name(CollectiveKind kind) {
  return collective_traits(kind).name;
}

std::optional<CollectiveKind> parse_collective_kind(std::string_view name) {
  const std::string key = name_key(name);
  for (const CollectiveTraits &t : kTraits)
    if (t.name == key)
      return t.kind;
  return std::nullopt;
}

int buffer_chunks(const CollectiveSpec &spec, BufferKind b) {
  SYNCOLL_INVARIANT(b != BufferKind::Scratch, "a collective has no scratch convention");
  return b == BufferKind::Input ? spec.input_chunks() : spec.output_chunks();
}

int scaled_chunks(PerRank scale, int ranks, int chunk_factor) {
  switch (scale) {
  case PerRank::One:
    return chunk_factor;
  case PerRank::Ranks:
    return ranks * chunk_factor;
  }
  SYNCOLL_UNREACHABLE("unknown per-rank scale");
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (collective_traits(kind).bus_factor) {
  case BusFactor::One:
    return 1;
  case BusFactor::RingShare:
    return (n - 1) / n;
  case BusFactor::TwiceRingShare:
    return 2 * (n - 1) / n;
  }
  SYNCOLL_UNREACHABLE("unknown bus factor");
}

int chunks_per_loop(const CollectiveSpec &spec) {
  const CollectiveTraits &t = collective_traits(spec.kind());
  // A custom collective has no executor convention: its loop is its larger buffer.
  if (!t.standard)
    return std::max(spec.input_chunks(), spec.output_chunks());
  return buffer_chunks(spec, t.loop_buffer);
}

int nccl_tests_chunks(const CollectiveSpec &spec) {
  const CollectiveTraits &t = collective_traits(spec.kind());
  if (!t.standard)
    return std::max(spec.input_chunks(), spec.output_chunks());
  return buffer_chunks(spec, t.nccl_tests_buffer);
}

int64_t nccl_tests_size(const CollectiveSpec &spec, int64_t input_bytes) {
  return input_bytes * nccl_tests_chunks(spec) / std::max(1, spec.input_chunks());
}

int64_t input_bytes_for_nccl_tests_size(const CollectiveSpec &spec, int64_t size) {
  return std::max<int64_t>(1, size * spec.input_chunks() / std::max(1, nccl_tests_chunks(spec)));
}

Expected<CollectiveSpec> collective_for_program(const Program &p, std::optional<int> root) {
  const auto reading = parse_ir_collective_name(p.collective());
  const CollectiveTraits *traits = nullptr;
  // Only kinds the executor names itself are read from a program: `custom` says nothing.
  for (const CollectiveTraits &t : kTraits)
    if (reading && t.standard && t.executor_name == t.name && t.executor_name == reading->canonical)
      traits = &t;
  if (!traits)
    return fail({}, fmt::format("collective '{}' has no standard specification; give one with "
                                "--collective",
                                p.collective()));
  const int P = p.num_ranks();
  const int per_chunk_factor = scaled_chunks(traits->size_multiplier, P, 1);
  const int chunks = p.chunks_per_loop();
  if (chunks % per_chunk_factor != 0)
    return fail({}, fmt::format("nchunksperloop {} is not a multiple of {} ranks for {}", chunks, P,
                                p.collective()));
  return make_collective(traits->kind, P, std::max(1, chunks / per_chunk_factor),
                         traits->rooted ? std::optional<int>(root.value_or(0)) : std::nullopt);
}

int slots_addressable(const CollectiveSpec &spec, int declared, BufferKind buffer, bool in_place) {
  if (!in_place || buffer == BufferKind::Scratch)
    return declared;
  return std::max(declared, buffer_chunks(spec, buffer));
}

BufferKind in_place_home(const CollectiveSpec &spec, BufferKind buffer) {
  return in_place_slot(spec, RankId(0), buffer, 0).buffer;
}

AliasedSlot in_place_slot(const CollectiveSpec &spec, RankId rank, BufferKind buffer, int index) {
  switch (spec.in_place()) {
  case InPlaceKind::None:
    break;
  case InPlaceKind::Same:
    if (buffer == BufferKind::Output)
      return {BufferKind::Input, index};
    break;
  case InPlaceKind::InputInOutput:
    if (buffer == BufferKind::Input)
      return {BufferKind::Output, rank.value() * spec.input_chunks() + index};
    break;
  case InPlaceKind::OutputInInput:
    if (buffer == BufferKind::Output)
      return {BufferKind::Input, rank.value() * spec.output_chunks() + index};
    break;
  }
  return {buffer, index};
}

} // namespace syncoll
