// The chunk-oriented DSL (GC3, section 3; docs/architecture.md, "Lowering"): a program bound to a
// topology and a collective, written as copies and reductions of chunk references. Tracing it
// records the operations in program order and checks each reference as it is used: a slot that
// holds no value yet, a reference whose slots were overwritten since it was made (stale), a
// remote copy over a link the topology lacks, and a range past a buffer are errors, reported
// with the operation that made them.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "model/topology.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace syncoll::lowering {

/// The input buffer, the output buffer, or a named scratch buffer (all scratch buffers of a
/// rank are packed into the runtime's one scratch buffer when the program is lowered).
struct Buffer {
  BufferKind kind = BufferKind::Input;
  std::string scratch; ///< the name, for BufferKind::Scratch
  static Buffer input() { return {BufferKind::Input, {}}; }
  static Buffer output() { return {BufferKind::Output, {}}; }
  static Buffer named(std::string name) { return {BufferKind::Scratch, std::move(name)}; }
  auto operator<=>(const Buffer &) const = default;
};

std::string to_string(const Buffer &b);

/// `count` consecutive chunks of one buffer of one rank, as they were when the reference was
/// made (the write version of each slot), so that a later use can tell it went stale.
struct ChunkRef {
  RankId rank;
  Buffer buffer;
  int index = 0;
  int count = 1;
  std::vector<std::uint64_t> versions;
};

std::string to_string(const ChunkRef &r);

/// Where an operation runs (GC3, section 3.3): a channel, and the thread blocks of the sending and
/// receiving side, as hints the scheduler follows. Thread block numbers group instructions on a
/// rank; the emitted ids are renumbered contiguously.
struct CopyOptions {
  std::optional<int> channel;
  /// A channel to start from that the scheduler may still move (lowered algorithms spread the
  /// sends of one step over a link across channels this way, so they run in parallel).
  std::optional<int> preferred_channel;
  std::optional<int> send_tb;
  std::optional<int> recv_tb;
};

enum class OperationKind { Copy, Reduce };

/// One traced operation: `dst := src` (copy) or `dst := dst (+) src` (reduce).
struct Operation {
  OperationKind kind = OperationKind::Copy;
  ChunkRef src;
  ChunkRef dst;
  CopyOptions options;
};

struct DslOptions {
  /// Lower for the in-place call (input and output share memory as the collective's in-place
  /// map says); otherwise out of place.
  bool in_place = false;
  Protocol protocol = Protocol::Simple;
};

class DslProgram {
public:
  /// Fails when the collective and topology disagree on the rank count, or an in-place program
  /// is asked of a collective without an in-place form.
  [[nodiscard]] static Expected<DslProgram>
  create(std::string name, Topology topology, CollectiveSpec collective, DslOptions options = {});

  /// A reference to slots that hold values (the input's pre chunks at the start, and whatever
  /// an operation wrote since).
  [[nodiscard]] Expected<ChunkRef> chunk(int rank, const Buffer &buffer, int index,
                                         int count = 1) const;
  /// Copies `src` to `dst_rank`'s `buffer` at `index`; returns the reference to the copy.
  [[nodiscard]] Expected<ChunkRef> copy(const ChunkRef &src, int dst_rank, const Buffer &buffer,
                                        int index, const CopyOptions &options = {});
  /// `dst := dst (+) other`, on dst's rank; returns the new reference to dst.
  [[nodiscard]] Expected<ChunkRef> reduce(const ChunkRef &dst, const ChunkRef &other,
                                          const CopyOptions &options = {});

  const std::string &name() const { return name_; }
  const Topology &topology() const { return topology_; }
  const CollectiveSpec &collective() const { return collective_; }
  const DslOptions &options() const { return options_; }
  const std::vector<Operation> &operations() const { return operations_; }
  /// Chunks each named scratch buffer of each rank needs (one past the highest index written).
  const std::map<std::pair<int, std::string>, int> &scratch_sizes() const { return scratch_; }

private:
  DslProgram(std::string name, Topology topology, CollectiveSpec collective, DslOptions options)
      : name_(std::move(name)), topology_(std::move(topology)), collective_(std::move(collective)),
        options_(options) {}
  struct SlotKey {
    int rank;
    Buffer buffer;
    int index;
    auto operator<=>(const SlotKey &) const = default;
  };
  /// The slot that owns the memory of (rank, buffer, index) in this aliasing mode.
  SlotKey physical(int rank, const Buffer &buffer, int index) const;
  [[nodiscard]] Expected<void> check_range(int rank, const Buffer &buffer, int index,
                                           int count) const;
  [[nodiscard]] Expected<void> check_current(const ChunkRef &r, const std::string &role) const;
  std::string where() const;
  ChunkRef make_ref(int rank, const Buffer &buffer, int index, int count) const;
  void write(const ChunkRef &r);

  std::string name_;
  Topology topology_;
  CollectiveSpec collective_;
  DslOptions options_;
  std::vector<Operation> operations_;
  std::map<SlotKey, std::uint64_t> version_; ///< absent: holds no value
  std::map<std::pair<int, std::string>, int> scratch_;
};

} // namespace syncoll::lowering
