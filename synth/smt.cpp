#include "synth/smt.h"

#include "model/invariant.h"
#include "synth/bounds.h"

#include <chrono>
#include <fmt/format.h>
#include <z3++.h>

namespace syncoll::synth {
namespace {

// A send variable and how to read its step back from a model.
struct SendVar {
  z3::expr chosen;
  z3::expr step; ///< 1-based step when chosen
  ChunkId chunk;
  LinkId link;
  SendOp op;
};

// z3's solver for this logic with the arithmetic solver that does best on these formulas:
// arith.solver=2 halves the time of the hard Table 4 rows against the default (measured with
// bench/synth_bench).
z3::solver make_solver(z3::context &ctx) {
  z3::solver solver(ctx);
  z3::params p(ctx);
  p.set("arith.solver", 2u);
  solver.set(p);
  return solver;
}

class SmtEncoding {
public:
  SmtEncoding(const Topology &t, const CollectiveSpec &c, StepsRounds sr)
      : t_(t), c_(c), S_(sr.steps), R_(sr.rounds), solver_(make_solver(ctx_)),
        on_link_(t.links().size()) {
    for (auto &steps : on_link_)
      for (int s = 0; s < S_; ++s)
        steps.emplace_back(ctx_);
  }

  /// Builds the formula; returns a reason when a bound refutes the instance outright.
  std::optional<std::string> encode() {
    const Distances dist = hop_distances(t_);
    for (int s = 0; s < S_; ++s) {
      rounds_.push_back(ctx_.int_const(fmt::format("r{}", s + 1).c_str()));
      solver_.add(rounds_.back() >= 1);
      solver_.add(rounds_.back() <= R_ - S_ + 1);
    }
    z3::expr_vector all_rounds(ctx_);
    for (const auto &r : rounds_)
      all_rounds.push_back(r);
    solver_.add(z3::sum(all_rounds) == R_); // C6
    for (int c = 0; c < c_.num_chunks(); ++c) {
      const ChunkSpec &spec = c_.chunk(ChunkId(c));
      auto refuted = spec.reduced ? encode_reduced(ChunkId(c)) : encode_copied(ChunkId(c), dist);
      if (refuted)
        return refuted;
    }
    // A rank receives every copied chunk it must end with, one per link unit and round. Stated
    // outright: z3's cardinality reasoning does not add up separate link constraints.
    if (auto refuted = counting_refutation(t_, c_, R_))
      return refuted;
    encode_bandwidth();
    return std::nullopt;
  }

  z3::solver &solver() { return solver_; }

  Algorithm decode(const z3::model &m) const {
    Algorithm a;
    a.steps.resize(size_t(S_));
    for (int s = 0; s < S_; ++s)
      a.steps[size_t(s)].rounds = m.eval(rounds_[size_t(s)], true).get_numeral_int();
    for (const SendVar &v : sends_) {
      if (!m.eval(v.chosen, true).is_true())
        continue;
      const int step = m.eval(v.step, true).get_numeral_int();
      SYNCOLL_INVARIANT(step >= 1 && step <= S_, "decoded send outside the steps");
      const Link &l = t_.link(v.link);
      a.steps[size_t(step - 1)].sends.push_back({v.chunk, l.src, l.dst, v.op});
    }
    for (auto &step : a.steps)
      std::sort(step.sends.begin(), step.sends.end());
    return a;
  }

private:
  z3::expr int_var(const std::string &name, int lo, int hi) {
    z3::expr v = ctx_.int_const(name.c_str());
    solver_.add(v >= lo);
    solver_.add(v <= hi);
    return v;
  }

  // A send on `link` that happens in step `step` when `chosen`; counted against bandwidth for
  // each step it could fall in.
  void add_send(z3::expr chosen, z3::expr step, ChunkId c, LinkId link, SendOp op, int first) {
    for (int s = std::max(1, first); s <= S_; ++s)
      on_link_[link.index()][size_t(s - 1)].push_back(chosen && step == s);
    sends_.push_back({chosen, step, c, link, op});
  }

  // C1-C4 for a chunk that is copied, not reduced.
  std::optional<std::string> encode_copied(ChunkId c, const Distances &dist) {
    const int P = t_.num_ranks(), never = S_ + 1;
    std::vector<int> from_pre(size_t(P), kUnreachable);
    for (const ChunkPlace &p : c_.chunk(c).pre)
      for (int n = 0; n < P; ++n)
        from_pre[size_t(n)] = std::min(from_pre[size_t(n)], dist.at(p.rank.value(), n));
    for (const ChunkPlace &p : c_.chunk(c).post)
      if (from_pre[p.rank.index()] > S_)
        return fmt::format("chunk {} needs {} steps to reach rank {}", c.value(),
                           from_pre[p.rank.index()] == kUnreachable
                               ? std::string("infinitely many")
                               : std::to_string(from_pre[p.rank.index()]),
                           p.rank.value());
    std::vector<z3::expr> time;
    for (int n = 0; n < P; ++n) {
      if (c_.is_pre(c, RankId(n)))
        time.push_back(ctx_.int_val(0)); // C1
      else if (from_pre[size_t(n)] > S_)
        time.push_back(ctx_.int_val(never));
      else
        time.push_back(int_var(fmt::format("t{}_{}", c.value(), n), from_pre[size_t(n)],
                               c_.is_post(c, RankId(n)) ? S_ : never)); // C2
    }
    std::vector<z3::expr_vector> incoming;
    for (int n = 0; n < P; ++n)
      incoming.emplace_back(ctx_);
    for (size_t l = 0; l < t_.links().size(); ++l) {
      const Link &link = t_.links()[l];
      const int a = link.src.value(), b = link.dst.value();
      if (c_.is_pre(c, link.dst) || from_pre[size_t(a)] > S_ - 1 || from_pre[size_t(b)] > S_)
        continue;
      z3::expr snd = ctx_.bool_const(fmt::format("s{}_{}_{}", c.value(), a, b).c_str());
      solver_.add(z3::implies(snd, time[size_t(a)] < time[size_t(b)] && time[size_t(b)] <= S_));
      incoming[size_t(b)].push_back(snd);
      add_send(snd, time[size_t(b)], c, LinkId(int32_t(l)), SendOp::Copy,
               from_pre[size_t(b)]); // C4
    }
    for (int n = 0; n < P; ++n) {
      if (c_.is_pre(c, RankId(n)) || from_pre[size_t(n)] > S_)
        continue;
      // C3: a rank that gets the chunk gets it exactly once.
      if (incoming[size_t(n)].empty()) {
        solver_.add(time[size_t(n)] == never);
        continue;
      }
      solver_.add(z3::atmost(incoming[size_t(n)], 1));
      solver_.add(z3::implies(time[size_t(n)] <= S_, z3::mk_or(incoming[size_t(n)])));
    }
    return std::nullopt;
  }

  // A reduced chunk: an in-tree of partial sums over its pre ranks into a root, then an
  // out-tree copying the total from the root to its post ranks.
  std::optional<std::string> encode_reduced(ChunkId c) {
    const int P = t_.num_ranks(), never = S_ + 1;
    const ChunkSpec &spec = c_.chunk(c);
    std::vector<bool> pre(size_t(P), false);
    for (const ChunkPlace &p : spec.pre)
      pre[p.rank.index()] = true;
    std::vector<std::optional<z3::expr>> root(static_cast<size_t>(P)), tr(static_cast<size_t>(P));
    z3::expr_vector roots(ctx_);
    for (int n = 0; n < P; ++n)
      if (pre[size_t(n)]) {
        root[size_t(n)] = ctx_.bool_const(fmt::format("root{}_{}", c.value(), n).c_str());
        roots.push_back(*root[size_t(n)]);
        tr[size_t(n)] = int_var(fmt::format("tr{}_{}", c.value(), n), 0, S_);
        solver_.add(z3::implies(!*root[size_t(n)], *tr[size_t(n)] >= 1));
      }
    std::vector<int> ones(size_t(P) + t_.links().size() + 1, 1);
    solver_.add(z3::pbeq(roots, ones.data(), 1));
    std::vector<z3::expr_vector> up_out, down_in;
    for (int n = 0; n < P; ++n) {
      up_out.emplace_back(ctx_);
      down_in.emplace_back(ctx_);
    }
    std::vector<z3::expr> tb;
    for (int n = 0; n < P; ++n) {
      tb.push_back(
          int_var(fmt::format("tb{}_{}", c.value(), n), 0, c_.is_post(c, RankId(n)) ? S_ : never));
      if (pre[size_t(n)]) {
        solver_.add(z3::implies(*root[size_t(n)], tb.back() == *tr[size_t(n)]));
        solver_.add(z3::implies(!*root[size_t(n)], tb.back() >= 1));
      } else {
        solver_.add(tb.back() >= 1);
      }
    }
    for (size_t l = 0; l < t_.links().size(); ++l) {
      const Link &link = t_.links()[l];
      const size_t a = link.src.index(), b = link.dst.index();
      if (pre[a] && pre[b]) {
        z3::expr up = ctx_.bool_const(fmt::format("u{}_{}_{}", c.value(), a, b).c_str());
        solver_.add(z3::implies(up, *tr[a] <= *tr[b]));
        solver_.add(z3::implies(up && !*root[b], *tr[a] < *tr[b]));
        up_out[a].push_back(up);
        add_send(up, *tr[a], c, LinkId(int32_t(l)), SendOp::Reduce, 1);
      }
      z3::expr down = ctx_.bool_const(fmt::format("d{}_{}_{}", c.value(), a, b).c_str());
      solver_.add(z3::implies(down, tb[a] < tb[b] && tb[b] <= S_));
      if (pre[b])
        solver_.add(z3::implies(down, !*root[b]));
      down_in[b].push_back(down);
      add_send(down, tb[b], c, LinkId(int32_t(l)), SendOp::Copy, 1);
    }
    for (int n = 0; n < P; ++n) {
      if (pre[size_t(n)]) {
        // Every pre rank but the root sends its partial sum exactly once.
        z3::expr_vector out(ctx_);
        for (const auto &e : up_out[size_t(n)])
          out.push_back(e);
        out.push_back(*root[size_t(n)]);
        solver_.add(z3::pbeq(out, ones.data(), 1));
      }
      z3::expr receives =
          down_in[size_t(n)].empty() ? ctx_.bool_val(false) : z3::mk_or(down_in[size_t(n)]);
      if (!down_in[size_t(n)].empty())
        solver_.add(z3::atmost(down_in[size_t(n)], 1));
      z3::expr not_root = pre[size_t(n)] ? !*root[size_t(n)] : ctx_.bool_val(true);
      solver_.add(z3::implies(not_root && tb[size_t(n)] <= S_, receives));
    }
    return std::nullopt;
  }

  // C5: per step, every link carries at most capacity x r_s sends and every relation at most
  // its capacity x r_s.
  void encode_bandwidth() {
    auto cap = [&](const z3::expr_vector &sends, int per_round, int s) {
      if (sends.empty())
        return;
      for (int i = 1; i <= R_ - S_ + 1; ++i) {
        if (int(sends.size()) <= per_round * i)
          break; // this and every larger round count cannot be exceeded
        solver_.add(
            z3::implies(rounds_[size_t(s)] == i, z3::atmost(sends, unsigned(per_round * i))));
      }
    };
    encode_totals();
    for (int s = 0; s < S_; ++s) {
      for (size_t l = 0; l < t_.links().size(); ++l)
        cap(on_link_[l][size_t(s)], t_.links()[l].capacity, s);
      for (const BandwidthRelation &rel : t_.relations()) {
        z3::expr_vector sends(ctx_);
        for (LinkId l : rel.links)
          for (const auto &e : on_link_[l.index()][size_t(s)])
            sends.push_back(e);
        cap(sends, rel.capacity, s);
      }
    }
  }

  // Implied, not needed for correctness: summed over the steps, a link or relation carries at
  // most capacity x R chunks, and a rank receives at least the copied chunks it must end with.
  // z3 does not derive these counting facts from the per-step constraints by itself, and they
  // refute tight instances early (at R/C = 7/6 on DGX-1 every incoming link is full).
  void encode_totals() {
    std::vector<z3::expr_vector> on_link, into;
    for (size_t l = 0; l < t_.links().size(); ++l)
      on_link.emplace_back(ctx_);
    for (int n = 0; n < t_.num_ranks(); ++n)
      into.emplace_back(ctx_);
    for (const SendVar &v : sends_) {
      on_link[v.link.index()].push_back(v.chosen);
      if (!c_.chunk(v.chunk).reduced)
        into[t_.link(v.link).dst.index()].push_back(v.chosen);
    }
    auto at_most = [&](const z3::expr_vector &sends, int limit) {
      if (int(sends.size()) > limit)
        solver_.add(z3::atmost(sends, unsigned(limit)));
    };
    for (size_t l = 0; l < t_.links().size(); ++l)
      at_most(on_link[l], t_.links()[l].capacity * R_);
    for (const BandwidthRelation &rel : t_.relations()) {
      z3::expr_vector sends(ctx_);
      for (LinkId l : rel.links)
        for (const auto &e : on_link[l.index()])
          sends.push_back(e);
      at_most(sends, rel.capacity * R_);
    }
    for (int n = 0; n < t_.num_ranks(); ++n) {
      unsigned needed = 0;
      for (int c = 0; c < c_.num_chunks(); ++c)
        needed += !c_.chunk(ChunkId(c)).reduced && c_.is_post(ChunkId(c), RankId(n)) &&
                  !c_.is_pre(ChunkId(c), RankId(n));
      if (needed > 0)
        solver_.add(z3::atleast(into[size_t(n)], needed));
    }
  }

  const Topology &t_;
  const CollectiveSpec &c_;
  int S_, R_;
  z3::context ctx_;
  z3::solver solver_;
  std::vector<z3::expr> rounds_;
  std::vector<std::vector<z3::expr_vector>> on_link_; ///< per link, per step: sends in it
  std::vector<SendVar> sends_;
};

} // namespace

Answer solve_smt(const Topology &topology, const CollectiveSpec &collective, StepsRounds sr,
                 const SynthOptions &options) {
  SYNCOLL_INVARIANT(sr.steps >= 1 && sr.rounds >= sr.steps, "instance with R < S or S < 1");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Answer answer;
  try {
    SmtEncoding encoding(topology, collective, sr);
    if (auto refuted = encoding.encode()) {
      answer.verdict = Verdict::Unsat;
      answer.detail = *refuted;
      answer.seconds = elapsed();
      return answer;
    }
    if (options.time_limit_s > 0) {
      z3::params p(encoding.solver().ctx());
      p.set("timeout", unsigned(std::max(1.0, options.time_limit_s * 1000)));
      encoding.solver().set(p);
    }
    switch (encoding.solver().check()) {
    case z3::sat: {
      answer.verdict = Verdict::Sat;
      Algorithm a = encoding.decode(encoding.solver().get_model());
      answer.algorithm = std::move(a);
      break;
    }
    case z3::unsat:
      answer.verdict = Verdict::Unsat;
      answer.detail = "z3: unsatisfiable";
      break;
    case z3::unknown:
      answer.verdict = Verdict::Unknown;
      answer.detail = "z3: " + encoding.solver().reason_unknown();
      break;
    }
  } catch (const z3::exception &e) {
    // z3 reports resource exhaustion (memory) as an exception: the question stays open.
    answer.verdict = Verdict::Unknown;
    answer.detail = std::string("z3: ") + e.msg();
  }
  answer.seconds = elapsed();
  return answer;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
  case Verdict::Sat:
    return "sat";
  case Verdict::Unsat:
    return "unsat";
  case Verdict::Unknown:
    return "unknown";
  }
  SYNCOLL_UNREACHABLE("verdict");
}

} // namespace syncoll::synth
