#include "compose/plan_dot.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace syncoll::compose {

std::string plan_to_dot(const Factorized &plan, const Hierarchy &hierarchy, int ranks) {
  static constexpr std::string_view kLevelColors[] = {"firebrick", "darkgreen", "royalblue",
                                                      "darkorange", "purple"};
  const int top = hierarchy.factors.empty() ? ranks : ranks / hierarchy.factors[0];
  std::string out = "digraph plan {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n";
  for (int g = 0; g * top < ranks; ++g) {
    out += fmt::format("  subgraph cluster_{} {{\n    label=\"group {}\";\n", g, g);
    for (int r = g * top; r < std::min(ranks, (g + 1) * top); ++r)
      out += fmt::format("    r{} [label=\"rank {}\"];\n", r, r);
    out += "  }\n";
  }
  struct Edge {
    int hops = 0;
    int reductions = 0;
    std::set<int> stages;
  };
  std::map<std::tuple<int, int, int>, Edge> edges; // (level, from, to)
  for (const Hop &h : plan.hops) {
    if (h.from == h.to)
      continue;
    Edge &e = edges[{h.level, h.from, h.to}];
    ++e.hops;
    e.reductions += h.reduces ? 1 : 0;
    e.stages.insert(h.stage);
  }
  for (const auto &[key, e] : edges) {
    const auto [level, from, to] = key;
    std::string stages;
    for (int s : e.stages)
      stages += (stages.empty() ? "" : ",") + std::to_string(s);
    const std::string_view color =
        kLevelColors[size_t(std::max(0, level)) % std::size(kLevelColors)];
    const std::string transport =
        level >= 0 && size_t(level) < hierarchy.transports.size()
            ? fmt::format(" {}", transport_name(hierarchy.transports[size_t(level)]))
            : "";
    out += fmt::format("  r{} -> r{} [color={}, label=\"L{}{} x{}{} s{}\"];\n", from, to, color,
                       level, transport, e.hops, e.reductions ? " (+)" : "", stages);
  }
  out += "}\n";
  return out;
}

} // namespace syncoll::compose
