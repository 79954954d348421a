// Pass 2, the instruction DAG (GC3 section 4.1): a remote copy becomes a send and a receive, a
// remote reduce a send and a receive-reduce-copy whose local operand is the destination, a local
// operation a cpy or re. Each instruction carries its operation's placement hints.
#include "lowering/detail/passes.h"

namespace syncoll::lowering::detail {
namespace {

int add(InstructionDag &dag, DagInstruction in, int operation) {
  in.operations = {operation};
  dag.instructions.push_back(std::move(in));
  return int(dag.instructions.size()) - 1;
}

} // namespace

InstructionDag expand_instructions(const DslProgram &program, const Aliasing &alias) {
  InstructionDag dag;
  for (size_t i = 0; i < program.operations().size(); ++i) {
    const Operation &op = program.operations()[i];
    const CopyOptions &o = op.options;
    const int n = int(i);
    DagInstruction in;
    in.count = op.src.count;
    in.hints.channel = o.channel;
    in.hints.preferred_channel = o.preferred_channel;
    if (op.src.rank == op.dst.rank) {
      in.rank = op.src.rank;
      in.op = op.kind == OperationKind::Copy ? OpType::Copy : OpType::Reduce;
      in.src_buffer = op.src.buffer;
      in.src_index = op.src.index;
      in.dst_buffer = op.dst.buffer;
      in.dst_index = op.dst.index;
      in.hints.send_tb = o.send_tb ? o.send_tb : o.recv_tb;
      add(dag, in, n);
      continue;
    }
    DagInstruction s = in;
    s.rank = op.src.rank;
    s.op = OpType::Send;
    s.src_buffer = op.src.buffer;
    s.src_index = op.src.index;
    s.dst_buffer = op.dst.buffer; // the runtime ignores a send's destination: the peer's, for
    s.dst_index = op.dst.index;   // a reader of the XML
    s.send_peer = op.dst.rank;
    s.hints.send_tb = o.send_tb;
    const int sender = add(dag, s, n);
    DagInstruction r = in;
    r.rank = op.dst.rank;
    r.recv_peer = op.src.rank;
    r.dst_buffer = op.dst.buffer;
    r.dst_index = op.dst.index;
    if (op.kind == OperationKind::Copy) {
      r.op = OpType::Recv;
      r.src_buffer = op.src.buffer; // ignored by the runtime: the sender's location
      r.src_index = op.src.index;
    } else {
      // The runtime reads a receive-reduce's src as the local operand (docs/semantics.md);
      // msccl-tools writes the sender's location there.
      r.op = OpType::RecvReduceCopy;
      r.src_buffer = op.dst.buffer;
      r.src_index = op.dst.index;
    }
    r.hints.recv_tb = o.recv_tb;
    const int receiver = add(dag, r, n);
    dag.messages.emplace_back(sender, receiver);
  }
  recompute_edges(alias, dag);
  return dag;
}

} // namespace syncoll::lowering::detail
