#include "verifier/model_checker.h"

#include "model/invariant.h"

#include <fmt/format.h>
#include <map>
#include <tuple>
#include <unordered_set>

namespace syncoll::verifier {
namespace {

struct Tb {
  RankId rank;
  const ThreadBlock *tb;
  int send_fifo = -1; ///< index into the FIFO counters, -1 none
  int recv_fifo = -1;
  int dep_base = 0; ///< first thread block of its rank, for dependency targets
  int rank_tbs = 0;
};

// State: per thread block (iteration, step, message, flag), then per FIFO its occupancy.
using State = std::vector<int32_t>;
constexpr size_t kTbFields = 4;

struct StateHash {
  size_t operator()(const State &s) const noexcept {
    size_t h = 1469598103934665603ull;
    for (int32_t v : s)
      h = (h ^ static_cast<uint32_t>(v)) * 1099511628211ull;
    return h;
  }
};

class Checker {
public:
  Checker(const Program &p, const ModelCheckOptions &o) : opt_(o) {
    std::map<std::tuple<int, int, int>, int> fifo;
    auto fifo_of = [&](int s, int r, int c) {
      return fifo.emplace(std::make_tuple(s, r, c), int(fifo.size())).first->second;
    };
    for (const RankProgram &rp : p.ranks()) {
      const int base = int(tbs_.size());
      for (const ThreadBlock &tb : rp.thread_blocks) {
        Tb t{rp.rank, &tb, -1, -1, base, int(rp.thread_blocks.size())};
        if (tb.send_peer)
          t.send_fifo = fifo_of(rp.rank.value(), tb.send_peer->value(), tb.channel.value());
        if (tb.recv_peer)
          t.recv_fifo = fifo_of(tb.recv_peer->value(), rp.rank.value(), tb.channel.value());
        tbs_.push_back(t);
        max_len_ = std::max(max_len_, int(tb.steps.size()));
      }
    }
    num_fifos_ = fifo.size();
  }

  ModelCheckResult run() {
    State initial(tbs_.size() * kTbFields + num_fifos_, 0);
    for (size_t t = 0; t < tbs_.size(); ++t) {
      initial[t * kTbFields + 3] = -1; // no flag published
      if (tbs_[t].tb->steps.empty())
        initial[t * kTbFields] = opt_.iterations; // finished
    }
    ModelCheckResult result;
    std::unordered_set<State, StateHash> seen;
    struct Frame {
      State state;
      std::vector<int> moves;
      size_t next = 0;
    };
    std::vector<Frame> stack;
    seen.insert(initial);
    stack.push_back({initial, moves_of(initial), 0});
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.moves.empty() && !all_done(top.state)) {
        result.outcome = ModelCheckResult::Outcome::Deadlock;
        result.states = seen.size();
        for (size_t i = 0; i + 1 < stack.size(); ++i)
          result.trace.push_back(describe_move(stack[i].state, stack[i].moves[stack[i].next - 1]));
        for (size_t t = 0; t < tbs_.size(); ++t)
          if (top.state[t * kTbFields] < opt_.iterations)
            result.stuck.push_back({tbs_[t].rank, tbs_[t].tb->id, top.state[t * kTbFields + 1],
                                    top.state[t * kTbFields]});
        return result;
      }
      if (top.next == top.moves.size()) {
        stack.pop_back();
        continue;
      }
      State next = apply(top.state, top.moves[top.next++]);
      if (!seen.insert(next).second)
        continue;
      if (seen.size() > opt_.max_states) {
        result.outcome = ModelCheckResult::Outcome::Unknown;
        result.states = seen.size();
        return result;
      }
      std::vector<int> moves = moves_of(next);
      stack.push_back({std::move(next), std::move(moves), 0});
    }
    result.outcome = ModelCheckResult::Outcome::DeadlockFree;
    result.states = seen.size();
    return result;
  }

private:
  ModelCheckOptions opt_;
  std::vector<Tb> tbs_;
  size_t num_fifos_ = 0;
  int max_len_ = 0;

  int fifo(const State &s, int f) const { return s[tbs_.size() * kTbFields + size_t(f)]; }
  int &fifo(State &s, int f) const { return s[tbs_.size() * kTbFields + size_t(f)]; }
  bool all_done(const State &s) const {
    for (size_t t = 0; t < tbs_.size(); ++t)
      if (s[t * kTbFields] < opt_.iterations)
        return false;
    return true;
  }
  int messages(const Instruction &in) const {
    if (!op_sends(in.op) && !op_receives(in.op))
      return 0;
    const int chunks = std::max(1, in.count);
    return (chunks + opt_.max_chunks_per_transfer - 1) / opt_.max_chunks_per_transfer;
  }

  bool enabled(const State &s, size_t t) const {
    const int it = s[t * kTbFields], step = s[t * kTbFields + 1], msg = s[t * kTbFields + 2];
    if (it >= opt_.iterations)
      return false;
    const Tb &tb = tbs_[t];
    const Instruction &in = tb.tb->steps[size_t(step)];
    if (msg == 0 && in.dependency) {
      if (in.dependency->tb.value() >= tb.rank_tbs)
        return false;
      const size_t target = size_t(tb.dep_base + in.dependency->tb.value());
      const int flag = s[target * kTbFields + 3];
      if (flag < it * (max_len_ + 1) + in.dependency->step.value())
        return false;
    }
    if (messages(in) == 0)
      return true;
    if (op_receives(in.op) && fifo(s, tb.recv_fifo) == 0)
      return false;
    if (op_sends(in.op) && fifo(s, tb.send_fifo) >= opt_.fifo_capacity)
      return false;
    return true;
  }

  bool invisible(const State &s, size_t t) const {
    const Instruction &in = tbs_[t].tb->steps[size_t(s[t * kTbFields + 1])];
    return messages(in) == 0 && !in.has_dep;
  }

  std::vector<int> moves_of(const State &s) const {
    std::vector<int> out;
    for (size_t t = 0; t < tbs_.size(); ++t) {
      if (!enabled(s, t))
        continue;
      if (opt_.partial_order_reduction && invisible(s, t))
        return {int(t)};
      out.push_back(int(t));
    }
    return out;
  }

  State apply(const State &s, int move) const {
    State n = s;
    const size_t t = size_t(move);
    const Tb &tb = tbs_[t];
    int &it = n[t * kTbFields], &step = n[t * kTbFields + 1], &msg = n[t * kTbFields + 2];
    const Instruction &in = tb.tb->steps[size_t(step)];
    const int total = messages(in);
    if (total > 0) {
      if (op_receives(in.op))
        --fifo(n, tb.recv_fifo);
      if (op_sends(in.op))
        ++fifo(n, tb.send_fifo);
      ++msg;
    }
    if (msg >= total) {
      if (in.has_dep)
        n[t * kTbFields + 3] = it * (max_len_ + 1) + step;
      msg = 0;
      if (++step == int(tb.tb->steps.size())) {
        step = 0;
        ++it;
      }
    }
    return n;
  }

  std::string describe_move(const State &s, int move) const {
    const size_t t = size_t(move);
    const Tb &tb = tbs_[t];
    const int it = s[t * kTbFields], step = s[t * kTbFields + 1], msg = s[t * kTbFields + 2];
    const Instruction &in = tb.tb->steps[size_t(step)];
    std::string what = fmt::format("rank {} tb {} iteration {} step {} ({})", tb.rank.value(),
                                   tb.tb->id.value(), it, step, op_type_name(in.op));
    if (messages(in) > 1)
      what += fmt::format(" message {}/{}", msg + 1, messages(in));
    return what;
  }
};

} // namespace

ModelCheckResult model_check_deadlock(const Program &program, const ModelCheckOptions &options) {
  SYNCOLL_INVARIANT(options.max_chunks_per_transfer >= 1, "a transfer carries at least one chunk");
  return Checker(program, options).run();
}

} // namespace syncoll::verifier
