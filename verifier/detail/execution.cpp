#include "verifier/detail/execution.h"

#include "model/invariant.h"

#include <algorithm>
#include <deque>

namespace syncoll::verifier::detail {
namespace {

using Payload = std::vector<Value>;

class Executor {
public:
  Executor(const Program &p, const ConnectionMap &cm, const ExecutionConfig &cfg,
           SymbolicMemory *memory)
      : p_(p), cm_(cm), cfg_(cfg), memory_(memory) {
    const size_t n = size_t(cm.num_tbs);
    rank_of_.resize(n);
    tb_of_.resize(n);
    cursor_.resize(n);
    for (const RankProgram &rp : p.ranks())
      for (const ThreadBlock &tb : rp.thread_blocks) {
        size_t g = size_t(cm.tb_base[rp.rank.index()]) + tb.id.index();
        rank_of_[g] = rp.rank;
        tb_of_[g] = &tb;
        cursor_[g] = tb.steps.begin();
        max_len_ = std::max<long long>(max_len_, static_cast<long long>(tb.steps.size()));
      }
    it_.assign(n, 0);
    step_.assign(n, 0);
    msg_.assign(n, 0);
    done_.assign(n, false);
    queued_.assign(n, false);
    flag_.assign(n, -1);
    flag_waiters_.resize(n);
    count_.assign(cm.connections.size(), 0);
    fifo_.resize(cm.connections.size());
    push_waiters_.resize(cm.connections.size());
    pop_waiters_.resize(cm.connections.size());
  }

  ExecutionResult run() {
    for (size_t g = 0; g < it_.size(); ++g) {
      if (tb_of_[g]->steps.empty() || cfg_.iterations <= 0)
        done_[g] = true;
      else
        enqueue(int(g));
    }
    while (!ready_.empty()) {
      int g = ready_.back();
      ready_.pop_back();
      queued_[size_t(g)] = false;
      advance(g);
    }
    ExecutionResult r;
    r.messages_moved = moved_;
    for (size_t g = 0; g < it_.size(); ++g) {
      if (done_[g]) {
        ++r.finished_tbs;
        continue;
      }
      r.blocked.push_back(blocked_state(int(g)));
    }
    r.completed = r.blocked.empty();
    return r;
  }

private:
  const Program &p_;
  const ConnectionMap &cm_;
  const ExecutionConfig &cfg_;
  SymbolicMemory *memory_;
  long long max_len_ = 0;
  long long moved_ = 0;
  std::vector<RankId> rank_of_;
  std::vector<const ThreadBlock *> tb_of_;
  /// Each block's current step: walking the runs, not searching them on every visit.
  std::vector<StepList::const_iterator> cursor_;
  std::vector<int> it_, step_, msg_;
  std::vector<bool> done_, queued_;
  std::vector<long long> flag_; ///< (iteration, step) of the last published step, -1 none
  std::vector<std::vector<int>> flag_waiters_;
  std::vector<int> count_;
  std::vector<std::deque<Payload>> fifo_;
  std::vector<std::vector<int>> push_waiters_, pop_waiters_;
  std::vector<int> ready_;

  long long key(long long it, long long step) const { return it * (max_len_ + 1) + step; }

  void enqueue(int g) {
    if (!queued_[size_t(g)] && !done_[size_t(g)]) {
      queued_[size_t(g)] = true;
      ready_.push_back(g);
    }
  }
  void wake(std::vector<int> &waiters) {
    for (int w : waiters)
      enqueue(w);
    waiters.clear();
  }

  int global(RankId rank, TbId tb) const { return cm_.tb_base[rank.index()] + tb.value(); }

  bool dependency_met(int g, const Instruction &in) const {
    if (!in.dependency)
      return true;
    const RankProgram &rp = p_.rank(rank_of_[size_t(g)]);
    if (in.dependency->tb.index() >= rp.thread_blocks.size())
      return false; // a missing target never publishes (structural rule dep-target)
    return flag_[size_t(global(rp.rank, in.dependency->tb))] >=
           key(it_[size_t(g)], in.dependency->step.value());
  }

  void advance(int g) {
    const size_t G = size_t(g);
    const ThreadBlock &tb = *tb_of_[G];
    const RankId rank = rank_of_[G];
    const int sc = cm_.send_connection[rank.index()][tb.id.index()];
    const int rc = cm_.recv_connection[rank.index()][tb.id.index()];
    while (!done_[G]) {
      const Instruction in = *cursor_[G];
      if (msg_[G] == 0 && !dependency_met(g, in)) {
        const RankProgram &rp = p_.rank(rank);
        if (in.dependency->tb.index() < rp.thread_blocks.size())
          flag_waiters_[size_t(global(rank, in.dependency->tb))].push_back(g);
        return;
      }
      const int n = messages_of(in, cfg_.max_chunks_per_transfer);
      if (n == 0) {
        if (memory_ && it_[G] == 0)
          apply_local(rank, in);
        complete_step(g);
        continue;
      }
      const bool pops = op_receives(in.op), pushes = op_sends(in.op);
      if (pops && count_[size_t(rc)] == 0) {
        pop_waiters_[size_t(rc)].push_back(g);
        return;
      }
      if (pushes && count_[size_t(sc)] >= cfg_.fifo_capacity) {
        push_waiters_[size_t(sc)].push_back(g);
        return;
      }
      Payload received;
      if (pops) {
        --count_[size_t(rc)];
        received = std::move(fifo_[size_t(rc)].front());
        fifo_[size_t(rc)].pop_front();
        wake(push_waiters_[size_t(rc)]);
      }
      Payload sent = message_data(rank, in, msg_[G], n, it_[G] == 0 && memory_, received);
      if (pushes) {
        ++count_[size_t(sc)];
        fifo_[size_t(sc)].push_back(std::move(sent));
        wake(pop_waiters_[size_t(sc)]);
      }
      ++moved_;
      if (++msg_[G] == n)
        complete_step(g);
    }
  }

  void complete_step(int g) {
    const size_t G = size_t(g);
    const ThreadBlock &tb = *tb_of_[G];
    if ((*cursor_[G]).has_dep) {
      flag_[G] = key(it_[G], step_[G]);
      wake(flag_waiters_[G]);
    }
    msg_[G] = 0;
    ++cursor_[G];
    if (++step_[G] == static_cast<int>(tb.steps.size())) {
      step_[G] = 0;
      cursor_[G] = tb.steps.begin();
      if (++it_[G] == cfg_.iterations)
        done_[G] = true;
    }
  }

  // The data one message moves, and the writes it makes (docs/semantics.md, "Step types").
  Payload message_data(RankId rank, const Instruction &in, int m, int n, bool track,
                       const Payload &received) {
    if (!track)
      return {};
    // The executor's transfers carry max_chunks_per_transfer chunks each, the last the rest.
    const int per = n <= 1 ? in.count : cfg_.max_chunks_per_transfer;
    const int lo = std::min(in.count, m * per), hi = std::min(in.count, (m + 1) * per);
    auto recv_at = [&](int k) {
      size_t i = size_t(k - lo);
      return i < received.size() ? received[i] : Value{};
    };
    Payload out;
    for (int k = lo; k < hi; ++k) {
      Value v;
      switch (in.op) {
      case OpType::Send:
        v = memory_->read(rank, in.src.buffer, in.src.offset + k);
        break;
      case OpType::Recv:
      case OpType::RecvCopySend:
        v = recv_at(k);
        break;
      case OpType::RecvReduceSend:
      case OpType::RecvReduceCopy:
      case OpType::RecvReduceCopySend:
        v = combine(recv_at(k), memory_->read(rank, in.src.buffer, in.src.offset + k));
        break;
      case OpType::Copy:
      case OpType::Reduce:
      case OpType::Nop:
        SYNCOLL_UNREACHABLE("local step has no message");
      }
      if (op_traits(in.op).writes_dst)
        memory_->write(rank, in.dst.buffer, in.dst.offset + k, v);
      out.push_back(std::move(v));
    }
    return out;
  }

  void apply_local(RankId rank, const Instruction &in) {
    if (in.op != OpType::Copy && in.op != OpType::Reduce)
      return;
    std::vector<Value> values;
    for (int k = 0; k < in.count; ++k) {
      Value src = memory_->read(rank, in.src.buffer, in.src.offset + k);
      values.push_back(in.op == OpType::Copy
                           ? src
                           : combine(memory_->read(rank, in.dst.buffer, in.dst.offset + k), src));
    }
    for (int k = 0; k < in.count; ++k)
      memory_->write(rank, in.dst.buffer, in.dst.offset + k, values[size_t(k)]);
  }

  BlockedTb blocked_state(int g) const {
    const size_t G = size_t(g);
    const ThreadBlock &tb = *tb_of_[G];
    const RankId rank = rank_of_[G];
    const Instruction in = *cursor_[G];
    BlockedTb b;
    b.at = StepRef{rank, tb.id, step_[G], it_[G]};
    b.message = msg_[G];
    b.messages = messages_of(in, cfg_.max_chunks_per_transfer);
    if (msg_[G] == 0 && !dependency_met(g, in)) {
      b.kind = BlockedTb::Kind::Dependency;
      b.on_tb = in.dependency->tb;
      return b;
    }
    const int rc = cm_.recv_connection[rank.index()][tb.id.index()];
    if (op_receives(in.op) && count_[size_t(rc)] == 0) {
      b.kind = BlockedTb::Kind::Receive;
      b.connection = rc;
      return b;
    }
    b.kind = BlockedTb::Kind::Send;
    b.connection = cm_.send_connection[rank.index()][tb.id.index()];
    return b;
  }
};

} // namespace

ExecutionResult execute(const Program &program, const ConnectionMap &connections,
                        const ExecutionConfig &config, SymbolicMemory *memory) {
  SYNCOLL_INVARIANT(config.max_chunks_per_transfer >= 1, "a transfer carries at least one chunk");
  return Executor(program, connections, config, memory).run();
}

} // namespace syncoll::verifier::detail
