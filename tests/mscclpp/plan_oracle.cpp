// The plan oracle (plan_oracle.h): a weak-memory random scheduler of MSCCL++ plans written
// apart from the verifier, from docs/semantics.md alone.
#include "tests/mscclpp/plan_oracle.h"

#include "tests/mscclpp/oracle_values.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

namespace syncoll::testing {
namespace {

using namespace mscclpp;

struct Cell {
  Value value;
  bool packet = false; ///< written as a packet (its flag set) in this call
};

// A lane of a buffer as an operation names it; `cell` is the physical one (in place, input and
// output share memory).
struct Lane {
  int gpu = 0;
  PlanBuffer buffer = PlanBuffer::Input;
  int chunk = 0;
  int lane = 0;
};

struct Write {
  Lane at;
  Value value;
  bool packet = false;
  std::string by;
};

struct ProxyEntry {
  std::vector<Lane> dst;
  std::vector<Lane> src;     ///< read when the proxy gets to the entry
  std::vector<Value> values; ///< or what a reduction summed before the push
  bool packet = false;
  std::optional<std::tuple<int, ChannelKind, int>> signal; ///< a signal: the counter raised
  std::string by;
};

struct Instr {
  const PlanOp *op = nullptr;
  int lo = 0, hi = 0; ///< the lanes of each chunk this instance touches (pipeline iteration)
  std::string where;
};

struct Tb {
  int gpu = 0;
  const PlanThreadBlock *tb = nullptr;
  std::vector<Instr> code;
  size_t pc = 0;
  int phase = 0; ///< 1: arrived at a barrier, or a pwsf waiting for its proxy
  uint64_t generation = 0;
  std::vector<Write> pending;
  /// Loads done early: at a relaxed wait nothing orders the next operation's loads after it.
  std::map<std::pair<int, size_t>, Cell> hoisted;
  std::map<std::tuple<int, ChannelKind, int>, int> waits_done;
  std::map<int, std::deque<ProxyEntry>> proxy; ///< per port channel of the GPU
  bool done() const { return pc == code.size(); }
};

struct Slice {
  int gpu = 0;
  PlanBuffer buffer = PlanBuffer::Input;
  int index = 0, size = 1;
  bool remote = false; ///< through a channel (a peer's buffer)
  bool multicast = false;
  int channel = -1; ///< the op's channel it goes through (remote)
};

struct Misbehaviour {
  std::string how;
};

class Run {
public:
  Run(const ExecutionPlan &plan, int lanes, int iterations, uint64_t seed)
      : plan_(plan), lanes_(lanes), rng_(seed) {
    for (const PlanGpu &g : plan.gpus) {
      memory_.emplace_back(size_t(g.input_chunks + g.output_chunks + g.scratch_chunks) *
                           size_t(lanes));
      semaphores_.push_back(g.semaphores);
      for (const PlanThreadBlock &tb : g.threadblocks) {
        Tb t;
        t.gpu = g.id;
        t.tb = &tb;
        for (size_t k = 0; k < tb.ops.size(); ++k) {
          const PlanOp &op = tb.ops[k];
          if (op.kind != OpKind::Pipeline) {
            t.code.push_back({&op, 0, lanes, fmt::format("op {}", k)});
            continue;
          }
          for (int it = 0; it < iterations; ++it)
            for (size_t j = 0; j < op.ops.size(); ++j)
              t.code.push_back({&op.ops[j], it * lanes / iterations, (it + 1) * lanes / iterations,
                                fmt::format("op {}.{} (iteration {})", k, j, it)});
        }
        tbs_.push_back(std::move(t));
      }
    }
    launched_.assign(plan.gpus.size(), false);
    ended_.assign(plan.gpus.size(), false);
    std::uniform_int_distribution<int> pick(0, 2);
    constexpr double kWeights[] = {0.02, 1.0, 50.0};
    launch_weight_ = kWeights[pick(rng_)];
    deliver_weight_ = kWeights[pick(rng_)];
    proxy_weight_ = kWeights[pick(rng_)];
    hoist_ = 0.5 * pick(rng_);
    // Thread blocks run at speeds of their own: a slow one lets the others race ahead of it.
    for (size_t i = 0; i < tbs_.size(); ++i)
      speed_.push_back(kWeights[pick(rng_)]);
  }

  std::optional<std::string> go() {
    try {
      while (event()) {
      }
      std::vector<std::string> stuck;
      for (const Tb &t : tbs_)
        if (!t.done())
          stuck.push_back(fmt::format("GPU {} tb {} at {} ({})", t.gpu, t.tb->id,
                                      t.code[t.pc].where, op_traits(t.code[t.pc].op->kind).name));
      if (!stuck.empty())
        return fmt::format("deadlock: {}{}", stuck.front(),
                           stuck.size() > 1 ? fmt::format(" and {} more", stuck.size() - 1) : "");
      return std::nullopt;
    } catch (const Misbehaviour &m) {
      return m.how;
    }
  }

private:
  const ExecutionPlan &plan_;
  int lanes_;
  std::mt19937_64 rng_;
  double launch_weight_ = 1, deliver_weight_ = 1, proxy_weight_ = 1, hoist_ = 0;
  std::vector<double> speed_; ///< per thread block: how likely it moves next
  std::vector<std::vector<Cell>> memory_;
  std::vector<std::vector<int>> semaphores_;
  std::vector<Tb> tbs_;
  std::vector<bool> launched_, ended_;
  std::map<std::tuple<int, ChannelKind, int>, int> inbound_;
  std::map<std::pair<int, int>, std::pair<int, uint64_t>> barriers_; ///< arrivals, generation

  [[noreturn]] static void fail(std::string how) { throw Misbehaviour{std::move(how)}; }

  // ---- addressing ------------------------------------------------------------------------
  size_t cell(const Lane &l) const {
    const PlanGpu &g = plan_.gpus[size_t(l.gpu)];
    PlanBuffer b = l.buffer;
    int chunk = l.chunk;
    if (plan_.in_place) {
      if (plan_.collective == CollectiveKind::Allgather && b == PlanBuffer::Input)
        b = PlanBuffer::Output, chunk += l.gpu * g.input_chunks;
      else if (plan_.collective == CollectiveKind::ReduceScatter && b == PlanBuffer::Output)
        b = PlanBuffer::Input, chunk += l.gpu * g.output_chunks;
      else if (plan_.collective != CollectiveKind::Allgather &&
               plan_.collective != CollectiveKind::ReduceScatter && b == PlanBuffer::Input)
        b = PlanBuffer::Output;
    }
    if (chunk < 0 || chunk >= g.chunks(b))
      fail(fmt::format("GPU {}'s {} chunk {} does not exist", l.gpu, plan_buffer_name(b), chunk));
    const int base = b == PlanBuffer::Input    ? 0
                     : b == PlanBuffer::Output ? g.input_chunks
                                               : g.input_chunks + g.output_chunks;
    return size_t(base + chunk) * size_t(lanes_) + size_t(l.lane);
  }

  std::vector<int> peers(int gpu, ChannelKind kind) const {
    std::vector<int> out;
    for (const PlanChannel &c : plan_.gpus[size_t(gpu)].channels)
      if (c.kind == kind)
        out.insert(out.end(), c.peers.begin(), c.peers.end());
    return out;
  }

  int gpu_channel(const Tb &t, ChannelKind kind, int index) const {
    std::vector<int> ids;
    for (const ThreadBlockChannels &c : t.tb->channels)
      if (c.kind == kind)
        ids.insert(ids.end(), c.ids.begin(), c.ids.end());
    if (index < 0 || index >= int(ids.size()))
      fail(fmt::format("GPU {} tb {} names its {} channel {}, which it lacks", t.gpu, t.tb->id,
                       channel_kind_name(kind), index));
    return ids[size_t(index)];
  }

  // The counter a signal over GPU `gpu`'s channel `k` raises: the m-th channel from one GPU to
  // another pairs with the m-th one back.
  std::optional<std::tuple<int, ChannelKind, int>> partner(int gpu, ChannelKind kind, int k) const {
    const std::vector<int> mine = peers(gpu, kind);
    if (k < 0 || k >= int(mine.size()))
      return std::nullopt;
    const int peer = mine[size_t(k)];
    const long m = std::count(mine.begin(), mine.begin() + k, peer);
    const std::vector<int> theirs = peers(peer, kind);
    for (int j = 0, seen = 0; j < int(theirs.size()); ++j)
      if (theirs[size_t(j)] == gpu && seen++ == m)
        return std::tuple{peer, kind, j};
    return std::nullopt;
  }

  std::vector<Slice> resolve(const Tb &t, const PlanOp &op, const BufferSlice &s,
                             int remote_index) const {
    if (s.switch_channel) {
      const int group = gpu_channel(t, ChannelKind::Switch, *s.switch_channel);
      int seen = 0;
      for (const PlanChannel &c : plan_.gpus[size_t(t.gpu)].channels) {
        if (c.kind != ChannelKind::Switch)
          continue;
        for (const std::vector<int> &ranks : c.rank_groups)
          if (seen++ == group) {
            std::vector<Slice> out;
            for (int r : ranks)
              out.push_back(
                  {r, c.buffer.value_or(PlanBuffer::Output), s.index, s.size, true, true});
            return out;
          }
      }
      fail(fmt::format("GPU {} tb {} names switch channel {}, which its GPU lacks", t.gpu, t.tb->id,
                       group));
    }
    if (s.local)
      return {Slice{t.gpu, *s.local, s.index, s.size}};
    std::vector<int> ids;
    for (const ThreadBlockRemoteBuffers &r : t.tb->remote_buffers)
      if (r.access == op.channel_kind)
        ids.insert(ids.end(), r.ids.begin(), r.ids.end());
    const int r = s.remote.value_or(-1);
    const auto &remotes = plan_.gpus[size_t(t.gpu)].remote_buffers;
    if (r < 0 || r >= int(ids.size()) || ids[size_t(r)] >= int(remotes.size()))
      fail(fmt::format("GPU {} tb {} names remote buffer {}, which it lacks", t.gpu, t.tb->id, r));
    const PlanRemoteBuffer &rb = remotes[size_t(ids[size_t(r)])];
    return {Slice{rb.rank, rb.buffer, s.index, s.size, true, false, remote_index}};
  }

  // ---- memory ----------------------------------------------------------------------------
  Cell read(const Tb &t, const Lane &l) const {
    const size_t c = cell(l);
    for (auto w = t.pending.rbegin(); w != t.pending.rend(); ++w)
      if (w->at.gpu == l.gpu && cell(w->at) == c)
        return {w->value, w->packet};
    if (const auto h = t.hoisted.find({l.gpu, c}); h != t.hoisted.end())
      return h->second;
    return memory_[size_t(l.gpu)][c];
  }

  void deliver(const Write &w) {
    const bool reused = w.at.buffer != PlanBuffer::Scratch || !plan_.double_scratch;
    if (!launched_[size_t(w.at.gpu)] && reused)
      fail(fmt::format("{} wrote GPU {}'s {} chunk {} before GPU {}'s kernel started", w.by,
                       w.at.gpu, plan_buffer_name(w.at.buffer), w.at.chunk, w.at.gpu));
    if (ended_[size_t(w.at.gpu)] && w.at.buffer != PlanBuffer::Scratch)
      fail(fmt::format("{} wrote GPU {}'s {} chunk {} after GPU {}'s kernel ended", w.by, w.at.gpu,
                       plan_buffer_name(w.at.buffer), w.at.chunk, w.at.gpu));
    memory_[size_t(w.at.gpu)][cell(w.at)] = {w.value, w.packet};
  }

  void fence(Tb &t) {
    for (const Write &w : t.pending)
      deliver(w);
    t.pending.clear();
  }

  // ---- kernels ---------------------------------------------------------------------------
  void launch(int gpu) {
    launched_[size_t(gpu)] = true;
    const PlanGpu &g = plan_.gpus[size_t(gpu)];
    for (int k = 0; k < g.input_chunks; ++k)
      for (int l = 0; l < lanes_; ++l)
        memory_[size_t(gpu)][cell({gpu, PlanBuffer::Input, k, l})] = {
            std::vector<uint64_t>{term(gpu, k, l)}, false};
  }

  // The last thread block of a GPU is done: its writes are visible, its user reads the output
  // and may then write its input for the next call.
  void end(int gpu) {
    for (Tb &t : tbs_)
      if (t.gpu == gpu)
        fence(t);
    const PlanGpu &g = plan_.gpus[size_t(gpu)];
    for (int k = 0; k < g.output_chunks; ++k)
      for (int l = 0; l < lanes_; ++l) {
        const Value got = memory_[size_t(gpu)][cell({gpu, PlanBuffer::Output, k, l})].value;
        const Value want = oracle_expected(plan_, gpu, k, l);
        if (!want)
          fail("the plan's collective is not one MSCCL++'s executor runs");
        if (got != want)
          fail(fmt::format("GPU {}'s output chunk {} lane {} when its kernel ended: {}, not {}",
                           gpu, k, l, show(got), show(want)));
      }
    ended_[size_t(gpu)] = true;
    if (!plan_.in_place)
      for (int k = 0; k < g.input_chunks; ++k)
        for (int l = 0; l < lanes_; ++l)
          memory_[size_t(gpu)][cell({gpu, PlanBuffer::Input, k, l})] = {};
  }

  // ---- operations ------------------------------------------------------------------------
  std::pair<int, int> lanes_of(const Tb &t) const { return lanes_of(t.code[t.pc]); }
  static std::pair<int, int> lanes_of(const Instr &in) {
    const int width = (in.hi - in.lo) / in.op->group_size;
    const int lo = in.lo + in.op->group_index * width;
    return {lo, lo + width};
  }

  std::vector<Slice> slices(const Tb &t, const std::vector<BufferSlice> &list) const {
    return slices(t, *t.code[t.pc].op, list);
  }
  std::vector<Slice> slices(const Tb &t, const PlanOp &op,
                            const std::vector<BufferSlice> &list) const {
    std::vector<Slice> out;
    int remote = 0;
    for (const BufferSlice &s : list)
      for (const Slice &r : resolve(t, op, s, s.remote ? remote++ : -1))
        out.push_back(r);
    return out;
  }

  std::vector<int> port_channels(const Tb &t, const PlanOp &op) const {
    std::vector<int> out;
    for (int c : op.channels)
      out.push_back(gpu_channel(t, op.channel_kind, c));
    return out;
  }

  bool ready(const Tb &t) const {
    const PlanOp &op = *t.code[t.pc].op;
    const OpTraits &traits = op_traits(op.kind);
    if (op.kind == OpKind::Wait || op.kind == OpKind::RelaxedWait) {
      // A channel named twice takes two signals.
      std::map<std::tuple<int, ChannelKind, int>, int> wanted;
      for (int c : op.channels)
        ++wanted[{t.gpu, op.channel_kind, gpu_channel(t, op.channel_kind, c)}];
      for (const auto &[key, n] : wanted) {
        const auto got = inbound_.find(key);
        const auto taken = t.waits_done.find(key);
        if ((got == inbound_.end() ? 0 : got->second) <
            (taken == t.waits_done.end() ? 0 : taken->second) + n)
          return false;
      }
      return true;
    }
    if (op.kind == OpKind::SemAcquire)
      return std::all_of(op.semaphores.begin(), op.semaphores.end(),
                         [&](int s) { return semaphores_[size_t(t.gpu)][size_t(s)] > 0; });
    if (op.kind == OpKind::Barrier)
      return t.phase == 0 || barriers_.at({t.gpu, op.barrier_id.value_or(0)}).second > t.generation;
    if (op.kind == OpKind::Flush || (op.kind == OpKind::PutWithSignalAndFlush && t.phase == 1)) {
      for (int k : port_channels(t, op))
        if (t.proxy.count(k) && !t.proxy.at(k).empty())
          return false;
      return true;
    }
    if (traits.packets && op.kind != OpKind::PutPackets && op.kind != OpKind::CopyPackets) {
      const auto [lo, hi] = lanes_of(t);
      for (const Slice &s : slices(t, op.src))
        if (s.gpu == t.gpu && s.buffer == PlanBuffer::Scratch && !s.remote)
          for (int k = s.index; k < s.index + s.size; ++k)
            for (int l = lo; l < hi; ++l)
              if (!read(t, {s.gpu, s.buffer, k, l}).packet)
                return false;
    }
    return true;
  }

  std::string who(const Tb &t) const {
    return fmt::format("GPU {} tb {} {} ({})", t.gpu, t.tb->id, t.code[t.pc].where,
                       op_traits(t.code[t.pc].op->kind).name);
  }

  void move_data(Tb &t) {
    const PlanOp &op = *t.code[t.pc].op;
    const OpTraits &traits = op_traits(op.kind);
    const std::vector<Slice> src = slices(t, op.src), dst = slices(t, op.dst);
    if (src.empty() || dst.empty())
      return;
    const auto [lo, hi] = lanes_of(t);
    auto lanes = [&, lo = lo, hi = hi](const Slice &s) {
      std::vector<Lane> out;
      for (int k = s.index; k < s.index + s.size; ++k)
        for (int l = lo; l < hi; ++l)
          out.push_back({s.gpu, s.buffer, k, l});
      return out;
    };
    // Which source each destination takes: the sum of all (a reduction), its own, or the one.
    std::vector<Value> sum;
    if (traits.reduces)
      for (const Slice &s : src) {
        if (s.size != src.front().size)
          fail(fmt::format("{} reduces slices of {} and {} chunks", who(t), src.front().size,
                           s.size));
        std::vector<Value> v;
        for (const Lane &l : lanes(s))
          v.push_back(read(t, l).value);
        if (sum.empty())
          sum = std::move(v);
        else
          for (size_t i = 0; i < v.size(); ++i)
            sum[i] = add(sum[i], v[i]);
      }
    else if (src.size() != dst.size() && src.size() != 1)
      fail(fmt::format("{} moves {} source slices into {} destinations", who(t), src.size(),
                       dst.size()));
    bool fenced = false;
    for (size_t i = 0; i < dst.size(); ++i) {
      const Slice &from = traits.reduces ? src.front() : src.size() == 1 ? src[0] : src[i];
      if (from.size != dst[i].size)
        fail(fmt::format("{} moves {} chunk(s) into {}", who(t), from.size, dst[i].size));
      const std::vector<Lane> to = lanes(dst[i]), source = lanes(from);
      const bool packet = traits.packets && dst[i].buffer == PlanBuffer::Scratch;
      if (op.channel_kind == ChannelKind::Port && dst[i].remote) {
        // The proxy reads the source when it gets to the entry; the push is fenced.
        if (!fenced)
          fence(t), fenced = true;
        ProxyEntry e{to,
                     traits.reduces ? std::vector<Lane>{} : source,
                     traits.reduces ? sum : std::vector<Value>{},
                     packet,
                     {},
                     who(t)};
        const size_t through =
            std::min(size_t(std::max(dst[i].channel, 0)), op.channels.size() - 1);
        t.proxy[gpu_channel(t, op.channel_kind, op.channels[through])].push_back(std::move(e));
        continue;
      }
      for (size_t j = 0; j < to.size(); ++j) {
        const Value v = traits.reduces ? sum[j] : read(t, source[j]).value;
        Write w{to[j], v, packet, who(t)};
        if (dst[i].multicast)
          deliver(w); // done at the switch when the thread block goes on
        else
          t.pending.push_back(std::move(w));
      }
    }
  }

  void signal(Tb &t) {
    const PlanOp &op = *t.code[t.pc].op;
    if (op.kind == OpKind::Signal && op.channel_kind == ChannelKind::Memory)
      fence(t);
    for (int c : op.channels) {
      const int k = gpu_channel(t, op.channel_kind, c);
      const auto counter = partner(t.gpu, op.channel_kind, k);
      if (!counter)
        continue; // a signal into a channel nobody listens on
      if (op.channel_kind == ChannelKind::Port) {
        fence(t);
        t.proxy[k].push_back({{}, {}, {}, false, counter, who(t)});
      } else {
        ++inbound_[*counter];
      }
    }
  }

  // Runs the thread block's next operation; a barrier and a pwsf take two steps (arriving and
  // leaving, pushing and seeing the proxy done).
  void step(Tb &t) {
    const PlanOp &op = *t.code[t.pc].op;
    if (op.kind == OpKind::Barrier && t.phase == 0) {
      fence(t);
      auto &[arrived, generation] = barriers_[{t.gpu, op.barrier_id.value_or(0)}];
      t.generation = generation;
      t.phase = 1;
      const int needed =
          op.barrier_threadblocks.value_or(int(plan_.gpus[size_t(t.gpu)].threadblocks.size()));
      if (++arrived >= needed)
        arrived = 0, ++generation;
      return;
    }
    if (op.kind == OpKind::PutWithSignalAndFlush && t.phase == 0) {
      move_data(t);
      signal(t);
      t.phase = 1;
      return;
    }
    if (op.kind == OpKind::Wait || op.kind == OpKind::RelaxedWait)
      for (int c : op.channels)
        ++t.waits_done[{t.gpu, op.channel_kind, gpu_channel(t, op.channel_kind, c)}];
    if (op.kind == OpKind::SemAcquire || op.kind == OpKind::SemRelease) {
      if (op.kind == OpKind::SemRelease)
        fence(t);
      for (int s : op.semaphores)
        semaphores_[size_t(t.gpu)][size_t(s)] += op.kind == OpKind::SemRelease ? 1 : -1;
    }
    if (t.phase == 0)
      move_data(t);
    if (op.kind == OpKind::Signal || op.kind == OpKind::RelaxedSignal ||
        op.kind == OpKind::PutWithSignal)
      signal(t);
    t.phase = 0;
    if (op.kind != OpKind::RelaxedWait)
      t.hoisted.clear();
    ++t.pc;
    if (!t.done() && t.code[t.pc].op->kind == OpKind::RelaxedWait &&
        std::bernoulli_distribution(hoist_)(rng_))
      hoist(t);
    if (t.done() && std::all_of(tbs_.begin(), tbs_.end(),
                                [&](const Tb &o) { return o.gpu != t.gpu || o.done(); }))
      end(t.gpu);
  }

  // The thread block arrived at relaxed waits: the operation after them may load its sources
  // now, before any signal the waits take (packets carry their own flags: not theirs). What
  // execution order alone makes visible stays so: a GPU's input its user wrote before its
  // kernel is loaded only once that kernel has started.
  void hoist(Tb &t) {
    size_t next = t.pc;
    while (next < t.code.size() && t.code[next].op->kind == OpKind::RelaxedWait)
      ++next;
    if (next == t.code.size() || op_traits(t.code[next].op->kind).packets)
      return;
    const auto [lo, hi] = lanes_of(t.code[next]);
    for (const Slice &s : slices(t, *t.code[next].op, t.code[next].op->src))
      for (int k = s.index; k < s.index + s.size && launched_[size_t(s.gpu)]; ++k)
        for (int l = lo; l < hi; ++l) {
          const Lane lane{s.gpu, s.buffer, k, l};
          t.hoisted[{s.gpu, cell(lane)}] = read(t, lane);
        }
  }

  void work_proxy(Tb &t, int k) {
    ProxyEntry e = std::move(t.proxy[k].front());
    t.proxy[k].pop_front();
    if (e.signal) {
      ++inbound_[*e.signal];
      return;
    }
    for (size_t j = 0; j < e.dst.size(); ++j)
      deliver({e.dst[j],
               e.values.empty() ? memory_[size_t(e.src[j].gpu)][cell(e.src[j])].value : e.values[j],
               e.packet, e.by});
  }

  // One event of the schedule, chosen at random among what can happen; false when nothing can.
  bool event() {
    std::vector<int> runnable, waiting_launch, writers;
    std::vector<std::pair<int, int>> proxies;
    for (size_t i = 0; i < tbs_.size(); ++i) {
      Tb &t = tbs_[i];
      if (!t.done() && launched_[size_t(t.gpu)] && ready(t))
        runnable.push_back(int(i));
      if (!t.pending.empty())
        writers.push_back(int(i));
      for (const auto &[k, q] : t.proxy)
        if (!q.empty())
          proxies.emplace_back(int(i), k);
    }
    for (size_t g = 0; g < launched_.size(); ++g)
      if (!launched_[g])
        waiting_launch.push_back(int(g));
    const double weights[] = {
        runnable.empty() ? 0 : 1.0, waiting_launch.empty() ? 0 : launch_weight_,
        writers.empty() ? 0 : deliver_weight_, proxies.empty() ? 0 : proxy_weight_};
    if (std::accumulate(std::begin(weights), std::end(weights), 0.0) == 0)
      return false;
    std::discrete_distribution<int> kind(std::begin(weights), std::end(weights));
    auto any = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); };
    switch (kind(rng_)) {
    case 0: {
      std::vector<double> speeds;
      for (int t : runnable)
        speeds.push_back(speed_[size_t(t)]);
      std::discrete_distribution<size_t> which(speeds.begin(), speeds.end());
      step(tbs_[size_t(runnable[which(rng_)])]);
    } break;
    case 1:
      launch(waiting_launch[any(waiting_launch.size())]);
      break;
    case 2: {
      // Any pending write, but a thread block's writes to one place keep their order
      // (coherence): the earlier ones to the same lane land first.
      Tb &t = tbs_[size_t(writers[any(writers.size())])];
      const size_t w = any(t.pending.size());
      const std::pair place{t.pending[w].at.gpu, cell(t.pending[w].at)};
      std::vector<Write> kept;
      for (size_t i = 0; i < t.pending.size(); ++i)
        if (i <= w && std::pair{t.pending[i].at.gpu, cell(t.pending[i].at)} == place)
          deliver(t.pending[i]);
        else
          kept.push_back(std::move(t.pending[i]));
      t.pending = std::move(kept);
      break;
    }
    default: {
      const auto [i, k] = proxies[any(proxies.size())];
      work_proxy(tbs_[size_t(i)], k);
      break;
    }
    }
    return true;
  }
};

int lanes_of(const ExecutionPlan &plan, int iterations) {
  int lcm = 1;
  for (const PlanGpu &g : plan.gpus)
    for (const PlanThreadBlock &tb : g.threadblocks)
      for (const PlanOp &op : tb.ops) {
        lcm = std::lcm(lcm, std::max(1, op.group_size));
        for (const PlanOp &body : op.ops)
          lcm = std::lcm(lcm, std::max(1, body.group_size));
      }
  return lcm * iterations;
}

} // namespace

PlanOracleVerdict run_plan_oracle(const ExecutionPlan &plan, int schedules, uint64_t seed) {
  bool pipelined = false;
  for (const PlanGpu &g : plan.gpus)
    for (const PlanThreadBlock &tb : g.threadblocks)
      for (const PlanOp &op : tb.ops)
        pipelined = pipelined || op.kind == OpKind::Pipeline;
  const int iterations = pipelined ? 2 : 1;
  const int lanes = lanes_of(plan, iterations);
  for (int s = 0; s < schedules; ++s) {
    const uint64_t schedule_seed = seed + uint64_t(s) * 0x9e3779b97f4a7c15ULL;
    Run run(plan, lanes, iterations, schedule_seed);
    if (auto how = run.go())
      return {true, fmt::format("{} (schedule seed {})", *how, schedule_seed)};
  }
  return {};
}

} // namespace syncoll::testing
