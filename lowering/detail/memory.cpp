// Memory, aliasing and access tracking shared by the chunk DAG, the instruction DAG and fusion.
#include "lowering/detail/passes.h"
#include "model/collective_traits.h"

namespace syncoll::lowering::detail {

Memory Aliasing::at(int rank, const Buffer &buffer, int index) const {
  if (!in_place_ || buffer.kind == BufferKind::Scratch)
    return {rank, buffer.kind, buffer.scratch, index};
  const AliasedSlot home = in_place_slot(collective_, RankId(rank), buffer.kind, index);
  return {rank, home.buffer, {}, home.index};
}

std::vector<Memory> Aliasing::range(RankId rank, const Buffer &buffer, int index, int count) const {
  std::vector<Memory> out;
  for (int k = 0; k < count; ++k)
    out.push_back(at(rank.value(), buffer, index + k));
  return out;
}

void AccessTracker::access(int node, const std::vector<Memory> &reads,
                           const std::vector<Memory> &writes, std::set<DagEdge> &edges) {
  for (const Memory &m : reads) {
    Slot &s = slots_[m];
    if (s.writer >= 0 && s.writer != node)
      edges.insert({s.writer, node, DependencyKind::True});
  }
  for (const Memory &m : writes) {
    Slot &s = slots_[m];
    if (s.writer >= 0 && s.writer != node)
      edges.insert({s.writer, node, DependencyKind::False});
    for (int r : s.readers)
      if (r != node)
        edges.insert({r, node, DependencyKind::False});
  }
  for (const Memory &m : reads)
    slots_[m].readers.push_back(node);
  for (const Memory &m : writes) {
    Slot &s = slots_[m];
    s.writer = node;
    s.readers.clear();
  }
}

std::vector<Memory> reads_of(const Aliasing &alias, const DagInstruction &in) {
  const OpTraits &op = op_traits(in.op);
  std::vector<Memory> r;
  if (op.reads_src)
    r = alias.range(in.rank, in.src_buffer, in.src_index, in.count);
  if (op.reads_dst) {
    const auto d = alias.range(in.rank, in.dst_buffer, in.dst_index, in.count);
    r.insert(r.end(), d.begin(), d.end());
  }
  return r;
}

std::vector<Memory> writes_of(const Aliasing &alias, const DagInstruction &in) {
  if (!op_traits(in.op).writes_dst)
    return {};
  return alias.range(in.rank, in.dst_buffer, in.dst_index, in.count);
}

void recompute_edges(const Aliasing &alias, InstructionDag &dag) {
  std::set<DagEdge> edges;
  AccessTracker tracker;
  for (size_t i = 0; i < dag.instructions.size(); ++i) {
    const DagInstruction &in = dag.instructions[i];
    if (in.removed)
      continue;
    tracker.access(int(i), reads_of(alias, in), writes_of(alias, in), edges);
  }
  // The tracker is global over ranks, but memory carries its rank: every edge is same-rank.
  dag.edges.assign(edges.begin(), edges.end());
}

} // namespace syncoll::lowering::detail
