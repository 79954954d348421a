// Collective specifications: which chunk each rank holds before, and must hold after.
//
// A collective has G global chunks (SCCL's addresses, section 3.2). Each chunk has pre ranks
// that hold it at the start and post ranks that must hold it at the end. A *reduced* chunk is a
// combining one: every pre rank contributes its own value, and each post rank must end with the
// reduction of all of them (as a multiset, so a contribution counted twice is wrong). Chunks also
// have buffer places: the input slot at each pre rank and the output slot at each post rank, in
// units of chunks, so the same spec serves algorithms (chunks) and thread-block programs (slots).
#pragma once

#include "model/diagnostics.h"
#include "model/ids.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll {

class JsonView; // model/json_document.h

enum class CollectiveKind {
  Allgather,
  Alltoall,
  Broadcast,
  Gather,
  Scatter,
  Reduce,
  ReduceScatter,
  Allreduce,
  AllToNext,
  Custom,
};

/// How input and output alias when a collective is called in place (MSCCL's conventions,
/// docs/semantics.md, "Collectives").
enum class InPlaceKind {
  None,          ///< no in-place form
  Same,          ///< input slot k is output slot k (allreduce, alltoall, broadcast, reduce)
  InputInOutput, ///< input slot k is output slot rank*input_chunks + k (allgather, gather)
  OutputInInput, ///< output slot k is input slot rank*output_chunks + k (reducescatter, scatter)
};

/// A symbolic value: chunk `chunk` as contributed by rank `rank`. Non-reduced chunks have one
/// value, named after their first pre rank.
struct Contribution {
  ChunkId chunk;
  RankId rank;
  auto operator<=>(const Contribution &) const = default;
};

/// One place of a chunk: a rank and a slot index in that rank's input or output buffer.
struct ChunkPlace {
  RankId rank;
  int slot = 0;
  auto operator<=>(const ChunkPlace &) const = default;
};

struct ChunkSpec {
  std::vector<ChunkPlace> pre;  ///< Input slots that hold (or contribute) the chunk at the start.
  std::vector<ChunkPlace> post; ///< Output slots that must hold it at the end.
  bool reduced = false;
  friend bool operator==(const ChunkSpec &, const ChunkSpec &) = default;
};

struct CollectiveDraft {
  std::string name;
  CollectiveKind kind = CollectiveKind::Custom;
  int num_ranks = 0;
  int chunk_factor = 1;
  std::optional<int> root;
  int input_chunks = 0;  ///< Per-rank input buffer size in chunks.
  int output_chunks = 0; ///< Per-rank output buffer size in chunks.
  InPlaceKind in_place = InPlaceKind::None;
  std::vector<ChunkSpec> chunks;
};

class CollectiveSpec {
public:
  /// Validates ranks and slots in range, at least one pre place per chunk, no two chunks in the
  /// same input or output slot of a rank, and in-place maps that stay inside the buffers.
  /// Diagnostics carry JSON pointers into the draft's JSON form.
  [[nodiscard]] static Expected<CollectiveSpec> create(CollectiveDraft draft);

  const std::string &name() const { return d_.name; }
  CollectiveKind kind() const { return d_.kind; }
  int num_ranks() const { return d_.num_ranks; }
  int chunk_factor() const { return d_.chunk_factor; }
  std::optional<RankId> root() const;
  int num_chunks() const { return static_cast<int>(d_.chunks.size()); }
  const ChunkSpec &chunk(ChunkId id) const;
  int input_chunks() const { return d_.input_chunks; }
  int output_chunks() const { return d_.output_chunks; }
  InPlaceKind in_place() const { return d_.in_place; }
  bool is_combining() const;
  bool is_pre(ChunkId chunk, RankId rank) const;
  bool is_post(ChunkId chunk, RankId rank) const;

  /// The value a pre rank starts with for a chunk: its own contribution when the chunk is
  /// reduced, the chunk's single value otherwise.
  Contribution initial_value(ChunkId chunk, RankId rank) const;
  /// The multiset (sorted) a post rank must end with for a chunk.
  std::vector<Contribution> expected_value(ChunkId chunk) const;
  const CollectiveDraft &draft() const { return d_; }

  friend bool operator==(const CollectiveSpec &a, const CollectiveSpec &b);

private:
  CollectiveSpec() = default;
  CollectiveDraft d_;
};

std::string_view collective_kind_name(CollectiveKind kind);
std::optional<CollectiveKind> parse_collective_kind(std::string_view name);
std::string_view in_place_kind_name(InPlaceKind kind);

/// The most chunk copies (ranks^2 x chunks per rank buffer) a collective, and an algorithm over
/// it, is built for: 2^24 places of chunks at ranks, the synthesizers' and checkers' memory. An
/// Allgather of 1,024 ranks holds 16 pieces per rank; an Allreduce (ranks x pieces chunks per
/// rank) of 256 ranks holds 1.
inline constexpr int64_t kMaxChunkCopies = int64_t(1) << 24;
/// Fails, saying so, where ranks^2 x `chunk_factor` passes kMaxChunkCopies.
[[nodiscard]] Expected<void> fits_collective_model(CollectiveKind kind, int ranks,
                                                   int chunk_factor);

/// Builds a standard collective (SCCL Tables 1-2 for the non-combining ones; combining ones by
/// their usual definition; AllToNext from GC3, section 7.4). `chunk_factor` splits each rank's
/// buffer into that many chunks. Rooted collectives (broadcast, gather, scatter, reduce) need
/// `root`; the others reject it.
[[nodiscard]] Expected<CollectiveSpec> make_collective(CollectiveKind kind, int num_ranks,
                                                       int chunk_factor,
                                                       std::optional<int> root = std::nullopt);
/// The same by name ("allgather", "reduce_scatter", ...; case and '_' do not matter).
[[nodiscard]] Expected<CollectiveSpec> make_collective(std::string_view name, int num_ranks,
                                                       int chunk_factor,
                                                       std::optional<int> root = std::nullopt);

/// Custom collective JSON (docs/formats.md).
[[nodiscard]] Expected<CollectiveSpec> collective_from_json(const JsonView &root);
[[nodiscard]] Expected<CollectiveSpec> read_collective_file(const std::string &path);
nlohmann::ordered_json collective_to_json(const CollectiveSpec &spec);

} // namespace syncoll
