// Symbolic buffer contents: every (rank, input chunk) is a distinct symbol and a reduction is a
// multiset of them, so a contribution counted twice or missing is visible (as msccl-tools'
// ReduceChunk does, microsoft/mscclpp#198: data initialised with the rank id hides wrong-shard
// bugs).
#pragma once

#include "model/collective.h"
#include "model/program.h"

#include <array>
#include <string>
#include <vector>

namespace syncoll::verifier::detail {

struct Value {
  bool defined = false;
  std::vector<Contribution> parts; ///< sorted
  friend bool operator==(const Value &, const Value &) = default;
};

/// a ⊕ b; anything combined with an undefined value is undefined.
Value combine(const Value &a, const Value &b);
std::string describe_value(const Value &v, const CollectiveSpec &collective);

/// Per-rank cells after aliasing: in place, a slot of the input and a slot of the output that
/// the collective's convention binds together are one cell (model's in_place_slot), and a buffer
/// declared as 0 chunks is still addressable through the alias (slots_addressable).
class SymbolicMemory {
public:
  /// Without a collective there is no aliasing and every input starts undefined.
  SymbolicMemory(const Program &program, const CollectiveSpec *collective, bool in_place);

  /// The cell of a buffer slot, or -1 for a slot the runtime does not define.
  int cell(RankId rank, BufferKind buffer, int slot) const;
  Value read(RankId rank, BufferKind buffer, int slot) const;
  void write(RankId rank, BufferKind buffer, int slot, Value v);

private:
  struct RankLayout {
    std::array<int, 3> addressable{}; ///< per BufferKind: slots a step may name
    std::array<int, 3> base{};        ///< per BufferKind: first cell of its home region
  };
  const CollectiveSpec *collective_ = nullptr;
  bool in_place_ = false;
  std::vector<RankLayout> layout_;
  std::vector<std::vector<Value>> cells_;
};

} // namespace syncoll::verifier::detail
