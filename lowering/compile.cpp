#include "lowering/compile.h"

#include "model/invariant.h"
#include "model/mscclir.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>

namespace syncoll::lowering {
namespace {

std::string executor_spelling(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::Custom:
  case CollectiveKind::AllToNext:
    return "custom";
  default:
    return std::string(collective_kind_name(kind));
  }
}

// One chunk of memory of a rank, with in-place aliasing resolved and scratch names kept apart.
struct Memory {
  int rank;
  BufferKind kind;
  std::string scratch;
  int index;
  auto operator<=>(const Memory &) const = default;
};

class Aliasing {
public:
  Aliasing(const CollectiveSpec &c, bool in_place) : c_(c), in_place_(in_place) {}
  Memory at(int rank, const Buffer &b, int index) const {
    if (in_place_ && b.kind != BufferKind::Scratch) {
      switch (c_.in_place()) {
      case InPlaceKind::None:
        break;
      case InPlaceKind::Same:
        return {rank, BufferKind::Output, {}, index};
      case InPlaceKind::InputInOutput:
        if (b.kind == BufferKind::Input)
          return {rank, BufferKind::Output, {}, rank * c_.input_chunks() + index};
        break;
      case InPlaceKind::OutputInInput:
        if (b.kind == BufferKind::Output)
          return {rank, BufferKind::Input, {}, rank * c_.output_chunks() + index};
        break;
      }
    }
    return {rank, b.kind, b.scratch, index};
  }

private:
  const CollectiveSpec &c_;
  bool in_place_;
};

// Last writer and readers since of every chunk of memory: the edges a new access needs.
class AccessTracker {
public:
  void access(int node, const std::vector<Memory> &reads, const std::vector<Memory> &writes,
              std::set<DagEdge> &edges) {
    for (const Memory &m : reads) {
      Slot &s = slots_[m];
      if (s.writer >= 0 && s.writer != node)
        edges.insert({s.writer, node, DependencyKind::True});
    }
    for (const Memory &m : writes) {
      Slot &s = slots_[m];
      if (s.writer >= 0 && s.writer != node)
        edges.insert({s.writer, node, DependencyKind::False});
      for (int r : s.readers)
        if (r != node)
          edges.insert({r, node, DependencyKind::False});
    }
    for (const Memory &m : reads)
      slots_[m].readers.push_back(node);
    for (const Memory &m : writes) {
      Slot &s = slots_[m];
      s.writer = node;
      s.readers.clear();
    }
  }

private:
  struct Slot {
    int writer = -1;
    std::vector<int> readers;
  };
  std::map<Memory, Slot> slots_;
};

std::vector<Memory> range(const Aliasing &a, RankId rank, const Buffer &b, int index, int count) {
  std::vector<Memory> out;
  for (int k = 0; k < count; ++k)
    out.push_back(a.at(rank.value(), b, index + k));
  return out;
}

// Why a schedule attempt failed: a flow that must move to another channel.
struct Conflict {
  int flow;
  std::string why;
  bool by_hand = false; ///< the program's own thread block hints clash: no channel fixes that
};

class Compiler {
public:
  Compiler(const DslProgram &p, const LowerOptions &o)
      : p_(p), o_(o), alias_(p.collective(), p.options().in_place) {}

  Expected<Lowered> run() {
    build_chunk_dag();
    expand();
    fuse();
    build_flows();
    for (int attempt = 0;; ++attempt) {
      std::optional<Conflict> conflict = order();
      if (!conflict)
        conflict = assign_thread_blocks();
      if (!conflict)
        break;
      if (conflict->by_hand)
        return fail({}, fmt::format("program '{}': {}", p_.name(), conflict->why));
      if (user_channel_[size_t(conflict->flow)])
        return fail({}, fmt::format("program '{}': {}; the channel was set by hand, so it "
                                    "cannot move",
                                    p_.name(), conflict->why));
      if (++flow_channel_[size_t(conflict->flow)] > kMaxChannelIndex - 1)
        return fail({}, fmt::format("program '{}': {}, and no channel below 32 is free", p_.name(),
                                    conflict->why));
    }
    SYNCOLL_TRY(program, emit());
    CollectiveSpec collective = p_.collective();
    if (o_.instances > 1) {
      SYNCOLL_TRY(scaled, replicate(program));
      program = std::move(scaled.first);
      collective = std::move(scaled.second);
    }
    verifier::VerifyOptions vo;
    vo.collective = collective;
    auto verified = verifier::certify(program, vo);
    return Lowered{std::move(chunk_dag_), std::move(dag_), std::move(program),
                   std::move(collective), std::move(verified)};
  }

private:
  // Operations with the memory they touch on each rank: the chunk DAG (seed gc3 4.1).
  void build_chunk_dag() {
    chunk_dag_.operations = p_.operations();
    AccessTracker tracker;
    std::set<DagEdge> edges;
    for (size_t i = 0; i < p_.operations().size(); ++i) {
      const Operation &op = p_.operations()[i];
      std::vector<Memory> reads =
          range(alias_, op.src.rank, op.src.buffer, op.src.index, op.src.count);
      const std::vector<Memory> writes =
          range(alias_, op.dst.rank, op.dst.buffer, op.dst.index, op.dst.count);
      if (op.kind == OperationKind::Reduce)
        reads.insert(reads.end(), writes.begin(), writes.end());
      tracker.access(int(i), reads, writes, edges);
    }
    chunk_dag_.edges.assign(edges.begin(), edges.end());
  }

  int add(DagInstruction in, int operation) {
    in.operations = {operation};
    dag_.instructions.push_back(std::move(in));
    return int(dag_.instructions.size()) - 1;
  }

  // Each operation becomes its instructions (seed gc3 4.1): a remote copy a send and a receive,
  // a remote reduce a send and a receive-reduce-copy whose local operand is the destination, a
  // local one a cpy or re.
  void expand() {
    for (size_t i = 0; i < p_.operations().size(); ++i) {
      const Operation &op = p_.operations()[i];
      const int n = int(i);
      DagInstruction in;
      in.count = op.src.count;
      if (op.src.rank == op.dst.rank) {
        in.rank = op.src.rank;
        in.op = op.kind == OperationKind::Copy ? OpType::Copy : OpType::Reduce;
        in.src_buffer = op.src.buffer;
        in.src_index = op.src.index;
        in.dst_buffer = op.dst.buffer;
        in.dst_index = op.dst.index;
        send_hint_.push_back(op.options.send_tb ? op.options.send_tb : op.options.recv_tb);
        recv_hint_.push_back(std::nullopt);
        channel_hint_.push_back(op.options.channel);
        preferred_channel_.push_back(op.options.preferred_channel);
        add(in, n);
        continue;
      }
      DagInstruction s = in;
      s.rank = op.src.rank;
      s.op = OpType::Send;
      s.src_buffer = op.src.buffer;
      s.src_index = op.src.index;
      s.dst_buffer = op.dst.buffer; // the runtime ignores a send's destination: the peer's, for
      s.dst_index = op.dst.index;   // a reader of the XML
      s.send_peer = op.dst.rank;
      send_hint_.push_back(op.options.send_tb);
      recv_hint_.push_back(std::nullopt);
      channel_hint_.push_back(op.options.channel);
      preferred_channel_.push_back(op.options.preferred_channel);
      const int sender = add(s, n);
      DagInstruction r = in;
      r.rank = op.dst.rank;
      r.recv_peer = op.src.rank;
      r.dst_buffer = op.dst.buffer;
      r.dst_index = op.dst.index;
      if (op.kind == OperationKind::Copy) {
        r.op = OpType::Recv;
        r.src_buffer = op.src.buffer; // ignored by the runtime: the sender's location
        r.src_index = op.src.index;
      } else {
        r.op = OpType::RecvReduceCopy;
        r.src_buffer = op.dst.buffer; // the local operand (reference 1.3, what msccl-tools gets
        r.src_index = op.dst.index;   // wrong)
      }
      send_hint_.push_back(std::nullopt);
      recv_hint_.push_back(op.options.recv_tb);
      channel_hint_.push_back(op.options.channel);
      preferred_channel_.push_back(op.options.preferred_channel);
      const int receiver = add(r, n);
      dag_.messages.emplace_back(sender, receiver);
    }
    recompute_edges();
  }

  std::vector<Memory> reads_of(const DagInstruction &in) const {
    switch (in.op) {
    case OpType::Send:
    case OpType::Copy:
      return range(alias_, in.rank, in.src_buffer, in.src_index, in.count);
    case OpType::Reduce:
    case OpType::RecvReduceCopy:
    case OpType::RecvReduceSend:
    case OpType::RecvReduceCopySend: {
      std::vector<Memory> r = range(alias_, in.rank, in.src_buffer, in.src_index, in.count);
      if (in.op == OpType::Reduce) {
        const auto d = range(alias_, in.rank, in.dst_buffer, in.dst_index, in.count);
        r.insert(r.end(), d.begin(), d.end());
      }
      return r;
    }
    default:
      return {};
    }
  }
  std::vector<Memory> writes_of(const DagInstruction &in) const {
    switch (in.op) {
    case OpType::Recv:
    case OpType::RecvCopySend:
    case OpType::Copy:
    case OpType::Reduce:
    case OpType::RecvReduceCopy:
    case OpType::RecvReduceCopySend:
      return range(alias_, in.rank, in.dst_buffer, in.dst_index, in.count);
    default:
      return {};
    }
  }

  // Same-rank data edges, in trace order (instruction index order is trace order).
  void recompute_edges() {
    std::set<DagEdge> edges;
    AccessTracker tracker;
    for (size_t i = 0; i < dag_.instructions.size(); ++i) {
      const DagInstruction &in = dag_.instructions[i];
      if (in.removed)
        continue;
      tracker.access(int(i), reads_of(in), writes_of(in), edges);
    }
    // The tracker is global over ranks, but memory carries its rank: every edge is same-rank.
    dag_.edges.assign(edges.begin(), edges.end());
  }

  // Fusion (seed gc3 4.2): a receive whose value goes straight out again becomes one
  // instruction. r + s of the received chunks -> rcs; rrc + s -> rrcs, or rrs when the reduced
  // value is only forwarded and then overwritten (the ring's reduce-scatter half).
  void fuse() {
    // Per memory chunk, every access in trace order: (instruction, writes).
    std::map<Memory, std::vector<std::pair<int, bool>>> history;
    for (size_t i = 0; i < dag_.instructions.size(); ++i) {
      const DagInstruction &in = dag_.instructions[i];
      for (const Memory &m : reads_of(in))
        history[m].emplace_back(int(i), false);
      for (const Memory &m : writes_of(in))
        history[m].emplace_back(int(i), true);
    }
    auto next_accesses = [&](int writer, const Memory &m) {
      std::vector<std::pair<int, bool>> after;
      const auto &h = history[m];
      auto it = std::find(h.begin(), h.end(), std::make_pair(writer, true));
      SYNCOLL_INVARIANT(it != h.end(), "a write missing from its history");
      for (++it; it != h.end(); ++it) {
        if (it->first == writer)
          continue;
        after.push_back(*it);
        if (it->second)
          break;
      }
      return after;
    };
    for (size_t i = 0; i < dag_.instructions.size(); ++i) {
      DagInstruction &r = dag_.instructions[i];
      // Only single-chunk receives fuse. A fused step of c chunks is c messages at large sizes
      // (reference 1.2, count splitting), and a ring of them fills Simple's 2-slot FIFOs with
      // the first send alone: every thread block then waits for output space (the verifier
      // finds this cycle in an aggregated hierarchical Allreduce). Unfused, the receiving
      // thread block drains its connection on its own.
      if (r.removed || r.count != 1 || (r.op != OpType::Recv && r.op != OpType::RecvReduceCopy))
        continue;
      const std::vector<Memory> written = writes_of(r);
      // The first later access of every written chunk must be one send reading exactly them.
      std::optional<int> forward;
      bool ok = true;
      for (const Memory &m : written) {
        auto after = next_accesses(int(i), m);
        if (after.empty() || after.front().second) {
          ok = false;
          break;
        }
        const int reader = after.front().first;
        if (forward && *forward != reader)
          ok = false;
        forward = reader;
      }
      if (!ok || !forward)
        continue;
      DagInstruction &s = dag_.instructions[size_t(*forward)];
      if (s.removed || s.op != OpType::Send || s.count != r.count ||
          range(alias_, s.rank, s.src_buffer, s.src_index, s.count) != written)
        continue;
      const auto sh = send_hint_[size_t(*forward)], rh = recv_hint_[i];
      if (channel_hint_[size_t(*forward)] != channel_hint_[i])
        continue;
      // The value dies after the send when every written chunk is next overwritten, read by
      // nothing but that send.
      bool dies = r.op == OpType::RecvReduceCopy;
      for (const Memory &m : written) {
        auto after = next_accesses(int(i), m);
        dies = dies && after.size() == 2 && after.back().second && after.front().first == *forward;
      }
      r.op = r.op == OpType::Recv ? OpType::RecvCopySend
                                  : (dies ? OpType::RecvReduceSend : OpType::RecvReduceCopySend);
      r.send_peer = s.send_peer;
      r.operations.insert(r.operations.end(), s.operations.begin(), s.operations.end());
      send_hint_[i] = sh;
      recv_hint_[i] = rh;
      s.removed = true;
      for (auto &[from, to] : dag_.messages)
        if (from == *forward)
          from = int(i);
    }
    recompute_edges();
  }

  int find(int x) {
    return flow_of_[size_t(x)] == x ? x : flow_of_[size_t(x)] = find(flow_of_[size_t(x)]);
  }

  // Flows: instructions joined by messages share a channel (a fused instruction's thread block
  // has one channel for both of its connections).
  void build_flows() {
    const size_t n = dag_.instructions.size();
    flow_of_.resize(n);
    std::iota(flow_of_.begin(), flow_of_.end(), 0);
    for (const auto &[a, b] : dag_.messages)
      flow_of_[size_t(find(a))] = find(b);
    flow_channel_.assign(n, 0);
    user_channel_.assign(n, false);
    for (size_t i = 0; i < n; ++i)
      if (!dag_.instructions[i].removed && preferred_channel_[i])
        flow_channel_[size_t(find(int(i)))] =
            std::max(flow_channel_[size_t(find(int(i)))], *preferred_channel_[i]);
    for (size_t i = 0; i < n; ++i)
      if (!dag_.instructions[i].removed && channel_hint_[i]) {
        flow_channel_[size_t(find(int(i)))] = *channel_hint_[i];
        user_channel_[size_t(find(int(i)))] = true;
      }
    // Priorities (seed gc3 5.2, as msccl-tools): depth in messages from the start, then the
    // longest path to the end first.
    std::vector<std::vector<int>> succ(n);
    std::vector<int> indeg(n, 0);
    for (const DagEdge &e : dag_.edges) {
      succ[size_t(e.from)].push_back(e.to);
      ++indeg[size_t(e.to)];
    }
    std::set<std::pair<int, int>> message_edges(dag_.messages.begin(), dag_.messages.end());
    for (const auto &[a, b] : dag_.messages) {
      succ[size_t(a)].push_back(b);
      ++indeg[size_t(b)];
    }
    depth_.assign(n, 0);
    height_.assign(n, 0);
    std::vector<int> topo;
    std::queue<int> q;
    for (size_t i = 0; i < n; ++i)
      if (!dag_.instructions[i].removed && indeg[i] == 0)
        q.push(int(i));
    while (!q.empty()) {
      const int u = q.front();
      q.pop();
      topo.push_back(u);
      for (int v : succ[size_t(u)]) {
        depth_[size_t(v)] =
            std::max(depth_[size_t(v)], depth_[size_t(u)] + int(message_edges.contains({u, v})));
        if (--indeg[size_t(v)] == 0)
          q.push(v);
      }
    }
    SYNCOLL_INVARIANT(topo.size() ==
                          size_t(std::count_if(dag_.instructions.begin(), dag_.instructions.end(),
                                               [](auto &x) { return !x.removed; })),
                      "the instruction DAG has a cycle");
    for (auto it = topo.rbegin(); it != topo.rend(); ++it)
      for (int v : succ[size_t(*it)])
        height_[size_t(*it)] = std::max(height_[size_t(*it)], height_[size_t(v)] + 1);
    succ_ = std::move(succ);
  }

  int channel_of(int i) { return flow_channel_[size_t(find(i))]; }

  // One global topological order (seed gc3 5.2) that also receives every connection's messages
  // in the order they were sent. None when that is impossible on the current channels: then a
  // flow that waits moves to the next channel.
  std::optional<Conflict> order() {
    const size_t n = dag_.instructions.size();
    std::vector<int> indeg(n, 0);
    for (size_t u = 0; u < n; ++u)
      for (int v : succ_[u])
        ++indeg[size_t(v)];
    std::vector<int> sender_of(n, -1), message_in(n, -1);
    for (size_t m = 0; m < dag_.messages.size(); ++m) {
      sender_of[size_t(dag_.messages[m].second)] = dag_.messages[m].first;
      message_in[size_t(dag_.messages[m].second)] = int(m);
    }
    using Key = std::tuple<int, int, int>; // depth, -height, index
    auto key = [&](int i) { return Key{depth_[size_t(i)], -height_[size_t(i)], i}; };
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    std::map<std::tuple<int, int, int>, std::deque<int>> fifo; // connection -> receivers queued
    std::set<int> waiting;                                     // data-ready, behind in a FIFO
    auto connection = [&](int receiver) {
      const DagInstruction &r = dag_.instructions[size_t(receiver)];
      return std::tuple<int, int, int>{r.recv_peer->value(), r.rank.value(), channel_of(receiver)};
    };
    auto release = [&](int i) {
      if (message_in[size_t(i)] >= 0) {
        auto &q = fifo[connection(i)];
        if (q.empty() || q.front() != i) {
          waiting.insert(i);
          return;
        }
      }
      ready.push(key(i));
    };
    for (size_t i = 0; i < n; ++i)
      if (!dag_.instructions[i].removed && indeg[i] == 0)
        release(int(i));
    dag_.order.clear();
    while (!ready.empty()) {
      const int u = std::get<2>(ready.top());
      ready.pop();
      dag_.order.push_back(u);
      if (message_in[size_t(u)] >= 0) {
        auto &q = fifo[connection(u)];
        q.pop_front();
        if (!q.empty() && waiting.erase(q.front()))
          ready.push(key(q.front()));
      }
      for (int v : succ_[size_t(u)]) {
        if (message_in[size_t(v)] >= 0 && sender_of[size_t(v)] == u) {
          auto &q = fifo[connection(v)];
          q.push_back(v);
          if (q.size() == 1 && waiting.erase(v))
            ready.push(key(v));
        }
        if (--indeg[size_t(v)] == 0)
          release(v);
      }
    }
    if (waiting.empty())
      return std::nullopt;
    const int stuck = *waiting.begin();
    const auto [a, b, ch] = connection(stuck);
    return Conflict{find(stuck),
                    fmt::format("messages on connection {}->{} channel {} would have to be "
                                "received out of the order they were sent",
                                a, b, ch)};
  }

  struct Tb {
    std::optional<RankId> send_peer, recv_peer;
    int channel = 0;
    std::optional<int> hint;
    std::vector<int> steps;
  };

  // Thread blocks in the global order (seed gc3 5.2): one send peer and one receive peer per
  // thread block, one thread block per connection direction.
  std::optional<Conflict> assign_thread_blocks() {
    tbs_.assign(size_t(p_.topology().num_ranks()), {});
    std::map<std::tuple<int, int, int>, int> send_owner, recv_owner; // (rank, peer, ch) -> tb
    std::vector<int> last_tb(dag_.instructions.size(), -1);
    std::vector<std::vector<int>> preds(dag_.instructions.size());
    for (const DagEdge &e : dag_.edges)
      preds[size_t(e.to)].push_back(e.from);
    for (int i : dag_.order) {
      DagInstruction &in = dag_.instructions[size_t(i)];
      auto &rank_tbs = tbs_[in.rank.index()];
      const std::optional<int> hint =
          send_hint_[size_t(i)] ? send_hint_[size_t(i)] : recv_hint_[size_t(i)];
      const bool local = !in.send_peer && !in.recv_peer;
      const int ch = local ? 0 : channel_of(i);
      auto fits = [&](const Tb &t) {
        return (local || t.channel == ch) &&
               (!in.send_peer || !t.send_peer || *t.send_peer == *in.send_peer) &&
               (!in.recv_peer || !t.recv_peer || *t.recv_peer == *in.recv_peer) &&
               (!hint || t.hint == hint) && (hint || !t.hint);
      };
      int tb = -1;
      std::optional<int> owner_s, owner_r;
      if (in.send_peer)
        if (auto it = send_owner.find({in.rank.value(), in.send_peer->value(), ch});
            it != send_owner.end())
          owner_s = it->second;
      if (in.recv_peer)
        if (auto it = recv_owner.find({in.rank.value(), in.recv_peer->value(), ch});
            it != recv_owner.end())
          owner_r = it->second;
      auto conflict = [&](const std::string &why) {
        return Conflict{find(i), fmt::format("rank {} channel {}: {}", in.rank.value(), ch, why)};
      };
      if (owner_s && owner_r && *owner_s != *owner_r)
        return conflict("its send and receive connections belong to different thread blocks");
      if (owner_s || owner_r) {
        tb = owner_s ? *owner_s : *owner_r;
        if (!fits(rank_tbs[size_t(tb)]))
          return conflict("the thread block owning its connection talks to another peer");
      } else if (local) {
        // Local work joins the thread block of its latest same-rank predecessor (fewest
        // cross-thread-block dependencies), else a thread block of its own.
        for (int p : preds[size_t(i)])
          if (last_tb[size_t(p)] >= 0 && fits(rank_tbs[size_t(last_tb[size_t(p)])]))
            tb = last_tb[size_t(p)];
      }
      // A thread block the program named by hand takes the instruction if it can.
      if (tb < 0 && hint)
        for (size_t t = 0; t < rank_tbs.size() && tb < 0; ++t)
          if (rank_tbs[t].hint == hint) {
            if (!fits(rank_tbs[t])) {
              Conflict c = conflict(fmt::format("thread block {} was asked to take instructions "
                                                "for different peers or channels",
                                                *hint));
              c.by_hand = true;
              return c;
            }
            tb = int(t);
          }
      // Local work without a predecessor shares a local thread block.
      if (tb < 0 && local)
        for (size_t t = 0; t < rank_tbs.size() && tb < 0; ++t)
          if (fits(rank_tbs[t]) && !rank_tbs[t].send_peer && !rank_tbs[t].recv_peer)
            tb = int(t);
      // Otherwise a new connection opens a new thread block: msccl-tools' auto policy of
      // separate send and receive thread blocks unless an instruction is fused. One thread block
      // that sends s, s, s and receives r, r, r from one peer holds 2 messages per FIFO with
      // Simple and deadlocks at large sizes (reference section 6, D3); apart, they never wait on
      // each other.
      if (tb < 0) {
        rank_tbs.push_back({std::nullopt, std::nullopt, ch, hint, {}});
        tb = int(rank_tbs.size()) - 1;
      }
      Tb &t = rank_tbs[size_t(tb)];
      if (in.send_peer) {
        t.send_peer = in.send_peer;
        send_owner[{in.rank.value(), in.send_peer->value(), ch}] = tb;
      }
      if (in.recv_peer) {
        t.recv_peer = in.recv_peer;
        recv_owner[{in.rank.value(), in.recv_peer->value(), ch}] = tb;
      }
      t.steps.push_back(i);
      in.thread_block = tb;
      in.channel = t.channel;
      last_tb[size_t(i)] = tb;
    }
    return std::nullopt;
  }

  // Cross-thread-block dependencies (seed gc3 5.2): each instruction waits for the last step of
  // every other thread block of its rank that it depends on, unless an earlier step of its own
  // thread block already waited for as much; more than one wait puts nops in front.
  Expected<Program> emit() {
    const int P = p_.topology().num_ranks();
    // Scratch layout: named buffers packed in name order.
    std::map<std::pair<int, std::string>, int> scratch_base;
    std::vector<int> scratch_size(size_t(P), 0);
    for (const auto &[key, size] : p_.scratch_sizes()) {
      scratch_base[key] = scratch_size[size_t(key.first)];
      scratch_size[size_t(key.first)] += size;
    }
    auto ref = [&](RankId rank, const Buffer &b, int index) {
      if (b.kind != BufferKind::Scratch)
        return BufferRef{b.kind, index};
      auto it = scratch_base.find({rank.value(), b.scratch});
      return BufferRef{BufferKind::Scratch, (it == scratch_base.end() ? 0 : it->second) + index};
    };
    std::vector<std::vector<int>> preds(dag_.instructions.size());
    for (const DagEdge &e : dag_.edges)
      preds[size_t(e.to)].push_back(e.from);
    std::vector<int> position(dag_.instructions.size(), -1); // within its thread block
    for (const auto &rank_tbs : tbs_)
      for (const Tb &t : rank_tbs)
        for (size_t k = 0; k < t.steps.size(); ++k)
          position[size_t(t.steps[k])] = int(k);
    // Dependencies per instruction as (tb, instruction).
    std::vector<std::vector<std::pair<int, int>>> waits(dag_.instructions.size());
    for (const auto &rank_tbs : tbs_)
      for (const Tb &t : rank_tbs) {
        std::map<int, int> known; // other tb -> highest position already waited for
        for (int i : t.steps) {
          std::map<int, int> need; // tb -> instruction
          for (int p : preds[size_t(i)]) {
            const int ptb = dag_.instructions[size_t(p)].thread_block;
            if (ptb == dag_.instructions[size_t(i)].thread_block)
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
            waits[size_t(i)].emplace_back(ptb, p);
          }
        }
      }
    // Final step indices: nops before an instruction with several waits.
    std::vector<int> final_index(dag_.instructions.size(), -1);
    std::set<int> depended_on;
    for (const auto &rank_tbs : tbs_)
      for (const Tb &t : rank_tbs) {
        int at = 0;
        for (int i : t.steps) {
          at += std::max<int>(0, int(waits[size_t(i)].size()) - 1);
          final_index[size_t(i)] = at++;
          for (const auto &w : waits[size_t(i)])
            depended_on.insert(w.second);
        }
      }
    ProgramDraft d;
    d.name = p_.name();
    const CollectiveSpec &c = p_.collective();
    d.collective = executor_spelling(c.kind());
    d.protocol = p_.options().protocol;
    d.num_ranks = P;
    d.in_place = p_.options().in_place;
    d.out_of_place = !p_.options().in_place;
    d.min_bytes = o_.min_bytes;
    d.max_bytes = o_.max_bytes;
    const bool per_rank = c.kind() == CollectiveKind::Allgather ||
                          c.kind() == CollectiveKind::ReduceScatter ||
                          c.kind() == CollectiveKind::Alltoall ||
                          c.kind() == CollectiveKind::Gather || c.kind() == CollectiveKind::Scatter;
    d.chunks_per_loop =
        per_rank ? P * c.chunk_factor() : std::max(c.input_chunks(), c.output_chunks());
    int channels = 1;
    for (int r = 0; r < P; ++r) {
      RankProgram rp;
      rp.rank = RankId(r);
      rp.input_chunks = c.input_chunks();
      rp.output_chunks = c.output_chunks();
      rp.scratch_chunks = scratch_size[size_t(r)];
      const auto &rank_tbs = tbs_[size_t(r)];
      for (size_t t = 0; t < rank_tbs.size(); ++t) {
        const Tb &tb = rank_tbs[t];
        channels = std::max(channels, tb.channel + 1);
        ThreadBlockBuilder b(TbId(int(t)), tb.send_peer, tb.recv_peer, ChannelId(tb.channel));
        for (int i : tb.steps) {
          const DagInstruction &in = dag_.instructions[size_t(i)];
          const auto &w = waits[size_t(i)];
          auto dep = [&](size_t k) {
            const auto &[ptb, p] = w[k];
            return Dependency{TbId(ptb), StepIndex(final_index[size_t(p)])};
          };
          for (size_t k = 0; k + 1 < w.size(); ++k)
            b.step(OpType::Nop, {BufferKind::Input, -1}, {BufferKind::Input, -1}, 0, dep(k));
          // The source of a received value is the peer's memory: name it in the peer's terms.
          const RankId src_rank =
              in.op == OpType::Recv || in.op == OpType::RecvCopySend ? *in.recv_peer : in.rank;
          const RankId dst_rank = in.op == OpType::Send ? *in.send_peer : in.rank;
          b.step(in.op, ref(src_rank, in.src_buffer, in.src_index),
                 ref(dst_rank, in.dst_buffer, in.dst_index), in.count,
                 w.empty() ? std::nullopt : std::optional(dep(w.size() - 1)),
                 depended_on.contains(i));
        }
        rp.thread_blocks.push_back(b.take());
      }
      d.ranks.push_back(std::move(rp));
    }
    d.num_channels = channels;
    return Program::create(std::move(d));
  }

  // Instances (seed gc3 5.3, msccl-tools' interleaved replication): instance i of input or
  // output chunk k is chunk k * N + i, so each instance is the same collective on every N-th
  // chunk; a step of several chunks becomes one step per chunk.
  Expected<std::pair<Program, CollectiveSpec>> replicate(const Program &one) {
    const int N = o_.instances;
    const CollectiveSpec &c = p_.collective();
    std::optional<CollectiveSpec> scaled;
    if (c.kind() != CollectiveKind::Custom) {
      auto s = make_collective(c.kind(), c.num_ranks(), c.chunk_factor() * N,
                               c.root() ? std::optional<int>(c.root()->value()) : std::nullopt);
      if (!s)
        return tl::unexpected(s.error());
      scaled = *s;
    } else {
      return fail({}, "instances need a standard collective (a custom one has no N-times-finer "
                      "form)");
    }
    ProgramDraft d = one.draft();
    d.chunks_per_loop *= N;
    d.num_channels *= N;
    if (d.num_channels > kMaxChannelIndex)
      return fail(
          {}, fmt::format("{} instances need {} channels; the runtime has 32", N, d.num_channels));
    for (RankProgram &rp : d.ranks) {
      const std::vector<ThreadBlock> tbs = rp.thread_blocks;
      const int T = int(tbs.size());
      const int S = rp.scratch_chunks;
      rp.input_chunks *= N;
      rp.output_chunks *= N;
      rp.scratch_chunks *= N;
      rp.thread_blocks.clear();
      for (int i = 0; i < N; ++i)
        for (const ThreadBlock &tb : tbs) {
          ThreadBlockBuilder b(TbId(i * T + tb.id.value()), tb.send_peer, tb.recv_peer,
                               ChannelId(i * (d.num_channels / N) + tb.channel.value()));
          for (size_t k = 0; k < tb.steps.size(); ++k) {
            const Instruction &in = tb.steps[k];
            auto map = [&](BufferRef r, int j) {
              if (r.offset < 0)
                return r;
              if (r.buffer == BufferKind::Scratch)
                return BufferRef{r.buffer, i * S + r.offset + j};
              return BufferRef{r.buffer, (r.offset + j) * N + i};
            };
            std::optional<Dependency> dep;
            if (in.dependency)
              dep = Dependency{TbId(i * T + in.dependency->tb.value()),
                               StepIndex(depended_final(one, rp.rank, *in.dependency))};
            if (in.op == OpType::Nop) {
              b.step(OpType::Nop, in.src, in.dst, 0, dep, in.has_dep);
              continue;
            }
            for (int j = 0; j < in.count; ++j)
              b.step(in.op, map(in.src, j), map(in.dst, j), 1, j == 0 ? dep : std::nullopt,
                     in.has_dep && j == in.count - 1);
          }
          rp.thread_blocks.push_back(b.take());
        }
    }
    SYNCOLL_TRY(program, Program::create(std::move(d)));
    return std::make_pair(std::move(program), std::move(*scaled));
  }

  // Where step `dep.step` of a thread block ends up once multi-chunk steps are split.
  static int depended_final(const Program &one, RankId rank, const Dependency &dep) {
    const ThreadBlock &tb = one.rank(rank).thread_blocks[dep.tb.index()];
    int at = 0;
    for (int k = 0; k <= dep.step.value(); ++k) {
      const Instruction &in = tb.steps[size_t(k)];
      at += in.op == OpType::Nop ? 1 : in.count;
    }
    return at - 1;
  }

  const DslProgram &p_;
  const LowerOptions &o_;
  Aliasing alias_;
  ChunkDag chunk_dag_;
  InstructionDag dag_;
  std::vector<std::optional<int>> send_hint_, recv_hint_, channel_hint_, preferred_channel_;
  std::vector<int> flow_of_, flow_channel_;
  std::vector<bool> user_channel_;
  std::vector<int> depth_, height_;
  std::vector<std::vector<int>> succ_;
  std::vector<std::vector<Tb>> tbs_;
};

} // namespace

Expected<Lowered> lower(const DslProgram &program, const LowerOptions &options) {
  if (options.instances < 1)
    return fail({}, fmt::format("instances must be at least 1, not {}", options.instances));
  return Compiler(program, options).run();
}

std::string write_deployment_xml(const verifier::VerifiedProgram &program) {
  return program_to_mscclir_xml(program.program());
}

} // namespace syncoll::lowering
