// Pass 1, the chunk DAG (GC3 section 4.1): the traced operations, with an edge wherever two of
// them touch the same memory of a rank.
#include "lowering/detail/passes.h"

namespace syncoll::lowering::detail {

ChunkDag trace_chunk_dag(const DslProgram &program, const Aliasing &alias) {
  ChunkDag dag;
  dag.operations = program.operations();
  AccessTracker tracker;
  std::set<DagEdge> edges;
  for (size_t i = 0; i < dag.operations.size(); ++i) {
    const Operation &op = dag.operations[i];
    std::vector<Memory> reads = alias.range(op.src.rank, op.src.buffer, op.src.index, op.src.count);
    const std::vector<Memory> writes =
        alias.range(op.dst.rank, op.dst.buffer, op.dst.index, op.dst.count);
    if (op.kind == OperationKind::Reduce)
      reads.insert(reads.end(), writes.begin(), writes.end());
    tracker.access(int(i), reads, writes, edges);
  }
  dag.edges.assign(edges.begin(), edges.end());
  return dag;
}

} // namespace syncoll::lowering::detail
