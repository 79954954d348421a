#include "viz/dot.h"

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

std::string rank_node(int r) {
  return fmt::format("r{}", r);
}

std::string step_node(int rank, int tb, int step) {
  return fmt::format("g{}_t{}_s{}", rank, tb, step);
}

} // namespace

std::string topology_dot(const Topology &t) {
  std::string out = fmt::format("digraph {} {{\n", quote(t.name()));
  out += fmt::format("  graph [label={}, labelloc=t, fontname=\"Helvetica\"];\n",
                     quote(t.num_switches() > 0
                               ? fmt::format("{}: {} ranks, {} switches, {} links", t.name(),
                                             t.num_ranks(), t.num_switches(), t.links().size())
                               : fmt::format("{}: {} ranks, {} links", t.name(), t.num_ranks(),
                                             t.links().size())));
  out += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  const Hierarchy &h = t.hierarchy();
  if (h.levels.size() >= 2) {
    const int inner = t.num_ranks() / std::max(1, h.levels.front().size);
    for (int n = 0; n < h.levels.front().size; ++n) {
      out += fmt::format("  subgraph cluster_{}{} {{\n    label={};\n", h.levels.front().name, n,
                         quote(fmt::format("{} {}", h.levels.front().name, n)));
      for (int g = 0; g < inner; ++g)
        out +=
            fmt::format("    {} [label={}];\n", rank_node(n * inner + g),
                        quote(fmt::format("rank {}\\n{} {}", n * inner + g, h.levels[1].name, g)));
      out += "  }\n";
    }
  } else {
    for (int r = 0; r < t.num_ranks(); ++r)
      out += fmt::format("  {} [label={}];\n", rank_node(r), quote(fmt::format("rank {}", r)));
  }
  // Switches are vertices numbered after the ranks; drawn as ellipses under their names.
  for (int s = 0; s < t.num_switches(); ++s)
    out += fmt::format("  {} [shape=ellipse, style=filled, fillcolor=gray90, label={}];\n",
                       rank_node(t.num_ranks() + s), quote(t.switches()[size_t(s)]));
  for (const Link &l : t.links()) {
    const int a = l.src.value(), b = l.dst.value();
    const int back = t.capacity(l.dst, l.src);
    if (back == l.capacity && b < a)
      continue; // drawn with its reverse
    std::string attrs;
    if (back == l.capacity)
      attrs += "dir=both";
    if (l.capacity > 1)
      attrs += fmt::format("{}label=\"x{}\", penwidth={}", attrs.empty() ? "" : ", ", l.capacity,
                           1 + l.capacity);
    out += fmt::format("  {} -> {}{};\n", rank_node(a), rank_node(b),
                       attrs.empty() ? "" : " [" + attrs + "]");
  }
  for (size_t i = 0; i < t.relations().size(); ++i) {
    const BandwidthRelation &rel = t.relations()[i];
    // What the relation carries at once: its capacity in units of its slowest link's rate per
    // unit (a NIC's rate, a switch port's), so a what-if NIC rate shows in the drawing.
    double per_unit = 0;
    for (LinkId id : rel.links) {
      const Link &l = t.link(id);
      const double unit = l.bandwidth.value / std::max(1, l.capacity);
      per_unit = per_unit == 0 ? unit : std::min(per_unit, unit);
    }
    out += fmt::format("  subgraph cluster_relation{} {{\n    label={}; style=dashed; "
                       "color=gray50;\n    rel{} [shape=octagon, label={}];\n  }}\n",
                       i, quote(fmt::format("relation {}", rel.name)), i,
                       quote(fmt::format("{}\\ncap {}/round, {:.4g} GB/s", rel.name, rel.capacity,
                                         per_unit * rel.capacity)));
    std::set<int> ranks;
    for (LinkId id : rel.links) {
      ranks.insert(t.link(id).src.value());
      ranks.insert(t.link(id).dst.value());
    }
    for (int r : ranks)
      out += fmt::format("  rel{} -> {} [style=dashed, color=gray50, arrowhead=none];\n", i,
                         rank_node(r));
  }
  return out + "}\n";
}

std::string algorithm_dot(const Algorithm &a) {
  const int P = a.target.ranks;
  std::string out = fmt::format("digraph {} {{\n", quote(a.name.empty() ? "algorithm" : a.name));
  out += fmt::format("  graph [rankdir=LR, label={}, labelloc=t, fontname=\"Helvetica\", "
                     "nodesep=0.15];\n",
                     quote(fmt::format("{} ({} on {} ranks): {} steps, {} rounds", a.name,
                                       a.target.collective, P, a.num_steps(), a.total_rounds())));
  out += "  node [shape=circle, fontname=\"Helvetica\", fontsize=10, width=0.35];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (int t = 0; t <= a.num_steps(); ++t) {
    const std::string label =
        t == 0 ? std::string("start")
               : fmt::format("after step {} ({} round{})", t, a.steps[size_t(t - 1)].rounds,
                             a.steps[size_t(t - 1)].rounds == 1 ? "" : "s");
    out += fmt::format("  subgraph cluster_t{} {{\n    label={}; style=dotted;\n", t, quote(label));
    for (int r = 0; r < P; ++r)
      out += fmt::format("    t{}_r{} [label=\"{}\"];\n", t, r, r);
    out += "  }\n";
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
  const std::string title =
      highlight.title.empty()
          ? fmt::format("{}: {} on {} ranks, {} protocol, {} channel(s)", p.name(), p.collective(),
                        p.num_ranks(), protocol_name(p.protocol()), p.num_channels())
          : highlight.title;
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
        if (k > 0)
          out += fmt::format("      {} -> {} [color=gray70, arrowsize=0.5];\n",
                             step_node(r, t, int(k) - 1), step_node(r, t, int(k)));
      }
      out += "    }\n";
    }
    out += "  }\n";
  }
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
  for (const auto &[conn, from] : sends) {
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
