// Which sends may write straight into the receiver's memory (zero-copy) instead of its FIFO.
//
// MSCCL-IR pairs the k-th send of a connection with its k-th receive, so the destination of every
// send is known here. A direct put lands while the receiver may still be anywhere before its
// receive R, so it is safe exactly when every other access of the receiver's rank to R's
// destination units is ordered after R. Ordering is taken from the rank's own program order and
// dependencies only (vector clocks over its thread blocks); an order that only holds through
// other ranks is not used, which can only leave a safe put staged, never the reverse. Tiles of
// different pipeline iterations are disjoint elements, and the FIFO's credits still bound how far
// ahead a sender runs, so the question is the same in every iteration.
#include "backend/instruction_table.h"

#include <algorithm>
#include <unordered_map>

namespace syncoll::backend {
namespace {

// Analysis bounds: past them a rank's receives stay staged (the answer is conservative).
constexpr int64_t kMaxClockEntries = int64_t(1) << 26;
constexpr size_t kMaxAccessesPerUnit = 4096;

bool lands_candidate(uint32_t bits) {
  return (bits & device::kReceives) && (bits & device::kWritesDst) && !(bits & device::kReduces);
}

// Steps of the sending (or receiving) block of every connection, in order.
struct ConnectionSteps {
  std::vector<int32_t> sends, receives;
};

// clock[x * tbs + t]: the last step of thread block t ordered before-or-at step x, or -1.
class RankOrder {
public:
  RankOrder(std::span<const device::Step> steps, std::span<const device::Block> blocks,
            int first_block, int tbs)
      : tbs_(tbs), first_step_(blocks[size_t(first_block)].first_step) {
    const auto &last = blocks[size_t(first_block + tbs - 1)];
    const int64_t n = last.first_step + last.num_steps - first_step_;
    if (n * tbs > kMaxClockEntries)
      return;
    clock_.assign(size_t(n * tbs), -1);
    std::vector<int> cursor(size_t(tbs), 0), queue;
    std::unordered_map<int64_t, std::vector<int>> waiters; // (tb, step) -> tbs waiting on it
    for (int t = 0; t < tbs; ++t)
      queue.push_back(t);
    int64_t done = 0;
    while (!queue.empty()) {
      const int t = queue.back();
      queue.pop_back();
      const device::Block &b = blocks[size_t(first_block + t)];
      while (cursor[size_t(t)] < b.num_steps) {
        const int k = cursor[size_t(t)];
        const int64_t x = b.first_step + k - first_step_;
        const device::Step &s = steps[size_t(b.first_step + k)];
        int dep_tb = -1;
        if (s.dependency_block >= 0) {
          dep_tb = s.dependency_block - first_block;
          if (dep_tb < 0 || dep_tb >= tbs ||
              s.dependency_step >= blocks[size_t(s.dependency_block)].num_steps) {
            clock_.clear();
            return;
          }
          if (cursor[size_t(dep_tb)] <= s.dependency_step) {
            waiters[int64_t(dep_tb) << 32 | s.dependency_step].push_back(t);
            break;
          }
        }
        int32_t *c = &clock_[size_t(x * tbs)];
        if (k > 0)
          std::copy_n(c - tbs, tbs, c);
        if (dep_tb >= 0) {
          const int64_t y =
              blocks[size_t(s.dependency_block)].first_step + s.dependency_step - first_step_;
          for (int u = 0; u < tbs; ++u)
            c[u] = std::max(c[u], clock_[size_t(y * tbs + u)]);
        }
        c[t] = k;
        ++cursor[size_t(t)];
        ++done;
        if (auto w = waiters.find(int64_t(t) << 32 | k); w != waiters.end()) {
          queue.insert(queue.end(), w->second.begin(), w->second.end());
          waiters.erase(w);
        }
      }
    }
    if (done != n)
      clock_.clear(); // a cycle: not a verified program; leave everything staged
  }
  bool known() const { return !clock_.empty(); }
  /// Step `x` (global index) starts only after step k of thread block t has completed.
  bool after(int64_t x, int t, int k) const {
    return clock_[size_t((x - first_step_) * tbs_ + t)] >= k;
  }

private:
  int tbs_;
  int64_t first_step_;
  std::vector<int32_t> clock_;
};

} // namespace

void ExecutableProgram::mark_direct_puts() {
  // Pair sends with receives per connection; a connection qualifies when every pair has one count
  // (then count splitting cuts both sides into the same messages at every size).
  std::vector<ConnectionSteps> on(connections_.size());
  for (const device::Block &b : blocks_)
    for (int k = 0; k < b.num_steps; ++k) {
      const int32_t x = b.first_step + k;
      if (steps_[size_t(x)].bits & device::kSends)
        on[size_t(b.send_connection)].sends.push_back(x);
      if (steps_[size_t(x)].bits & device::kReceives)
        on[size_t(b.recv_connection)].receives.push_back(x);
    }
  std::vector<int32_t> paired_send(steps_.size(), -1);
  for (const ConnectionSteps &c : on) {
    if (c.sends.size() != c.receives.size())
      continue;
    bool same = true;
    for (size_t i = 0; i < c.sends.size(); ++i)
      same = same && steps_[size_t(c.sends[i])].count == steps_[size_t(c.receives[i])].count;
    if (same)
      for (size_t i = 0; i < c.sends.size(); ++i)
        paired_send[size_t(c.receives[i])] = c.sends[i];
  }

  int first_block = 0;
  for (const RankProgram &rp : program_.ranks()) {
    const int tbs = int(rp.thread_blocks.size());
    if (tbs == 0)
      continue;
    const RankOrder order(steps_, blocks_, first_block, tbs);
    if (order.known()) {
      // Every access of the rank's steps, by unit.
      struct Access {
        int32_t unit;
        int32_t step;
        int tb, k;
      };
      std::vector<Access> accesses;
      for (int t = 0; t < tbs; ++t) {
        const device::Block &b = blocks_[size_t(first_block + t)];
        for (int k = 0; k < b.num_steps; ++k) {
          const device::Step &s = steps_[size_t(b.first_step + k)];
          for (int c = 0; c < s.count; ++c) {
            if (s.bits & device::kReadsSrc)
              accesses.push_back({units_[size_t(s.src + c)], b.first_step + k, t, k});
            if (s.bits & (device::kReadsDst | device::kWritesDst))
              accesses.push_back({units_[size_t(s.dst + c)], b.first_step + k, t, k});
          }
        }
      }
      std::sort(accesses.begin(), accesses.end(), [](const Access &a, const Access &b) {
        return std::tie(a.unit, a.step) < std::tie(b.unit, b.step);
      });
      std::vector<char> unsafe(steps_.size(), 0);
      for (size_t lo = 0; lo < accesses.size();) {
        size_t hi = lo;
        while (hi < accesses.size() && accesses[hi].unit == accesses[lo].unit)
          ++hi;
        for (size_t r = lo; r < hi; ++r) {
          const Access &R = accesses[r];
          if (!lands_candidate(steps_[size_t(R.step)].bits) || paired_send[size_t(R.step)] < 0)
            continue;
          bool safe = hi - lo <= kMaxAccessesPerUnit;
          for (size_t x = lo; safe && x < hi; ++x)
            safe = accesses[x].step == R.step || order.after(accesses[x].step, R.tb, R.k);
          if (!safe)
            unsafe[size_t(R.step)] = 1;
        }
        lo = hi;
      }
      for (int t = 0; t < tbs; ++t) {
        const device::Block &b = blocks_[size_t(first_block + t)];
        for (int k = 0; k < b.num_steps; ++k) {
          const int32_t x = b.first_step + k;
          device::Step &r = steps_[size_t(x)];
          if (!lands_candidate(r.bits) || paired_send[size_t(x)] < 0 || unsafe[size_t(x)])
            continue;
          device::Step &s = steps_[size_t(paired_send[size_t(x)])];
          r.bits |= device::kLandsDirect;
          s.bits |= device::kPutsDirect;
          s.put = r.dst;
          ++direct_puts_;
        }
      }
    }
    first_block += tbs;
  }
}

} // namespace syncoll::backend
