#include "viz/plan_dot.h"

#include "viz/dot.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace syncoll::viz {
namespace {

using mscclpp::PlanStepRef;

// A node id for an operation, or for a GPU's user.
std::string node_id(const PlanStepRef &s) {
  std::string op = s.op;
  std::replace_if(
      op.begin(), op.end(), [](char c) { return c == ' ' || c == '.'; }, '_');
  return s.tb < 0 ? fmt::format("g{}_user_{}", s.gpu, op)
                  : fmt::format("g{}_t{}_{}", s.gpu, s.tb, op);
}

} // namespace

std::optional<std::string> plan_counterexample_dot(const mscclpp::ExecutionPlan &plan,
                                                   const mscclpp::PlanReport &report) {
  const auto violated =
      std::find_if(report.verdicts.begin(), report.verdicts.end(), [](const auto &v) {
        return v.kind == verifier::VerdictKind::Violated && !v.steps.empty();
      });
  if (violated == report.verdicts.end())
    return std::nullopt;
  const mscclpp::PlanVerdict &v = *violated;
  std::set<std::pair<int, int>> lanes; // (GPU, thread block) drawn
  for (const PlanStepRef &s : v.steps)
    lanes.insert({s.gpu, s.tb});
  auto marked = [&](const PlanStepRef &s) {
    return std::find(v.steps.begin(), v.steps.end(), s) != v.steps.end();
  };
  std::string out = fmt::format("digraph {} {{\n", quote(plan.name.empty() ? "plan" : plan.name));
  out += fmt::format(
      "  label={};\n  labelloc=t;\n  rankdir=TB;\n  node [shape=box, "
      "fontsize=10];\n",
      quote(fmt::format("{}: {} {}", plan.name, verifier::property_name(v.property), v.summary)));
  for (const mscclpp::PlanGpu &g : plan.gpus) {
    const auto first = lanes.lower_bound({g.id, -1});
    if (first == lanes.end() || first->first != g.id)
      continue;
    out += fmt::format("  subgraph cluster_gpu{} {{\n    label={};\n", g.id,
                       quote(fmt::format("GPU {}", g.id)));
    for (const char *when : {"before", "after"}) {
      const PlanStepRef user{g.id, -1, when};
      if (marked(user))
        out += fmt::format("    {} [label={}, shape=ellipse, color=red, fontcolor=red];\n",
                           node_id(user),
                           quote(fmt::format("GPU {}'s user {} the kernel", g.id, when)));
    }
    for (const mscclpp::PlanThreadBlock &tb : g.threadblocks) {
      if (!lanes.count({g.id, tb.id}))
        continue;
      out += fmt::format("    subgraph cluster_gpu{}_tb{} {{\n      label={};\n", g.id, tb.id,
                         quote(fmt::format("tb {}", tb.id)));
      std::vector<std::pair<PlanStepRef, const mscclpp::PlanOp *>> order;
      for (size_t k = 0; k < tb.ops.size(); ++k) {
        order.push_back({{g.id, tb.id, fmt::format("op {}", k)}, &tb.ops[k]});
        for (size_t j = 0; j < tb.ops[k].ops.size(); ++j)
          order.push_back({{g.id, tb.id, fmt::format("op {}.{}", k, j)}, &tb.ops[k].ops[j]});
      }
      for (const auto &[s, op] : order)
        out += fmt::format("      {} [label={}{}];\n", node_id(s),
                           quote(fmt::format("{}: {}", s.op, mscclpp::op_traits(op->kind).name)),
                           marked(s) ? ", color=red, fontcolor=red, penwidth=2" : "");
      for (size_t i = 1; i < order.size(); ++i)
        out += fmt::format("      {} -> {} [color=gray];\n", node_id(order[i - 1].first),
                           node_id(order[i].first));
      out += "    }\n";
    }
    out += "  }\n";
  }
  for (const auto &[a, b] : v.races)
    out += fmt::format("  {} -> {} [dir=none, color=red, penwidth=2, constraint=false, "
                       "label=\"races with\", fontcolor=red];\n",
                       node_id(v.steps[a]), node_id(v.steps[b]));
  out += "}\n";
  return out;
}

} // namespace syncoll::viz
