// Pass 6, cross-thread-block dependencies (GC3 section 5.2): each instruction waits for the last
// step of every other thread block of its rank that it depends on, unless an earlier step of its
// own thread block already waited for as much; more than one wait puts nops in front.
#include "lowering/detail/passes.h"

#include <algorithm>

namespace syncoll::lowering::detail {

Dependencies insert_dependencies(const InstructionDag &dag, const ThreadBlockPlans &plans) {
  const size_t n = dag.instructions.size();
  std::vector<std::vector<int>> preds(n);
  for (const DagEdge &e : dag.edges)
    preds[size_t(e.to)].push_back(e.from);
  std::vector<int> position(n, -1); // within its thread block
  for (const auto &rank_tbs : plans)
    for (const ThreadBlockPlan &t : rank_tbs)
      for (size_t k = 0; k < t.steps.size(); ++k)
        position[size_t(t.steps[k])] = int(k);
  Dependencies d;
  d.waits.resize(n);
  for (const auto &rank_tbs : plans)
    for (const ThreadBlockPlan &t : rank_tbs) {
      std::map<int, int> known; // other tb -> highest position already waited for
      for (int i : t.steps) {
        std::map<int, int> need; // tb -> instruction
        for (int p : preds[size_t(i)]) {
          const int ptb = dag.instructions[size_t(p)].thread_block;
          if (ptb == dag.instructions[size_t(i)].thread_block)
            continue;
          auto it = need.find(ptb);
          if (it == need.end() || position[size_t(it->second)] < position[size_t(p)])
            need[ptb] = p;
        }
        for (const auto &[ptb, p] : need) {
          auto k = known.find(ptb);
          if (k != known.end() && k->second >= position[size_t(p)])
            continue;
          known[ptb] = position[size_t(p)];
          d.waits[size_t(i)].emplace_back(ptb, p);
        }
      }
    }
  // Final step indices: nops before an instruction with several waits.
  d.final_index.assign(n, -1);
  for (const auto &rank_tbs : plans)
    for (const ThreadBlockPlan &t : rank_tbs) {
      int at = 0;
      for (int i : t.steps) {
        at += std::max<int>(0, int(d.waits[size_t(i)].size()) - 1);
        d.final_index[size_t(i)] = at++;
        for (const auto &w : d.waits[size_t(i)])
          d.depended_on.insert(w.second);
      }
    }
  return d;
}

} // namespace syncoll::lowering::detail
