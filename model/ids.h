// Strong ids and unit types shared by every layer.
//
// Ids are indices into the vectors of a Topology, CollectiveSpec or Program; wrapping them keeps a
// rank from being passed where a chunk is meant.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>

namespace syncoll {

template <class Tag> class StrongId {
public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(int32_t value) : value_(value) {}
  constexpr int32_t value() const { return value_; }
  /// The id as a container index; ids are never negative once validated.
  constexpr size_t index() const { return static_cast<size_t>(value_); }
  constexpr auto operator<=>(const StrongId &) const = default;
  friend std::ostream &operator<<(std::ostream &os, StrongId id) { return os << id.value_; }

private:
  int32_t value_ = 0;
};

struct RankTag {};
struct ChunkTag {};
struct LinkTag {};
struct TbTag {};
struct ChannelTag {};
struct StepTag {};
struct RelationTag {};

using RankId = StrongId<RankTag>;
using ChunkId = StrongId<ChunkTag>;
using LinkId = StrongId<LinkTag>;
using TbId = StrongId<TbTag>;
using ChannelId = StrongId<ChannelTag>;
using StepIndex = StrongId<StepTag>;
using RelationId = StrongId<RelationTag>;

/// Largest rank count syncoll accepts; far above any machine it models, small enough that a
/// typo such as 10000000 is caught before memory is spent.
inline constexpr int kMaxRanks = 1 << 16;

/// Time in nanoseconds. Topology latencies are given with sub-nanosecond precision in some
/// sources (NCCL's per-hop latencies are fractions of a microsecond), so this is a double; the
/// simulator converts to integer picoseconds.
struct Nanoseconds {
  double count = 0;
  constexpr auto operator<=>(const Nanoseconds &) const = default;
};

/// Bandwidth in bytes per nanosecond, which is numerically GB/s (10^9 bytes per second).
struct BytesPerNs {
  double value = 0;
  constexpr auto operator<=>(const BytesPerNs &) const = default;
};

/// A size in bytes.
struct Bytes {
  int64_t count = 0;
  constexpr auto operator<=>(const Bytes &) const = default;
};

} // namespace syncoll

template <class Tag> struct std::hash<syncoll::StrongId<Tag>> {
  size_t operator()(syncoll::StrongId<Tag> id) const noexcept {
    return std::hash<int32_t>{}(id.value());
  }
};
