// What every executor of the device tables shares on the host: the seeded input pattern, the
// ranks' arenas it is written into, and the check of every output against the collective's
// reference. The CPU executor runs on these arenas; the CUDA executor uploads and downloads them.
#pragma once

#include "backend/executor.h"
#include "model/invariant.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <type_traits>
#include <vector>

namespace syncoll::backend::detail {

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Significand bits: integers up to 2^bits are exact.
template <class T> int exact_bits() {
  if constexpr (std::is_same_v<T, element::Half>)
    return 11;
  else if constexpr (std::is_same_v<T, element::BFloat16>)
    return 8;
  else
    return 24;
}

// Inputs whose every reduction is exact in the element type, so that any order of combining
// gives the reference's bits: integers small enough that a sum over every rank stays exact, for
// sums, max and min; -1, 1 and 2 for products (a product's magnitude only grows, and integer
// products wrap the same way in every order).
template <class T> T input_value(ReduceOp op, uint64_t seed, int rank, int ranks, size_t index) {
  const uint64_t h = mix(seed ^ (uint64_t(rank) << 40) ^ index);
  int v;
  if (op == ReduceOp::Prod) {
    v = h % 8 == 0 ? 2 : (h & 16) ? 1 : -1;
  } else {
    const int limit = std::clamp((1 << std::min(exact_bits<T>(), 20)) / (2 * ranks), 1, 100);
    v = int(h % uint64_t(2 * limit + 1)) - limit;
  }
  if constexpr (std::is_integral_v<T>)
    return T(v);
  else
    return element::narrow<T>(float(v));
}

template <class T> double printable(T v) {
  if constexpr (std::is_integral_v<T>)
    return double(v);
  else
    return double(element::widen(v));
}

/// Every rank's arena (units_per_rank chunks) with its input chunks filled; or, given `only`,
/// that rank's alone (a process of a multi-process run), whose outputs alone are then checked.
template <class T> class Arenas {
public:
  Arenas(const ExecutableProgram &e, const device::RunShape &shape, const RunOptions &o,
         std::optional<RankId> only = std::nullopt)
      : e_(e), chunk_(size_t(shape.chunk_elements)), only_(only) {
    const int ranks = e.program().num_ranks();
    arenas_.resize(size_t(ranks));
    for (int r = 0; r < ranks; ++r)
      if (!only || only->value() == r)
        arenas_[size_t(r)].assign(size_t(shape.units_per_rank) * chunk_, T{});
    initial_.resize(size_t(ranks));
    for (const RankProgram &rp : e.program().ranks()) {
      std::vector<T> &initial = initial_[rp.rank.index()];
      initial.resize(size_t(e.slots(rp.rank, BufferKind::Input)) * chunk_);
      for (size_t i = 0; i < initial.size(); ++i)
        initial[i] = input_value<T>(o.op, o.seed, rp.rank.value(), ranks, i);
    }
    same_value_at_every_pre_place();
    for (const RankProgram &rp : e.program().ranks()) {
      if (only && *only != rp.rank)
        continue;
      const std::vector<T> &initial = initial_[rp.rank.index()];
      for (int slot = 0; slot < e.slots(rp.rank, BufferKind::Input); ++slot)
        std::copy_n(initial.data() + size_t(slot) * chunk_, chunk_,
                    chunk_at(rp.rank, BufferKind::Input, slot));
    }
  }

  std::vector<T> &arena(RankId rank) { return arenas_[rank.index()]; }
  size_t chunk_elements() const { return chunk_; }

  T *chunk_at(RankId rank, BufferKind buffer, int slot) {
    const int32_t unit = e_.units()[size_t(e_.chunk_index(rank, buffer, slot))];
    return arenas_[rank.index()].data() + size_t(unit) * chunk_;
  }

  /// Every output element the collective defines against the host reference.
  void check(const ReduceOp op, RunReport &r) {
    const CollectiveSpec &spec = e_.collective();
    std::vector<T> expected(chunk_);
    for (int c = 0; c < spec.num_chunks(); ++c) {
      const ChunkSpec &chunk = spec.chunk(ChunkId(c));
      bool first = true;
      for (const Contribution &part : spec.expected_value(ChunkId(c))) {
        const auto pre = std::find_if(chunk.pre.begin(), chunk.pre.end(),
                                      [&](const ChunkPlace &p) { return p.rank == part.rank; });
        SYNCOLL_INVARIANT(pre != chunk.pre.end(), "a contribution from a rank without the chunk");
        const T *in = initial_[part.rank.index()].data() + size_t(pre->slot) * chunk_;
        for (size_t i = 0; i < chunk_; ++i)
          expected[i] = first ? in[i] : element::combine(op, expected[i], in[i]);
        first = false;
      }
      for (const ChunkPlace &post : chunk.post) {
        if (only_ && *only_ != post.rank)
          continue;
        const T *got = chunk_at(post.rank, BufferKind::Output, post.slot);
        for (size_t i = 0; i < chunk_; ++i) {
          ++r.elements_checked;
          if (std::memcmp(&got[i], &expected[i], sizeof(T)) == 0)
            continue;
          if (r.mismatches++ < 8)
            r.first_mismatches.push_back(fmt::format(
                "rank {} output chunk {} element {}: got {}, expected {}", post.rank.value(),
                post.slot, i, printable(got[i]), printable(expected[i])));
        }
      }
    }
  }

private:
  // A copied chunk is one value wherever it starts (a custom collective may give it several pre
  // places): every pre place takes the data of the one the reference reads.
  void same_value_at_every_pre_place() {
    const CollectiveSpec &spec = e_.collective();
    for (int c = 0; c < spec.num_chunks(); ++c) {
      const ChunkSpec &chunk = spec.chunk(ChunkId(c));
      if (chunk.reduced || chunk.pre.size() < 2)
        continue;
      const RankId source = spec.expected_value(ChunkId(c)).front().rank;
      const auto from = std::find_if(chunk.pre.begin(), chunk.pre.end(),
                                     [&](const ChunkPlace &p) { return p.rank == source; });
      SYNCOLL_INVARIANT(from != chunk.pre.end(), "a copied chunk's value from a rank without it");
      for (const ChunkPlace &to : chunk.pre)
        if (to != *from)
          std::copy_n(initial_[from->rank.index()].data() + size_t(from->slot) * chunk_, chunk_,
                      initial_[to.rank.index()].data() + size_t(to.slot) * chunk_);
    }
  }

  const ExecutableProgram &e_;
  size_t chunk_;
  std::optional<RankId> only_;
  std::vector<std::vector<T>> arenas_;
  std::vector<std::vector<T>> initial_; ///< per rank, by input slot
};

/// Calls f with a value of the element type `type` holds (f(int32_t{}), f(float{}), ...).
template <class F> decltype(auto) with_element_type(DataType type, F &&f) {
  switch (type) {
  case DataType::I32:
    return f(int32_t{});
  case DataType::F32:
    return f(float{});
  case DataType::F16:
    return f(element::Half{});
  case DataType::BF16:
    return f(element::BFloat16{});
  }
  SYNCOLL_UNREACHABLE("a data type without a row");
}

/// "where block b waits", for a report.
std::string describe_wait(const ExecutableProgram &e, int block, const device::BlockStatus &s);

/// The blocks that did not finish, with where they wait (of rank `only` alone, when given).
std::vector<BlockedBlock> unfinished_blocks(const ExecutableProgram &e,
                                            std::span<const device::BlockStatus> status,
                                            std::optional<RankId> only = std::nullopt);

} // namespace syncoll::backend::detail
