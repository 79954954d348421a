#include "verifier/detail/symbolic.h"

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
                               bool in_place) {
  for (const RankProgram &rp : program.ranks()) {
    RankLayout l{rp.input_chunks, rp.output_chunks, rp.scratch_chunks, {}};
    // Cells: outputs first, then inputs that alias nothing, then scratch.
    int next = l.outputs;
    for (int k = 0; k < l.inputs; ++k) {
      std::optional<int> alias;
      if (in_place && collective)
        alias = collective->aliased_output_slot(rp.rank, k);
      l.input_cell.push_back(alias && *alias < l.outputs ? *alias : next++);
    }
    cells_.emplace_back(size_t(next + l.scratch));
    layout_.push_back(std::move(l));
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
  switch (buffer) {
  case BufferKind::Output:
    return slot >= 0 && slot < l.outputs ? slot : -1;
  case BufferKind::Input:
    return slot >= 0 && slot < l.inputs ? l.input_cell[size_t(slot)] : -1;
  case BufferKind::Scratch:
    return slot >= 0 && slot < l.scratch
               ? static_cast<int>(cells_[rank.index()].size()) - l.scratch + slot
               : -1;
  }
  return -1;
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
