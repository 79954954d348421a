#include "verifier/detail/symbolic.h"

#include "model/collective_traits.h"

#include <algorithm>
#include <fmt/format.h>

namespace syncoll::verifier::detail {

Value combine(const Value &a, const Value &b) {
  if (!a.defined || !b.defined)
    return {};
  Value out{true, a.parts};
  out.parts.insert(out.parts.end(), b.parts.begin(), b.parts.end());
  std::sort(out.parts.begin(), out.parts.end());
  return out;
}

std::string describe_value(const Value &v, const CollectiveSpec &collective) {
  if (!v.defined)
    return "nothing defined";
  if (v.parts.size() == 1 && !collective.chunk(v.parts[0].chunk).reduced)
    return fmt::format("chunk {}", v.parts[0].chunk.value());
  std::string out;
  for (size_t i = 0; i < v.parts.size();) {
    size_t j = i;
    std::string ranks;
    while (j < v.parts.size() && v.parts[j].chunk == v.parts[i].chunk)
      ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", v.parts[j++].rank.value());
    out += fmt::format("{}chunk {} from ranks {{{}}}", out.empty() ? "" : " + ",
                       v.parts[i].chunk.value(), ranks);
    i = j;
  }
  return out;
}

SymbolicMemory::SymbolicMemory(const Program &program, const CollectiveSpec *collective,
                               bool in_place)
    : collective_(collective), in_place_(in_place && collective != nullptr) {
  constexpr size_t In = size_t(BufferKind::Input), Out = size_t(BufferKind::Output),
                   Scratch = size_t(BufferKind::Scratch);
  for (const RankProgram &rp : program.ranks()) {
    RankLayout l;
    l.addressable[In] = rp.input_chunks;
    l.addressable[Out] = rp.output_chunks;
    l.addressable[Scratch] = rp.scratch_chunks;
    // The home regions: out of place each buffer is its own; in place, every addressable slot
    // of either buffer lands in its home, which must hold the furthest one.
    std::array<int, 3> extent = l.addressable;
    if (in_place_) {
      extent[In] = extent[Out] = 0;
      for (BufferKind b : {BufferKind::Input, BufferKind::Output}) {
        const size_t bi = size_t(b);
        l.addressable[bi] = slots_addressable(*collective, l.addressable[bi], b, true);
        for (int k = 0; k < l.addressable[bi]; ++k) {
          const AliasedSlot home = in_place_slot(*collective, rp.rank, b, k);
          extent[size_t(home.buffer)] = std::max(extent[size_t(home.buffer)], home.index + 1);
        }
      }
    }
    l.base[Out] = 0;
    l.base[In] = extent[Out];
    l.base[Scratch] = extent[Out] + extent[In];
    cells_.emplace_back(size_t(l.base[Scratch] + extent[Scratch]));
    layout_.push_back(l);
  }
  if (!collective)
    return;
  for (int c = 0; c < collective->num_chunks(); ++c)
    for (const ChunkPlace &p : collective->chunk(ChunkId(c)).pre)
      if (p.rank.index() < layout_.size())
        write(p.rank, BufferKind::Input, p.slot,
              Value{true, {collective->initial_value(ChunkId(c), p.rank)}});
}

int SymbolicMemory::cell(RankId rank, BufferKind buffer, int slot) const {
  const RankLayout &l = layout_[rank.index()];
  if (slot < 0 || slot >= l.addressable[size_t(buffer)])
    return -1;
  if (!in_place_ || buffer == BufferKind::Scratch)
    return l.base[size_t(buffer)] + slot;
  const AliasedSlot home = in_place_slot(*collective_, rank, buffer, slot);
  return l.base[size_t(home.buffer)] + home.index;
}

Value SymbolicMemory::read(RankId rank, BufferKind buffer, int slot) const {
  int c = cell(rank, buffer, slot);
  return c < 0 ? Value{} : cells_[rank.index()][size_t(c)];
}

void SymbolicMemory::write(RankId rank, BufferKind buffer, int slot, Value v) {
  int c = cell(rank, buffer, slot);
  if (c >= 0)
    cells_[rank.index()][size_t(c)] = std::move(v);
}

} // namespace syncoll::verifier::detail
