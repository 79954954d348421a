#include "viz/dot.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace syncoll::viz {

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

namespace {

std::string step_node(int rank, int tb, int step) {
  return fmt::format("g{}_t{}_s{}", rank, tb, step);
}

// How a program too large for one strip folds: a lane (thread block) longer than
// kStepsPerColumn steps goes on in a column beside it; a rank's lanes wrap into rows of
// kColumnsPerRow columns; ranks stand side by side until a row of ranks holds kColumnsAcross
// columns, then wrap under the ones before. A 637-step DGX-1 Allgather with 38 thread blocks per
// rank drew as one 32,766-px strip before. Folded, invisible edges stack each row under the one
// before and messages between ranks are left out: laid out, they pull the rows apart again
// (the same program folded with its messages was 11,771 px square and took 22 s).
constexpr int kStepsPerColumn = 32;
constexpr int kColumnsPerRow = 8;
constexpr int kColumnsAcross = 12;

struct ProgramFolds {
  std::vector<std::pair<std::string, std::string>> stacked; ///< (above, below) step nodes
  bool folded = false;
};

ProgramFolds fold_program(const Program &p) {
  struct Lane {
    std::string first, last; // step nodes: the lane's first, and the last of its first column
    int columns = 1;
    int height = 0;
  };
  struct Row {
    std::vector<Lane> lanes;
    int columns = 0;
  };
  ProgramFolds folds;
  // Each rank's rows of lanes.
  std::vector<std::vector<Row>> ranks;
  int widest = 1;
  for (const RankProgram &rp : p.ranks()) {
    std::vector<Row> rows(1);
    for (const ThreadBlock &tb : rp.thread_blocks) {
      if (tb.steps.empty())
        continue;
      const int n = int(tb.steps.size());
      const int columns = (n + kStepsPerColumn - 1) / kStepsPerColumn;
      const int height = std::min(n, kStepsPerColumn);
      if (rows.back().columns > 0 && rows.back().columns + columns > kColumnsPerRow)
        rows.emplace_back();
      rows.back().lanes.push_back({step_node(rp.rank.value(), tb.id.value(), 0),
                                   step_node(rp.rank.value(), tb.id.value(), height - 1), columns,
                                   height});
      rows.back().columns += columns;
      folds.folded |= columns > 1;
    }
    for (const Row &row : rows)
      widest = std::max(widest, row.columns);
    ranks.push_back(std::move(rows));
  }
  // A row goes under the tallest lane of the one above. (Lane under lane as well pulls the rows
  // apart sideways: the 637-step Allgather grew from 6,215 to 16,295 px wide.)
  const auto stack = [&](const Row &above, const Row &below) {
    if (above.lanes.empty() || below.lanes.empty())
      return;
    const Lane &tallest =
        *std::max_element(above.lanes.begin(), above.lanes.end(),
                          [](const Lane &a, const Lane &b) { return a.height < b.height; });
    for (const Lane &lane : below.lanes)
      folds.stacked.emplace_back(tallest.last, lane.first);
  };
  const size_t across = size_t(std::max(1, kColumnsAcross / widest));
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (size_t k = 1; k < ranks[r].size(); ++k)
      stack(ranks[r][k - 1], ranks[r][k]);
    if (r >= across)
      stack(ranks[r - across].back(), ranks[r].front());
  }
  folds.folded |= !folds.stacked.empty();
  return folds;
}

} // namespace

std::string algorithm_dot(const Algorithm &a) {
  const int P = a.target.ranks;
  std::string out = fmt::format("digraph {} {{\n", quote(a.name.empty() ? "algorithm" : a.name));
  out += fmt::format(
      "  graph [rankdir=LR, newrank=true, label={}, labelloc=t, fontname=\"Helvetica\", "
      "nodesep=0.15];\n",
      quote(fmt::format("{} ({} on {} ranks): {} steps, {} rounds", a.name, a.target.collective, P,
                        a.num_steps(), a.total_rounds())));
  out += "  node [shape=circle, fontname=\"Helvetica\", fontsize=10, width=0.35];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (int t = 0; t <= a.num_steps(); ++t) {
    const std::string label =
        t == 0 ? std::string("start")
               : fmt::format("after step {} ({} round{})", t, a.steps[size_t(t - 1)].rounds,
                             a.steps[size_t(t - 1)].rounds == 1 ? "" : "s");
    // A column per step boundary, its label on top and the ranks in the same order, top to
    // bottom, in every column: a chain of invisible edges in one rank orders them (inside
    // clusters, dot reorders them to cross fewer edges).
    out += fmt::format("  h{} [shape=plaintext, label={}];\n", t, quote(label));
    std::string chain = fmt::format("h{}", t);
    for (int r = 0; r < P; ++r) {
      out += fmt::format("  t{}_r{} [label=\"{}\"];\n", t, r, r);
      chain += fmt::format(" -> t{}_r{}", t, r);
    }
    out += fmt::format("  {{ rank=same; {} [style=invis]; }}\n", chain);
  }
  // Keep each rank on one row.
  for (int r = 0; r < P; ++r)
    for (int t = 0; t < a.num_steps(); ++t)
      out += fmt::format("  t{}_r{} -> t{}_r{} [style=invis];\n", t, r, t + 1, r);
  for (int t = 0; t < a.num_steps(); ++t) {
    std::map<std::tuple<int, int, bool>, std::vector<int>> edges;
    for (const Send &s : a.steps[size_t(t)].sends)
      edges[{s.src.value(), s.dst.value(), s.op == SendOp::Reduce}].push_back(s.chunk.value());
    for (const auto &[key, chunks] : edges) {
      const auto &[src, dst, reduce] = key;
      std::string label = reduce ? "+" : "";
      for (size_t i = 0; i < chunks.size(); ++i)
        label += (i ? "," : "") + std::to_string(chunks[i]);
      out += fmt::format("  t{}_r{} -> t{}_r{} [label={}{}];\n", t, src, t + 1, dst, quote(label),
                         reduce ? ", style=dashed, color=firebrick" : "");
    }
  }
  return out + "}\n";
}

std::string program_dot(const Program &p, const ProgramHighlight &highlight) {
  std::set<std::tuple<int, int, int>> marked;
  for (const verifier::StepRef &s : highlight.steps)
    marked.insert({s.rank.value(), s.tb.value(), s.step});
  std::string out = fmt::format("digraph {} {{\n", quote(p.name()));
  const ProgramFolds folds = fold_program(p);
  std::string title =
      highlight.title.empty()
          ? fmt::format("{}: {} on {} ranks, {} protocol, {} channel(s)", p.name(), p.collective(),
                        p.num_ranks(), protocol_name(p.protocol()), p.num_channels())
          : highlight.title;
  if (folds.folded)
    title += "\nfolded: lanes wrap into columns and rows; messages between ranks are not drawn "
             "(each lane names its peers)";
  out += fmt::format("  graph [label={}, labelloc=t, fontname=\"Helvetica\", rankdir=TB, "
                     "newrank=true];\n",
                     quote(title));
  out += "  node [shape=box, fontname=\"Helvetica\", fontsize=9, height=0.25];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  for (const RankProgram &rp : p.ranks()) {
    const int r = rp.rank.value();
    out += fmt::format("  subgraph cluster_rank{} {{\n    label={};\n", r,
                       quote(fmt::format("rank {}", r)));
    for (const ThreadBlock &tb : rp.thread_blocks) {
      const int t = tb.id.value();
      out +=
          fmt::format("    subgraph cluster_rank{}_tb{} {{\n      label={}; style=rounded; "
                      "color=gray60;\n",
                      r, t,
                      quote(fmt::format("tb {} send {} recv {} ch {}", t,
                                        tb.send_peer ? std::to_string(tb.send_peer->value()) : "-",
                                        tb.recv_peer ? std::to_string(tb.recv_peer->value()) : "-",
                                        tb.channel.value())));
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const Instruction &in = tb.steps[k];
        std::string label = fmt::format("{} {}", k, op_type_name(in.op));
        if (in.op != OpType::Nop)
          label += fmt::format(" {}[{}]->{}[{}]{}", buffer_kind_name(in.src.buffer), in.src.offset,
                               buffer_kind_name(in.dst.buffer), in.dst.offset,
                               in.count > 1 ? fmt::format(" x{}", in.count) : "");
        const bool red = marked.contains({r, t, int(k)});
        out += fmt::format("      {} [label={}{}];\n", step_node(r, t, int(k)), quote(label),
                           red ? ", color=red, fontcolor=red, penwidth=2" : "");
        // A lane longer than a column goes on in the next column, beside it.
        if (k > 0)
          out += fmt::format("      {} -> {} [color=gray70, arrowsize=0.5{}];\n",
                             step_node(r, t, int(k) - 1), step_node(r, t, int(k)),
                             k % kStepsPerColumn == 0 ? ", constraint=false" : "");
      }
      if (tb.steps.size() > size_t(kStepsPerColumn)) {
        std::string heads;
        for (size_t k = 0; k < tb.steps.size(); k += kStepsPerColumn)
          heads += (k == 0 ? "" : " -> ") + step_node(r, t, int(k));
        out += fmt::format("      {{ rank=same; {} [style=invis]; }}\n", heads);
      }
      out += "    }\n";
    }
    out += "  }\n";
  }
  for (const auto &[above, below] : folds.stacked)
    out += fmt::format("  {} -> {} [style=invis];\n", above, below);
  // Messages: the k-th send on (src, dst, channel) meets the k-th receive on it.
  std::map<std::tuple<int, int, int>, std::vector<std::string>> sends, recvs;
  for (const RankProgram &rp : p.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks)
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const OpType op = tb.steps[k].op;
        const int r = rp.rank.value();
        if (op_sends(op) && tb.send_peer)
          sends[{r, tb.send_peer->value(), tb.channel.value()}].push_back(
              step_node(r, tb.id.value(), int(k)));
        if (op_receives(op) && tb.recv_peer)
          recvs[{tb.recv_peer->value(), r, tb.channel.value()}].push_back(
              step_node(r, tb.id.value(), int(k)));
      }
  for (const auto &[conn, from] : folds.folded ? decltype(sends)() : sends) {
    const auto &to = recvs[conn];
    for (size_t k = 0; k < std::min(from.size(), to.size()); ++k)
      out += fmt::format("  {} -> {} [color=steelblue];\n", from[k], to[k]);
  }
  for (const RankProgram &rp : p.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks)
      for (size_t k = 0; k < tb.steps.size(); ++k)
        if (const auto &d = tb.steps[k].dependency)
          out += fmt::format("  {} -> {} [style=dashed, color=darkorange, constraint=false];\n",
                             step_node(rp.rank.value(), d->tb.value(), d->step.value()),
                             step_node(rp.rank.value(), tb.id.value(), int(k)));
  for (const auto &[a, b] : highlight.edges)
    out +=
        fmt::format("  {} -> {} [color=red, penwidth=2.5, fontcolor=red, label={}, "
                    "constraint=false];\n",
                    step_node(a.rank.value(), a.tb.value(), a.step),
                    step_node(b.rank.value(), b.tb.value(), b.step), quote(highlight.edge_label));
  return out + "}\n";
}

std::optional<std::string> counterexample_dot(const Program &program,
                                              const verifier::Report &report) {
  for (const verifier::Verdict &v : report.verdicts) {
    if (v.kind != verifier::VerdictKind::Violated)
      continue;
    ProgramHighlight h;
    if (const auto *d = std::get_if<verifier::DeadlockCounterexample>(&v.counterexample)) {
      h.title = fmt::format("{}: deadlock ({})", program.name(), d->regime);
      h.edge_label = "waits for";
      for (size_t i = 0; i < d->cycle.size(); ++i) {
        h.steps.push_back(d->cycle[i].waiter);
        if (d->cycle.size() > 1 && (i + 1 < d->cycle.size() || !d->lost_wakeup))
          h.edges.emplace_back(d->cycle[i].waiter, d->cycle[(i + 1) % d->cycle.size()].waiter);
      }
      return program_dot(program, h);
    }
    if (const auto *races =
            std::get_if<std::vector<verifier::RaceCounterexample>>(&v.counterexample);
        races && !races->empty()) {
      h.title = fmt::format("{}: data race ({}): {}", program.name(), races->front().mode,
                            races->front().why);
      h.edge_label = "races with";
      for (const auto &race : *races) {
        h.steps.push_back(race.first.step);
        h.steps.push_back(race.second.step);
        h.edges.emplace_back(race.first.step, race.second.step);
      }
      return program_dot(program, h);
    }
  }
  return std::nullopt;
}

} // namespace syncoll::viz
