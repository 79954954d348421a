// Collectives composed of multicasts, reductions and fences (HiCCL's primitives; docs/compose.md).
//
// A multicast copies a slice of one rank's buffer to the same-sized slice of each receiver; a
// reduction combines the same-sized slices of its contributors into one slice of its root.
// Primitives between two fences form an epoch and run concurrently: no two of them may write the
// same slot of a rank. A fence orders epochs by data: the part of a later primitive that reads a
// slot depends only on the primitive that wrote that slot. What the composition computes (its
// postcondition) is derived by running it symbolically; for the standard collectives it equals
// the standard specification, and for custom ones it is the specification.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/ids.h"
#include "model/program.h"

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace syncoll::compose {

/// `count` chunks of a rank's send (BufferKind::Input) or receive (BufferKind::Output) buffer.
struct Slice {
  BufferKind buffer = BufferKind::Input;
  int offset = 0;
  int count = 1;
  auto operator<=>(const Slice &) const = default;
};

enum class PrimitiveKind { Multicast, Reduction };

/// Multicast: `source` of `root` to `target` of every rank in `ranks`. Reduction: `source` of
/// every rank in `ranks`, combined, to `target` of `root`.
struct Primitive {
  PrimitiveKind kind = PrimitiveKind::Multicast;
  Slice source;
  RankId root;
  std::vector<RankId> ranks; ///< sorted, distinct
  Slice target;
  auto operator<=>(const Primitive &) const = default;
};

/// Who takes part besides the root: every rank, every rank but the root, or a list.
struct Members {
  enum class Which { All, Others, List } which = Which::All;
  std::vector<RankId> list;
  static Members all() { return {Which::All, {}}; }
  static Members others() { return {Which::Others, {}}; }
  static Members of(std::vector<RankId> ranks) { return {Which::List, std::move(ranks)}; }
};

class Composition {
public:
  /// `ranks` ranks, each with a send buffer of `send_chunks` and a receive buffer of
  /// `recv_chunks` chunks.
  [[nodiscard]] static Expected<Composition> create(int ranks, int send_chunks, int recv_chunks);

  /// Fails (bad input) for a rank or slice out of range, slices of different sizes, an empty
  /// member set, a reduction that reads the receive buffer it writes in the same epoch, or a
  /// write to a slot another primitive of the epoch writes.
  [[nodiscard]] Expected<void> multicast(Slice source, RankId root, const Members &receivers,
                                         Slice target);
  [[nodiscard]] Expected<void> reduction(Slice source, const Members &contributors, RankId root,
                                         Slice target);
  /// Ends the epoch; a fence after an empty epoch is ignored.
  void fence();

  /// The standard collective's composition (HiCCL's table: Allreduce as reductions of
  /// min(chunk factor, ranks) slices to roots spread over the ranks, a fence, and multicasts of the
  /// reduced slices). `chunk_factor` and `root` as make_collective takes them.
  [[nodiscard]] static Expected<Composition> standard(CollectiveKind kind, int ranks,
                                                      int chunk_factor,
                                                      std::optional<int> root = std::nullopt);

  int num_ranks() const { return ranks_; }
  int send_chunks() const { return send_chunks_; }
  int recv_chunks() const { return recv_chunks_; }
  /// Epochs in order; the last one may be empty.
  const std::vector<std::vector<Primitive>> &epochs() const { return epochs_; }

  /// The same composition with every chunk cut into `parts` (slices scaled by `parts`).
  Composition refined(int parts) const;

  /// What the composition computes, as a collective: a chunk per distinct value it leaves in a
  /// receive slot. Fails (bad input) when a primitive reads a slot nothing has written.
  [[nodiscard]] Expected<CollectiveSpec> specification(std::string name) const;

private:
  Composition(int ranks, int send_chunks, int recv_chunks)
      : ranks_(ranks), send_chunks_(send_chunks), recv_chunks_(recv_chunks), epochs_(1) {}
  [[nodiscard]] Expected<void> add(Primitive p);

  int ranks_;
  int send_chunks_;
  int recv_chunks_;
  std::vector<std::vector<Primitive>> epochs_;
  /// What the last epoch's primitives write and read, (rank, buffer, slot), kept as they are
  /// added so that checking a primitive against its epoch does not revisit the others.
  using Slot = std::tuple<int, BufferKind, int>;
  std::set<Slot> epoch_written_, epoch_read_;
};

/// Whether two collectives ask the same: every receive slot of every rank must end with the same
/// multiset of (rank, send slot) contributions, combined or not, and no other slot is asked for.
bool same_postcondition(const CollectiveSpec &a, const CollectiveSpec &b);

} // namespace syncoll::compose
