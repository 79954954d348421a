#include "synth/sat.h"

#include "model/invariant.h"
#include "synth/bounds.h"
#include "synth/symmetry.h"

#include <algorithm>
#include <array>
#include <cadical.hpp>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <optional>

namespace syncoll::synth {
namespace {

using Clock = std::chrono::steady_clock;

// Stops CaDiCaL at a deadline: the answer is then unknown.
class Deadline final : public CaDiCaL::Terminator {
public:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  bool terminate() override { return Clock::now() >= at_; }

private:
  Clock::time_point at_;
};

class SatEncoding {
public:
  SatEncoding(const Topology &t, const CollectiveSpec &c, StepsRounds sr, CaDiCaL::Solver &solver)
      : t_(t), c_(c), S_(sr.steps), R_(sr.rounds), M_(sr.rounds - sr.steps + 1), solver_(solver) {}

  std::optional<std::string> encode(bool break_symmetry) {
    const Distances dist = hop_distances(t_);
    const int P = t_.num_ranks(), G = c_.num_chunks();
    const size_t L = t_.links().size();
    // Unary rounds: u(t, 1) is true; u(t, i + 1) implies u(t, i).
    rounds_.assign(size_t(S_), {});
    std::vector<int> extra;
    for (int t = 0; t < S_; ++t) {
      for (int i = 2; i <= M_; ++i) {
        rounds_[size_t(t)].push_back(new_var());
        extra.push_back(rounds_[size_t(t)].back());
        if (i > 2)
          clause({-rounds_[size_t(t)].back(), rounds_[size_t(t)][size_t(i - 3)]});
      }
    }
    // "At least k extra rounds" outputs, kept so that a search can cap the rounds further by
    // assumption (fewest rounds on one formula).
    extra_at_least_ = count_up(extra, size_t(R_ - S_) + 1);
    if (size_t(R_ - S_) < extra_at_least_.size())
      unit(-extra_at_least_[size_t(R_ - S_)]);

    present_.assign(size_t(G) * size_t(P) * size_t(S_ + 1), 0);
    std::vector<std::vector<std::vector<int>>> on_link(
        L, std::vector<std::vector<int>>(size_t(S_))); // sends per link and step
    for (int c = 0; c < G; ++c) {
      const ChunkSpec &spec = c_.chunk(ChunkId(c));
      SYNCOLL_INVARIANT(!spec.reduced, "the SAT backend takes copied chunks only");
      std::vector<int> from_pre(size_t(P), kUnreachable);
      for (const ChunkPlace &p : spec.pre)
        for (int n = 0; n < P; ++n)
          from_pre[size_t(n)] = std::min(from_pre[size_t(n)], dist.at(p.rank.value(), n));
      for (const ChunkPlace &q : spec.post)
        if (from_pre[q.rank.index()] > S_)
          return fmt::format("chunk {} needs {} steps to reach rank {}", c,
                             from_pre[q.rank.index()] >= kUnreachable
                                 ? std::string("infinitely many")
                                 : std::to_string(from_pre[q.rank.index()]),
                             q.rank.value());
      // p(c, n, t): a variable where the chunk can be, constant false before its distance.
      for (int n = 0; n < P; ++n)
        for (int t = 0; t <= S_; ++t) {
          const bool pre = c_.is_pre(ChunkId(c), RankId(n));
          int &v = present(c, n, t);
          if (pre)
            v = kTrue;
          else if (t < from_pre[size_t(n)] || t == 0)
            v = kFalse;
          else
            v = new_var();
          if (t > 0)
            implies(present(c, n, t - 1), v); // monotone
        }
      for (const ChunkPlace &q : spec.post)
        unit(present(c, q.rank.value(), S_));
      // s(c, l, t) for links into ranks that do not start with the chunk.
      std::vector<std::vector<int>> arriving(size_t(P) * size_t(S_ + 1));
      for (size_t l = 0; l < L; ++l) {
        const Link &link = t_.links()[l];
        const int a = link.src.value(), b = link.dst.value();
        if (c_.is_pre(ChunkId(c), link.dst))
          continue;
        std::vector<int> over_link;
        for (int t = 1; t <= S_; ++t) {
          if (present(c, a, t - 1) == kFalse || present(c, b, t) == kFalse)
            continue;
          const int s = new_var();
          sends_.push_back({s, ChunkId(c), LinkId(int32_t(l)), t});
          implies(s, present(c, a, t - 1));  // the source has it before the step
          implies(s, present(c, b, t));      // and the destination after it
          implies(s, -present(c, b, t - 1)); // never to a rank that has it
          arriving[size_t(b) * size_t(S_ + 1) + size_t(t)].push_back(s);
          on_link[l][size_t(t - 1)].push_back(s);
          over_link.push_back(s);
        }
        at_most(over_link, 1); // a chunk crosses a link at most once
      }
      // New at a rank only through a send of that step, and through one only.
      for (int n = 0; n < P; ++n)
        for (int t = 1; t <= S_; ++t) {
          const int now = present(c, n, t), before = present(c, n, t - 1);
          if (now == kFalse || before == kTrue)
            continue;
          const auto &in = arriving[size_t(n) * size_t(S_ + 1) + size_t(t)];
          std::vector<int> cl{-now};
          if (before != kFalse)
            cl.push_back(before);
          cl.insert(cl.end(), in.begin(), in.end());
          clause(cl);
          at_most(in, 1);
        }
    }
    if (auto refuted = counting_refutation(t_, c_, R_))
      return refuted;
    find_witnesses();
    order_interchangeable_chunks();
    if (break_symmetry)
      break_instance_symmetries();
    // Bandwidth per link and relation and step, scaled by the step's rounds.
    for (int t = 0; t < S_; ++t) {
      for (size_t l = 0; l < L; ++l)
        capacity(on_link[l][size_t(t)], t_.links()[l].capacity, t);
      for (const BandwidthRelation &rel : t_.relations()) {
        std::vector<int> sends;
        for (LinkId l : rel.links)
          sends.insert(sends.end(), on_link[l.index()][size_t(t)].begin(),
                       on_link[l.index()][size_t(t)].end());
        capacity(sends, rel.capacity, t);
      }
    }
    return std::nullopt;
  }

  bool refuted() const { return refuted_; }

  // Copied chunks with the same pre and post ranks are interchangeable: relabelling them maps
  // algorithms to algorithms, so one may require, soundly for unsat answers too, that they
  // reach one of their post ranks in label order (Allgather's C chunks per rank have C!
  // labellings). Done for chunks bound to several ranks only: on DGX-1 it took Allgather 6/3/7
  // from 0.68 s to 0.14 s and Allreduce 48/6/14 from 1.4 s to 0.23 s, but Alltoall 24/8/8,
  // whose chunks each go to one rank, from 0.19 s to 15 s.
  //
  // Both this and the topology symmetries below are lex-leader constraints under one order of the
  // presence variables, which is what makes them sound together: the orbit's lex-largest
  // algorithm meets all of them. The order is time-major, first over each chunk at its witness
  // (its lowest post rank that is not a pre rank), then over each chunk at every other rank. For
  // a swap of chunks a < b of one class, the comparison on that first block reads "a reaches
  // the witness no later than b".
  void order_interchangeable_chunks() {
    std::map<std::pair<std::vector<int>, std::vector<int>>, std::vector<int>> groups;
    for (int c = 0; c < c_.num_chunks(); ++c) {
      const ChunkSpec &spec = c_.chunk(ChunkId(c));
      std::vector<int> pre, post;
      for (const ChunkPlace &p : spec.pre)
        pre.push_back(p.rank.value());
      for (const ChunkPlace &p : spec.post)
        post.push_back(p.rank.value());
      std::sort(pre.begin(), pre.end());
      std::sort(post.begin(), post.end());
      post.erase(std::unique(post.begin(), post.end()), post.end());
      if (witness_[size_t(c)] >= 0 && post.size() >= 2)
        groups[{pre, post}].push_back(c);
    }
    for (const auto &[ranks, chunks] : groups)
      for (size_t i = 0; i + 1 < chunks.size(); ++i) {
        const int w = witness_[size_t(chunks[i])];
        for (int t = 1; t <= S_; ++t)
          implies(present(chunks[i + 1], w, t), present(chunks[i], w, t));
      }
  }

  void find_witnesses() {
    witness_.assign(size_t(c_.num_chunks()), -1);
    for (int c = 0; c < c_.num_chunks(); ++c)
      for (int n = 0; n < t_.num_ranks() && witness_[size_t(c)] < 0; ++n)
        if (c_.is_post(ChunkId(c), RankId(n)) && !c_.is_pre(ChunkId(c), RankId(n)))
          witness_[size_t(c)] = n;
  }

  // Topology symmetries (with the chunk relabelling they imply) map algorithms to algorithms;
  // for each generator g of a strong generating set, only algorithms x with V(x) >=lex V(g x)
  // are kept, V being the presence order above with true above false. The order must keep all
  // witness positions ahead of the rest: interleaving them per step would make the chunk order
  // above no longer a prefix of the swap's lex-leader constraint, and the two together unsound.
  //
  // Off by default: measured on DGX-1 and Hypercube3 Alltoall/Allgather (docs/synthesis.md) it
  // slowed CaDiCaL on sat and unsat instances alike, e.g. DGX-1 Alltoall C3 S3 R4 (unsat) from
  // 16 s to 43 s. The instances' hardness is not in symmetric copies of one search.
  void break_instance_symmetries() {
    const SymmetryGroup group = instance_symmetries(t_, c_);
    const int P = t_.num_ranks(), G = c_.num_chunks();
    // Positions (chunk, rank, step): all steps at the witnesses first, then all other ranks.
    std::vector<std::array<int, 3>> order;
    for (int t = 1; t <= S_; ++t)
      for (int c = 0; c < G; ++c)
        if (witness_[size_t(c)] >= 0)
          order.push_back({c, witness_[size_t(c)], t});
    for (int t = 1; t <= S_; ++t)
      for (int c = 0; c < G; ++c)
        for (int n = 0; n < P; ++n)
          if (n != witness_[size_t(c)] && !c_.is_pre(ChunkId(c), RankId(n)))
            order.push_back({c, n, t});
    for (const InstanceSymmetry &g : group.generators) {
      std::vector<int> rank_from(static_cast<size_t>(P)), chunk_from(static_cast<size_t>(G));
      for (int n = 0; n < P; ++n)
        rank_from[size_t(g.rank_image[size_t(n)])] = n;
      for (int c = 0; c < G; ++c)
        chunk_from[size_t(g.chunk_image[size_t(c)])] = c;
      std::vector<std::pair<int, int>> pairs; // (x at v, g x at v)
      for (const auto &[c, n, t] : order)
        pairs.emplace_back(present(c, n, t),
                           present(chunk_from[size_t(c)], rank_from[size_t(n)], t));
      lex_at_least(pairs);
    }
  }

  // a >=lex b over the pairs (a_i, b_i), true above false: while a and b agree so far (e), b_i
  // implies a_i. e is only forced true, which is all the constraint needs.
  void lex_at_least(const std::vector<std::pair<int, int>> &pairs) {
    int equal = kTrue;
    for (const auto &[a, b] : pairs) {
      if (a == b)
        continue; // one literal: equal here in every model
      clause({-equal, -b, a});
      const bool constants = (a == kTrue || a == kFalse) && (b == kTrue || b == kFalse);
      if (constants)
        return; // a and b differ here in every model: the order is decided
      const int next = new_var();
      clause({-equal, -a, -b, next});
      clause({-equal, a, b, next});
      equal = next;
    }
  }

  /// The assumption that caps the rounds at `rounds` (< R), if the formula can exceed it.
  std::optional<int> rounds_at_most(int rounds) const {
    const size_t k = size_t(rounds - S_);
    if (k < extra_at_least_.size())
      return -extra_at_least_[k];
    return std::nullopt;
  }

  /// The model as an algorithm of exactly `rounds` rounds (spare ones go to the last step).
  Algorithm decode(int rounds) {
    Algorithm a;
    a.steps.resize(size_t(S_));
    int total = 0;
    for (int t = 0; t < S_; ++t) {
      int r = 1;
      for (int v : rounds_[size_t(t)])
        r += solver_.val(v) > 0;
      a.steps[size_t(t)].rounds = r;
      total += r;
    }
    // Fewer rounds than allowed also answers the instance; the spare ones go to the last step.
    a.steps.back().rounds += rounds - total;
    for (const SendVar &s : sends_)
      if (solver_.val(s.var) > 0) {
        const Link &l = t_.link(s.link);
        a.steps[size_t(s.step - 1)].sends.push_back({s.chunk, l.src, l.dst, SendOp::Copy});
      }
    for (auto &step : a.steps)
      std::sort(step.sends.begin(), step.sends.end());
    return a;
  }

private:
  static constexpr int kTrue = 1; ///< variable 1, fixed true
  static constexpr int kFalse = -1;

  struct SendVar {
    int var;
    ChunkId chunk;
    LinkId link;
    int step; ///< 1-based
  };

  int new_var() { return ++vars_; }
  int &present(int c, int n, int t) {
    return present_[(size_t(c) * size_t(t_.num_ranks()) + size_t(n)) * size_t(S_ + 1) + size_t(t)];
  }
  void clause(const std::vector<int> &lits) {
    size_t live = 0;
    for (int l : lits) {
      if (l == kTrue)
        return; // satisfied
      live += l != kFalse;
    }
    if (live == 0) {
      refuted_ = true; // every literal is a constant false: the formula is unsatisfiable
      return;
    }
    for (int l : lits)
      if (l != kFalse)
        solver_.add(l);
    solver_.add(0);
  }
  void unit(int lit) { clause({lit}); }
  void implies(int a, int b) { clause({-a, b}); }

  // Totalizer outputs for `inputs`: out[k - 1] is true when at least k inputs are (only that
  // direction is encoded, which is all an upper bound needs), up to `limit` outputs.
  std::vector<int> count_up(const std::vector<int> &inputs, size_t limit) {
    if (inputs.size() <= 1)
      return inputs;
    const size_t half = inputs.size() / 2;
    const std::vector<int> left =
        count_up(std::vector<int>(inputs.begin(), inputs.begin() + long(half)), limit);
    const std::vector<int> right =
        count_up(std::vector<int>(inputs.begin() + long(half), inputs.end()), limit);
    std::vector<int> out(std::min(limit, left.size() + right.size()));
    for (int &o : out)
      o = new_var();
    for (size_t i = 0; i <= left.size(); ++i)
      for (size_t j = 0; j <= right.size(); ++j) {
        if (i + j == 0 || i + j > out.size())
          continue;
        std::vector<int> cl;
        if (i > 0)
          cl.push_back(-left[i - 1]);
        if (j > 0)
          cl.push_back(-right[j - 1]);
        cl.push_back(out[i + j - 1]);
        clause(cl);
      }
    return out;
  }
  void at_most(const std::vector<int> &inputs, int k) {
    if (k < 0) {
      refuted_ = true;
      return;
    }
    if (int(inputs.size()) <= k)
      return;
    if (k == 0) {
      for (int x : inputs)
        unit(-x);
      return;
    }
    if (k == 1 && inputs.size() <= 6) {
      for (size_t i = 0; i < inputs.size(); ++i)
        for (size_t j = i + 1; j < inputs.size(); ++j)
          clause({-inputs[i], -inputs[j]});
      return;
    }
    const std::vector<int> out = count_up(inputs, size_t(k) + 1);
    unit(-out[size_t(k)]);
  }
  // More than per_round x i sends in step t need at least i + 1 rounds.
  void capacity(const std::vector<int> &sends, int per_round, int t) {
    if (int(sends.size()) <= per_round)
      return;
    const std::vector<int> out = count_up(sends, size_t(per_round) * size_t(M_) + 1);
    for (int i = 1; i <= M_; ++i) {
      const size_t over = size_t(per_round) * size_t(i); // out[over] = "more than over"
      if (over >= out.size())
        break;
      if (i == M_)
        unit(-out[over]);
      else
        implies(out[over], rounds_[size_t(t)][size_t(i - 1)]);
    }
  }

  const Topology &t_;
  const CollectiveSpec &c_;
  int S_, R_, M_;
  CaDiCaL::Solver &solver_;
  int vars_ = 1; ///< variable 1 is the constant true
  bool refuted_ = false;
  std::vector<std::vector<int>> rounds_; ///< u(t, i) for i = 2..M
  std::vector<int> present_;
  std::vector<SendVar> sends_;
  std::vector<int> extra_at_least_; ///< totalizer outputs over the extra rounds of all steps
  std::vector<int> witness_;        ///< per chunk: its lowest post rank that is not a pre rank
};

} // namespace

Answer solve_sat(const Topology &topology, const CollectiveSpec &collective, StepsRounds sr,
                 const SynthOptions &options) {
  SYNCOLL_INVARIANT(sr.steps >= 1 && sr.rounds >= sr.steps, "instance with R < S or S < 1");
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  Answer answer;
  auto solver = std::make_unique<CaDiCaL::Solver>();
  // Options first: CaDiCaL takes them only before the first clause.
  solver->set("quiet", 1);
  // The "sat" configuration (more stable-mode search) with false as the first phase: almost
  // every send variable is false in a solution, and on Table 4 this took DGX-1 Allgather 6/7/7
  // from 1.9 s to 0.03 s and Alltoall 24/8/8 from minutes to 0.2 s, while the unsat instances of
  // the Pareto search stay at milliseconds (bench/synth_bench).
  solver->configure("sat");
  solver->set("phase", 0);
  if (options.certify)
    solver->set("checkproof", 1);
  solver->add(1); // the constant true
  solver->add(0);
  SatEncoding encoding(topology, collective, sr, *solver);
  if (auto refuted = encoding.encode(options.break_symmetry)) {
    answer.verdict = Verdict::Unsat;
    answer.detail = *refuted;
    answer.seconds = elapsed();
    return answer;
  }
  if (encoding.refuted()) {
    answer.verdict = Verdict::Unsat;
    answer.detail = "the encoding has an empty clause: refuted without search";
    answer.seconds = elapsed();
    return answer;
  }
  std::optional<Deadline> deadline;
  if (options.time_limit_s > 0) {
    deadline.emplace(start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options.time_limit_s)));
    solver->connect_terminator(&*deadline);
  }
  // With fewest_rounds, R' = S, S + 1, ... on the one formula, each capped by an assumption:
  // clauses learnt for one R' serve the next (incremental solving).
  int rounds = options.fewest_rounds ? sr.steps : sr.rounds;
  // Round counts the counting bound refutes are skipped: under an assumption CaDiCaL would have
  // to prove them by resolution, and counting arguments (a pigeonhole in disguise) are
  // exponential there. DGX-1 Allgather C5 at 2 steps spent 300 s on R' = 5 before this.
  while (rounds < sr.rounds && counting_refutation(topology, collective, rounds))
    ++rounds;
  int result = 0;
  for (;; ++rounds) {
    if (auto cap = encoding.rounds_at_most(rounds); cap && rounds < sr.rounds)
      solver->assume(*cap);
    result = solver->solve();
    if (result != 20 || rounds == sr.rounds)
      break;
  }
  if (deadline)
    solver->disconnect_terminator();
  if (result == 10) {
    answer.verdict = Verdict::Sat;
    answer.algorithm = encoding.decode(rounds);
    if (options.fewest_rounds)
      answer.detail = fmt::format("the fewest rounds in {} steps: {}", sr.steps, rounds);
  } else if (result == 20) {
    answer.verdict = Verdict::Unsat;
    answer.detail = "CaDiCaL: unsatisfiable";
    if (options.certify)
      answer.certificate = "CaDiCaL's internal DRAT proof checker (checkproof) accepted the proof";
  } else {
    answer.verdict = Verdict::Unknown;
    answer.detail = "CaDiCaL: time limit";
  }
  answer.seconds = elapsed();
  return answer;
}

} // namespace syncoll::synth
