#include "lowering/dag_dot.h"

#include <fmt/format.h>
#include <map>

namespace syncoll::lowering {
namespace {

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string place(RankId rank, const Buffer &b, int index, int count) {
  const std::string buffer = b.kind == BufferKind::Input    ? "i"
                             : b.kind == BufferKind::Output ? "o"
                                                            : b.scratch;
  return count == 1 ? fmt::format("r{} {}[{}]", rank.value(), buffer, index)
                    : fmt::format("r{} {}[{}..{}]", rank.value(), buffer, index, index + count - 1);
}

std::string header(const std::string &name, const std::string &kind) {
  return fmt::format("digraph {} {{\n  graph [label={}, labelloc=t, fontname=\"Helvetica\"];\n"
                     "  node [shape=box, fontname=\"Helvetica\", fontsize=9];\n",
                     quote(name), quote(name + ": " + kind));
}

} // namespace

std::string chunk_dag_dot(const ChunkDag &dag, const std::string &name) {
  std::string out = header(name, "chunk DAG");
  for (size_t i = 0; i < dag.operations.size(); ++i) {
    const Operation &op = dag.operations[i];
    out += fmt::format(
        "  op{} [label={}];\n", i,
        quote(fmt::format("{} {}: {} -> {}", i, op.kind == OperationKind::Copy ? "copy" : "reduce",
                          place(op.src.rank, op.src.buffer, op.src.index, op.src.count),
                          place(op.dst.rank, op.dst.buffer, op.dst.index, op.dst.count))));
  }
  for (const DagEdge &e : dag.edges)
    out += fmt::format("  op{} -> op{}{};\n", e.from, e.to,
                       e.kind == DependencyKind::True ? "" : " [style=dashed, color=gray50]");
  return out + "}\n";
}

std::string instruction_dag_dot(const InstructionDag &dag, const std::string &name) {
  std::string out = header(name, "instruction DAG after fusion");
  std::map<int, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < dag.instructions.size(); ++i)
    if (!dag.instructions[i].removed)
      by_rank[dag.instructions[i].rank.value()].push_back(i);
  for (const auto &[rank, ids] : by_rank) {
    out += fmt::format("  subgraph cluster_rank{} {{\n    label={};\n", rank,
                       quote(fmt::format("rank {}", rank)));
    for (size_t i : ids) {
      const DagInstruction &in = dag.instructions[i];
      out +=
          fmt::format("    in{} [label={}];\n", i,
                      quote(fmt::format(
                          "{} {} ({}) tb {} ch {}", op_type_name(in.op),
                          place(in.rank, in.dst_buffer, in.dst_index, in.count),
                          in.send_peer && in.recv_peer
                              ? fmt::format("{}->{}", in.recv_peer->value(), in.send_peer->value())
                          : in.send_peer ? fmt::format("to {}", in.send_peer->value())
                          : in.recv_peer ? fmt::format("from {}", in.recv_peer->value())
                                         : std::string("local"),
                          in.thread_block, in.channel)));
    }
    out += "  }\n";
  }
  for (const DagEdge &e : dag.edges)
    out += fmt::format("  in{} -> in{}{};\n", e.from, e.to,
                       e.kind == DependencyKind::True ? "" : " [style=dashed, color=gray50]");
  for (const auto &[a, b] : dag.messages)
    out += fmt::format("  in{} -> in{} [color=steelblue, penwidth=1.5];\n", a, b);
  return out + "}\n";
}

} // namespace syncoll::lowering
