#include "verifier/detail/races.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>

namespace syncoll::verifier::detail {
namespace {

struct StepAccess {
  BufferKind buffer;
  int offset;
  int count;
  bool writes;
  bool reads;
};

// What a step reads and writes on its own rank (docs/semantics.md, "Step types").
std::vector<StepAccess> accesses_of(const Instruction &in) {
  std::vector<StepAccess> out;
  auto src = [&] { out.push_back({in.src.buffer, in.src.offset, in.count, false, true}); };
  auto dst = [&](bool also_reads) {
    out.push_back({in.dst.buffer, in.dst.offset, in.count, true, also_reads});
  };
  const OpTraits &op = op_traits(in.op);
  if (op.reads_src)
    src();
  if (op.writes_dst || op.reads_dst)
    dst(op.reads_dst);
  return out;
}

// Happens-before over iteration 0's steps with vector clocks.
class HappensBefore {
public:
  HappensBefore(const Program &p, const ConnectionMap &cm, bool messages) {
    // Nodes: steps; dimension of a node: its global thread block.
    for (const RankProgram &rp : p.ranks())
      for (const ThreadBlock &tb : rp.thread_blocks) {
        int g = cm.tb_base[rp.rank.index()] + tb.id.value();
        base_.resize(size_t(g) + 2, 0);
        base_[size_t(g) + 1] = base_[size_t(g)] + int(tb.steps.size());
      }
    // Strict mode has edges only inside a rank, so a clock needs one entry per thread block of
    // the rank; message edges cross ranks and need one per thread block of the program.
    per_rank_ = !messages;
    dim_of_tb_.assign(size_t(cm.num_tbs), 0);
    dims_ = messages ? cm.num_tbs : 0;
    for (const RankProgram &rp : p.ranks())
      for (const ThreadBlock &tb : rp.thread_blocks) {
        const int g = cm.tb_base[rp.rank.index()] + tb.id.value();
        dim_of_tb_[size_t(g)] = messages ? g : tb.id.value();
        if (!messages)
          dims_ = std::max(dims_, tb.id.value() + 1);
      }
    const int n = base_.empty() ? 0 : base_.back();
    preds_.resize(size_t(n));
    tb_of_node_.resize(size_t(n));
    for (const RankProgram &rp : p.ranks())
      for (const ThreadBlock &tb : rp.thread_blocks) {
        const int g = cm.tb_base[rp.rank.index()] + tb.id.value();
        for (size_t k = 0; k < tb.steps.size(); ++k) {
          const int node = base_[size_t(g)] + int(k);
          tb_of_node_[size_t(node)] = g;
          if (k > 0)
            preds_[size_t(node)].push_back(node - 1);
          const auto &dep = tb.steps[k].dependency;
          if (!dep || dep->tb.index() >= rp.thread_blocks.size())
            continue;
          const ThreadBlock &target = rp.thread_blocks[dep->tb.index()];
          const int tg = cm.tb_base[rp.rank.index()] + dep->tb.value();
          // Released by the first published step at or after deps in this iteration, or else by
          // a published step of the next iteration, which comes after all of this one.
          int source = -1;
          for (size_t j = dep->step.index(); j < target.steps.size() && source < 0; ++j)
            if (target.steps[j].has_dep)
              source = base_[size_t(tg)] + int(j);
          if (source < 0 &&
              std::any_of(target.steps.begin(), target.steps.end(),
                          [](const Instruction &i) { return i.has_dep; }) &&
              !target.steps.empty())
            source = base_[size_t(tg)] + int(target.steps.size()) - 1;
          if (source >= 0)
            preds_[size_t(node)].push_back(source);
        }
      }
    if (messages) {
      for (const Connection &c : cm.connections) {
        if (c.pushers.size() != 1 || c.poppers.size() != 1)
          continue;
        std::vector<int> pushes, pops;
        const int sg = cm.tb_base[c.sender.index()] + c.pushers[0].value();
        const int rg = cm.tb_base[c.receiver.index()] + c.poppers[0].value();
        const auto &stb = p.rank(c.sender).thread_blocks[c.pushers[0].index()];
        const auto &rtb = p.rank(c.receiver).thread_blocks[c.poppers[0].index()];
        for (size_t k = 0; k < stb.steps.size(); ++k)
          if (op_sends(stb.steps[k].op))
            pushes.push_back(base_[size_t(sg)] + int(k));
        for (size_t k = 0; k < rtb.steps.size(); ++k)
          if (op_receives(rtb.steps[k].op))
            pops.push_back(base_[size_t(rg)] + int(k));
        for (size_t k = 0; k < std::min(pushes.size(), pops.size()); ++k)
          preds_[size_t(pops[k])].push_back(pushes[k]);
      }
    }
    if (messages)
      compute(0, int(preds_.size()));
  }

  /// Strict mode: clocks for one rank's steps only (its edges never leave it), so memory is one
  /// rank's steps times its thread blocks rather than the whole program's.
  void focus(const RankProgram &rp, const ConnectionMap &cm) {
    if (!per_rank_ || rp.thread_blocks.empty())
      return;
    const int first = cm.tb_base[rp.rank.index()];
    const int last = first + int(rp.thread_blocks.size());
    compute(base_[size_t(first)], base_[size_t(last)]);
  }

  int node(int g, int step) const { return base_[size_t(g)] + step; }
  bool reached(int node) const { return reached_[size_t(node)]; }
  /// a happens before b (or is b).
  bool ordered(int a, int b) const {
    const int g = tb_of_node_[size_t(a)];
    const int gb = tb_of_node_[size_t(b)];
    // Per-rank clocks (strict mode): steps of different ranks are never ordered.
    if (per_rank_ && gb - dim_of_tb_[size_t(gb)] != g - dim_of_tb_[size_t(g)])
      return false;
    SYNCOLL_INVARIANT(b >= lo_ && b < hi_,
                      "happens-before asked outside the rank it was computed for");
    return clock_[size_t(b - lo_) * size_t(dims_) + size_t(dim_of_tb_[size_t(g)])] >=
           a - base_[size_t(g)] + 1;
  }

private:
  bool per_rank_ = false;
  int dims_ = 0;
  std::vector<int> dim_of_tb_;
  std::vector<int> base_;
  std::vector<std::vector<int>> preds_;
  std::vector<int> tb_of_node_;
  std::vector<int> clock_; ///< the clocks of nodes [lo_, hi_)
  std::vector<bool> reached_;
  int lo_ = 0, hi_ = 0;

  // Vector clocks of the nodes [lo, hi), whose predecessors all lie in that range.
  void compute(int lo, int hi) {
    lo_ = lo;
    hi_ = hi;
    const size_t n = size_t(hi - lo);
    std::vector<std::vector<int>> succs(n);
    std::vector<int> indegree(n, 0);
    for (int v = lo; v < hi; ++v)
      for (int u : preds_[size_t(v)]) {
        SYNCOLL_INVARIANT(u >= lo && u < hi, "a strict-mode edge leaves its rank");
        succs[size_t(u - lo)].push_back(v);
        ++indegree[size_t(v - lo)];
      }
    clock_.assign(n * size_t(dims_), 0);
    reached_.resize(preds_.size());
    std::fill(reached_.begin() + lo, reached_.begin() + hi, false);
    std::vector<int> queue;
    for (int v = lo; v < hi; ++v)
      if (indegree[size_t(v - lo)] == 0)
        queue.push_back(v);
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      const int v = queue[qi];
      reached_[size_t(v)] = true;
      int *cv = &clock_[size_t(v - lo) * size_t(dims_)];
      for (int u : preds_[size_t(v)]) {
        const int *cu = &clock_[size_t(u - lo) * size_t(dims_)];
        for (int d = 0; d < dims_; ++d)
          cv[d] = std::max(cv[d], cu[d]);
      }
      const int g = tb_of_node_[size_t(v)];
      const int dim = dim_of_tb_[size_t(g)];
      cv[dim] = std::max(cv[dim], v - base_[size_t(g)] + 1);
      for (int w : succs[size_t(v - lo)])
        if (--indegree[size_t(w - lo)] == 0)
          queue.push_back(w);
    }
  }
};

} // namespace

std::vector<RaceCounterexample> find_races(const Program &program, const ConnectionMap &cm,
                                           const SymbolicMemory &cells, RaceMode mode,
                                           const std::string &alias_mode, size_t max_reports) {
  std::vector<RaceCounterexample> out;
  HappensBefore hb(program, cm, mode == RaceMode::Relaxed);
  std::optional<HappensBefore> relaxed; // built only to explain a strict-mode race
  for (const RankProgram &rp : program.ranks()) {
    hb.focus(rp, cm);
    struct Touch {
      int node;
      Access access;
      bool writes;
    };
    std::map<int, std::vector<Touch>> by_cell;
    for (const ThreadBlock &tb : rp.thread_blocks) {
      const int g = cm.tb_base[rp.rank.index()] + tb.id.value();
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const int node = hb.node(g, int(k));
        if (!hb.reached(node))
          continue; // part of a dependency cycle: a deadlock, reported as such
        for (const StepAccess &a : accesses_of(tb.steps[k])) {
          Access access{StepRef{rp.rank, tb.id, int(k), 0},
                        tb.steps[k].op,
                        a.buffer,
                        a.offset,
                        a.offset + a.count,
                        a.writes};
          for (int s = a.offset; s < a.offset + a.count; ++s) {
            const int cell = cells.cell(rp.rank, a.buffer, s);
            if (cell >= 0)
              by_cell[cell].push_back({node, access, a.writes});
          }
        }
      }
    }
    std::set<std::pair<int, int>> reported;
    for (const auto &[cell, touches] : by_cell) {
      for (size_t i = 0; i < touches.size(); ++i)
        for (size_t j = i + 1; j < touches.size(); ++j) {
          const Touch &a = touches[i], &b = touches[j];
          if (!(a.writes || b.writes) || a.node == b.node)
            continue;
          if (hb.ordered(a.node, b.node) || hb.ordered(b.node, a.node))
            continue;
          if (!reported.insert({std::min(a.node, b.node), std::max(a.node, b.node)}).second)
            continue;
          std::string why = "no chain of program order and dependency edges orders them";
          if (mode == RaceMode::Relaxed) {
            why += ", nor messages";
          } else {
            if (!relaxed)
              relaxed.emplace(program, cm, true);
            if (relaxed->ordered(a.node, b.node) || relaxed->ordered(b.node, a.node))
              why += "; they are ordered only through messages (relaxed mode accepts this)";
          }
          if (a.access.buffer != b.access.buffer)
            why +=
                fmt::format("; {} and {} are the same memory {}", buffer_kind_name(a.access.buffer),
                            buffer_kind_name(b.access.buffer), alias_mode);
          out.push_back({alias_mode, a.access, b.access, why});
          if (out.size() >= max_reports)
            return out;
        }
    }
  }
  return out;
}

} // namespace syncoll::verifier::detail
