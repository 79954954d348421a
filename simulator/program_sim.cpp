#include "simulator/program_sim.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "simulator/network.h"
#include "simulator/rank_symmetry.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll::simulator {
namespace {

using Payload = std::vector<SymbolicSlot>;

SymbolicSlot combine(const SymbolicSlot &a, const SymbolicSlot &b) {
  if (!a.defined || !b.defined)
    return {};
  SymbolicSlot s{true, a.parts};
  s.parts.insert(s.parts.end(), b.parts.begin(), b.parts.end());
  std::sort(s.parts.begin(), s.parts.end());
  return s;
}

struct Message {
  Picoseconds arrival = 0;
  Payload data;
};

// The messages of one connection in flight or arrived, oldest first: a ring over as many slots as
// the connection holds, so pushing and popping never allocate.
class MessageRing {
public:
  explicit MessageRing(int capacity) : slots_(size_t(std::max(1, capacity))) {}
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  Message &at(size_t i) {
    // i < size(): one wrap at most, without a division.
    const size_t slot = head_ + i;
    return slots_[slot < slots_.size() ? slot : slot - slots_.size()];
  }
  Message &front() { return slots_[head_]; }
  void pop_front() {
    if (++head_ == slots_.size())
      head_ = 0;
    --count_;
  }
  void push_back(Message m) {
    SYNCOLL_INVARIANT(count_ < slots_.size(), "a connection took more messages than it holds");
    at(count_++) = std::move(m);
  }

private:
  std::vector<Message> slots_;
  size_t head_ = 0, count_ = 0;
};

struct Fifo {
  std::span<const LinkId> route; ///< the link, or a route through other ranks
  MessageRing messages;          ///< in flight or arrived, not yet popped
  int pusher = -1;               ///< thread block blocked pushing (global index), -1 none
  int popper = -1;               ///< thread block blocked popping
  int sender = -1; ///< thread block whose network-run transfer is under way (arrival kNever)
  /// Most bytes/ns its transfers move (0: the links' rates): the sending thread block's copy
  /// rate, and across nodes the fabric's per-connection rate.
  double rate_cap = 0;
  /// The sending rank whose network proxy posts this connection's messages (CostModel's
  /// proxy_message_cost), -1 where none does: inside a node, or a fabric without the cost.
  int proxy = -1;
};

enum EventKind : uint32_t { kWake = 0 };

// A link's timeline is thread kLinkThread + its id under its source rank's process; thread
// blocks are threads of their ids.
constexpr int kLinkThread = 1000;

class ProgramSimulator {
public:
  /// With `symmetry`, only the ranks below its shift run, on its quotient machine.
  ProgramSimulator(const Program &p, const Topology &t, const ProgramSimOptions &o,
                   const RankSymmetry *symmetry)
      : p_(p), t_(t), o_(o), symmetry_(symmetry), proto_(o.protocol.value_or(p.protocol())),
        network_(symmetry ? symmetry->quotient() : t,
                 o.model.efficiency[CostModel::index(proto_)]) {
    network_.set_sharing_window(o.model.sharing_window, o.model.sharing_window_hop_ratio,
                                o.model.sharing_window_from_hops);
  }

  Expected<ProgramSimulation> run() {
    if (t_.num_ranks() != p_.num_ranks())
      return fail({}, fmt::format("the program has {} ranks, topology '{}' {}", p_.num_ranks(),
                                  t_.name(), t_.num_ranks()));
    if (o_.size_bytes <= 0)
      return fail({}, fmt::format("size must be positive, got {}", o_.size_bytes));
    const size_t pi = CostModel::index(proto_);
    chunk_bytes_ = std::max<int64_t>(1, o_.size_bytes / p_.chunks_per_loop());
    piece_bytes_ = std::min(chunk_bytes_, o_.model.iteration_bytes[pi]);
    iterations_ = int((chunk_bytes_ + piece_bytes_ - 1) / piece_bytes_);
    // Count splitting (docs/semantics.md, "Pipelining and count splitting"): a chunk that fills a
    // FIFO step travels alone.
    split_ = chunk_bytes_ >= o_.model.iteration_bytes[pi];
    capacity_ = o_.model.fifo_capacity[pi];
    proxy_free_.assign(size_t(p_.num_ranks()), 0);
    if (auto ok = build(); !ok)
      return tl::unexpected(ok.error());
    for (size_t g = 0; g < tbs_.size(); ++g) {
      const Picoseconds start = o_.model.launch + (tbs_[g].rank.index() < o_.model.start_skew.size()
                                                       ? o_.model.start_skew[tbs_[g].rank.index()]
                                                       : 0);
      if (tbs_[g].tb->steps.empty())
        tbs_[g].done = true;
      else
        queue_.push(start, kWake, uint32_t(g));
    }
    queue_.reserve(tbs_.size() * 4);
    for (;;) {
      const Picoseconds queued = queue_.empty() ? kNever : queue_.top().time;
      if (network_.next_event() <= queued && network_.next_event() != kNever) {
        // Network-run transfers first: a link they free is there for a send at the same time.
        delivered_.clear();
        network_.advance(network_.next_event(), delivered_);
        for (const Delivery &d : delivered_)
          if (d.arrived)
            transfer_arrived(d);
          else
            sender_released(d);
        continue;
      }
      if (queue_.empty())
        break;
      const Event e = queue_.pop();
      if (!queue_.empty()) {
        // The next event's thread block (its current instruction inside) is far from this one's
        // in memory: start fetching it while this event runs.
        const char *next = reinterpret_cast<const char *>(&tbs_[queue_.top().target]);
        for (size_t line = 0; line < sizeof(Tb); line += 64)
          __builtin_prefetch(next + line);
      }
      advance(int(e.target), e.time);
    }
    ProgramSimulation sim;
    sim.iterations = iterations_;
    sim.deadlocked = std::any_of(tbs_.begin(), tbs_.end(), [](const Tb &tb) { return !tb.done; });
    SimulationResult &r = sim.result;
    r.completion = finish_;
    r.events = queue_.events_processed() + network_.fluid_events();
    r.size_bytes = o_.size_bytes;
    if (r.completion > 0 && !sim.deadlocked) {
      r.algbw_gbps = double(r.size_bytes) / (double(r.completion) / 1000.0);
      auto kind = parse_collective_kind(p_.collective());
      r.busbw_gbps = r.algbw_gbps * (kind ? bus_bandwidth_factor(*kind, p_.num_ranks()) : 1.0);
    }
    for (size_t l = 0; l < t_.links().size(); ++l) {
      const auto &u =
          network_.usage()[symmetry_ ? symmetry_->quotient_link(LinkId(int32_t(l))).index() : l];
      r.links.push_back({t_.links()[l].src, t_.links()[l].dst, u.bytes,
                         r.completion > 0 ? double(u.busy) / double(r.completion) : 0.0});
    }
    r.rank_idle.assign(size_t(p_.num_ranks()), r.completion);
    for (const Tb &tb : tbs_)
      r.rank_idle[tb.rank.index()] = std::min(r.rank_idle[tb.rank.index()], r.completion - tb.busy);
    for (size_t rank = size_t(simulated_ranks()); rank < r.rank_idle.size(); ++rank)
      r.rank_idle[rank] = r.rank_idle[rank % size_t(simulated_ranks())];
    r.simulated_ranks = simulated_ranks();
    r.trace = symmetry_ ? symmetry_->spread(std::move(trace_), t_, kLinkThread) : std::move(trace_);
    if (o_.collective)
      for (const RankProgram &rp : p_.ranks()) {
        sim.outputs.emplace_back();
        for (int k = 0; k < std::max(rp.output_chunks, o_.collective->output_chunks()); ++k)
          sim.outputs.back().push_back(load(rp.rank, {BufferKind::Output, k}));
      }
    return sim;
  }

private:
  struct Tb {
    RankId rank;
    const ThreadBlock *tb = nullptr;
    /// The current step, decoded from its run (tb->steps) when the block reaches it: an event
    /// finds its instruction in the block's own record.
    Instruction in;
    /// The current step's run, copied here: moving to the next step of a run reads nothing
    /// outside the block's record.
    StepRun current;
    const StepRun *run = nullptr; ///< where `current` came from, one of [runs, runs_end)
    const StepRun *runs = nullptr, *runs_end = nullptr;
    int in_run = 0;
    int send_fifo = -1, recv_fifo = -1;
    int iteration = 0, step = 0, message = 0;
    Picoseconds busy_until = 0, busy = 0;
    bool done = false;
    Picoseconds transfer_began = 0;    ///< an instruction waiting for its fair-shared transfer:
    Picoseconds transfer_copy_end = 0; ///< when it started, and when its copy is done
    int64_t flag = -1;
    std::vector<int> flag_waiters;
    bool step_started = false; ///< the step's executor overhead has been paid
    bool parked = false;       ///< waiting for a message while still busy with its last step
  };

  const Program &p_;
  const Topology &t_;
  const ProgramSimOptions &o_;
  const RankSymmetry *symmetry_;
  Protocol proto_;
  Network network_;
  EventQueue queue_;
  int64_t chunk_bytes_ = 0, piece_bytes_ = 0;
  int iterations_ = 1;
  bool split_ = false;
  int capacity_ = 2;
  int64_t max_len_ = 0;
  Picoseconds finish_ = 0;
  std::vector<Tb> tbs_;
  std::vector<int> tb_base_;
  std::vector<Fifo> fifos_;
  // When each rank's network proxy is next free to post a message (CostModel::proxy_message_cost).
  std::vector<Picoseconds> proxy_free_;
  std::vector<TraceSpan> trace_;
  std::vector<Delivery> delivered_;
  // Symbolic memory of iteration 0: per rank, cells keyed by (buffer, slot) after aliasing.
  std::vector<std::map<std::pair<int, int>, SymbolicSlot>> memory_;

  Expected<void> build() {
    std::map<std::tuple<int, int, int>, int> fifo_index;
    auto fifo = [&](RankId s, RankId r, ChannelId c) -> Expected<int> {
      if (symmetry_)
        std::tie(s, r) = symmetry_->canonical(s, r);
      auto [it, inserted] =
          fifo_index.emplace(std::make_tuple(s.value(), r.value(), c.value()), int(fifos_.size()));
      if (inserted) {
        const std::span<const LinkId> route =
            symmetry_ ? symmetry_->route(s, r) : network_.route(s, r);
        if (route.empty())
          return fail({}, fmt::format("rank {} sends to rank {} on channel {}, but topology '{}' "
                                      "has no route {}->{}",
                                      s.value(), r.value(), c.value(), t_.name(), s.value(),
                                      r.value()));
        const bool proxied = o_.model.proxy_message_cost > 0 && crosses_nodes(t_, s, r);
        fifos_.push_back({route, MessageRing(capacity_), -1, -1, -1, connection_cap(s, r),
                          proxied ? int(s.index()) : -1});
      }
      return it->second;
    };
    for (const RankProgram &rp : p_.ranks()) {
      if (rp.rank.value() >= simulated_ranks())
        break;
      tb_base_.push_back(int(tbs_.size()));
      for (const ThreadBlock &tb : rp.thread_blocks) {
        Tb s;
        s.rank = rp.rank;
        s.tb = &tb;
        s.runs = s.run = tb.steps.runs().data();
        s.runs_end = s.runs + tb.steps.runs().size();
        if (!tb.steps.empty()) {
          s.current = *s.run;
          s.in = s.current.first;
        }
        bool sends = false, receives = false;
        for (const StepRun &run : tb.steps.runs())
          sends = sends || op_sends(run.first.op), receives = receives || op_receives(run.first.op);
        if (sends) {
          SYNCOLL_TRY(f, fifo(rp.rank, *tb.send_peer, tb.channel));
          s.send_fifo = f;
        }
        if (receives) {
          SYNCOLL_TRY(f, fifo(*tb.recv_peer, rp.rank, tb.channel));
          s.recv_fifo = f;
        }
        max_len_ = std::max<int64_t>(max_len_, int64_t(tb.steps.size()));
        tbs_.push_back(std::move(s));
      }
    }
    if (o_.collective) {
      memory_.resize(size_t(p_.num_ranks()));
      for (int c = 0; c < o_.collective->num_chunks(); ++c)
        for (const ChunkPlace &pl : o_.collective->chunk(ChunkId(c)).pre)
          if (pl.rank.value() < p_.num_ranks())
            store(pl.rank, {BufferKind::Input, pl.slot},
                  SymbolicSlot{true, {o_.collective->initial_value(ChunkId(c), pl.rank)}});
    }
    return {};
  }

  int simulated_ranks() const { return symmetry_ ? symmetry_->shift() : p_.num_ranks(); }

  // --- symbolic memory (iteration 0 only; other iterations touch other elements) ---
  // The memory a slot names: in place, the home slot of the collective's alias (a buffer the
  // program declares as 0 chunks is still reachable through it); none past the buffer.
  std::optional<std::pair<int, int>> cell(RankId rank, BufferRef ref) const {
    const RankProgram &rp = p_.rank(rank);
    const bool in_place = o_.in_place && o_.collective;
    const int declared = rp.chunks(ref.buffer);
    const int size =
        in_place ? slots_addressable(*o_.collective, declared, ref.buffer, true) : declared;
    if (ref.offset < 0 || ref.offset >= size)
      return std::nullopt;
    if (!in_place || ref.buffer == BufferKind::Scratch)
      return std::make_pair(int(ref.buffer), ref.offset);
    const AliasedSlot home = in_place_slot(*o_.collective, rank, ref.buffer, ref.offset);
    return std::make_pair(int(home.buffer), home.index);
  }
  SymbolicSlot load(RankId rank, BufferRef ref) const {
    auto c = cell(rank, ref);
    if (!c)
      return {};
    auto it = memory_[rank.index()].find(*c);
    return it == memory_[rank.index()].end() ? SymbolicSlot{} : it->second;
  }
  void store(RankId rank, BufferRef ref, SymbolicSlot v) {
    if (auto c = cell(rank, ref))
      memory_[rank.index()][*c] = std::move(v);
  }
  bool tracking(const Tb &tb) const { return o_.collective && tb.iteration == 0; }

  // --- execution ---
  // Bytes of each chunk an iteration moves: full pieces, and what is left in the last one.
  int64_t piece_of(int iteration) const {
    return std::min(piece_bytes_, chunk_bytes_ - int64_t(iteration) * piece_bytes_);
  }
  int messages(const Instruction &in) const {
    if (!op_sends(in.op) && !op_receives(in.op))
      return 0;
    return split_ ? std::max(1, in.count) : 1;
  }
  int chunks_in_message(const Instruction &in, int n) const { return n <= 1 ? in.count : 1; }
  double block_gbps() const { return o_.model.thread_block_gbps[CostModel::index(proto_)]; }
  // The rate cap of a connection s -> r: the thread block's, and the fabric's across nodes.
  double connection_cap(RankId s, RankId r) const {
    double cap = block_gbps();
    if (o_.model.connection_gbps > 0 && crosses_nodes(t_, s, r)) {
      const double connection =
          o_.model.connection_gbps * o_.model.connection_share[CostModel::index(proto_)];
      cap = cap > 0 ? std::min(cap, connection) : connection;
    }
    return cap;
  }
  Picoseconds copy_time(int64_t bytes) const {
    return block_gbps() > 0 ? transfer_ps(bytes, block_gbps()) : 0;
  }
  Picoseconds reduce_time(int64_t bytes) const {
    return o_.model.memory_gbps > 0 ? transfer_ps(3 * bytes, o_.model.memory_gbps) : 0;
  }
  bool dependency_met(const Tb &tb, const Instruction &in) const {
    if (!in.dependency)
      return true;
    const RankProgram &rp = p_.rank(tb.rank);
    if (in.dependency->tb.index() >= rp.thread_blocks.size())
      return false;
    const Tb &target = tbs_[size_t(tb_base_[tb.rank.index()] + in.dependency->tb.value())];
    return target.flag >= int64_t(tb.iteration) * (max_len_ + 1) + in.dependency->step.value();
  }
  void wake(int g, Picoseconds at) { queue_.push(at, kWake, uint32_t(g)); }

  void advance(int g, Picoseconds now) {
    Tb &tb = tbs_[size_t(g)];
    if (tb.done)
      return;
    if (now < tb.busy_until) {
      // A message came for a block that parked itself while still busy: it looks when free.
      if (tb.parked && tb.busy_until != kNever)
        wake(g, tb.busy_until);
      tb.parked = false;
      return;
    }
    tb.parked = false;
    const Instruction &in = tb.in;
    if (tb.message == 0 && !dependency_met(tb, in)) {
      const RankProgram &rp = p_.rank(tb.rank);
      if (in.dependency->tb.index() < rp.thread_blocks.size())
        tbs_[size_t(tb_base_[tb.rank.index()] + in.dependency->tb.value())].flag_waiters.push_back(
            g);
      return;
    }
    if (tb.message == 0 && o_.model.step_overhead > 0 && !tb.step_started) {
      // The executor spins on the flag of the step this one depends on, then pays its per-step
      // work (the barrier after the spin, the primitive's setup), then waits for FIFO room or data:
      // a chain of dependencies across thread blocks pays the step cost at every link of the chain.
      tb.step_started = true;
      tb.busy += o_.model.step_overhead;
      tb.busy_until = now + o_.model.step_overhead;
      wake(g, tb.busy_until);
      return;
    }
    const int n = messages(in);
    Picoseconds end = now;
    const int64_t bytes = int64_t(chunks_in_message(in, n)) * piece_of(tb.iteration);
    if (n == 0) {
      const int64_t local = int64_t(in.count) * piece_of(tb.iteration);
      if (in.op == OpType::Copy)
        end += copy_time(local);
      if (in.op == OpType::Reduce)
        end += std::max(copy_time(local), reduce_time(local));
      if (tracking(tb))
        apply_local(tb.rank, in);
    } else {
      Fifo *in_fifo = op_receives(in.op) ? &fifos_[size_t(tb.recv_fifo)] : nullptr;
      Fifo *out_fifo = op_sends(in.op) ? &fifos_[size_t(tb.send_fifo)] : nullptr;
      if (in_fifo && (in_fifo->messages.empty() || in_fifo->messages.front().arrival > now)) {
        if (in_fifo->messages.empty() || in_fifo->messages.front().arrival == kNever)
          in_fifo->popper = g;
        else
          wake(g, in_fifo->messages.front().arrival);
        return;
      }
      if (out_fifo && int(out_fifo->messages.size()) >= capacity_) {
        out_fifo->pusher = g;
        return;
      }
      Payload received;
      if (in_fifo) {
        received = std::move(in_fifo->messages.front().data);
        in_fifo->messages.pop_front();
        if (in_fifo->pusher >= 0)
          wake(std::exchange(in_fifo->pusher, -1), now);
      }
      Payload sent = message_data(tb, in, n, received);
      end = now + std::max(copy_time(bytes), op_traits(in.op).reduces ? reduce_time(bytes) : 0);
      if (out_fifo) {
        const std::span<const LinkId> route = out_fifo->route;
        const auto t = network_.start(route, bytes, proxy_ready(*out_fifo, now), o_.model.switching,
                                      uint32_t(tb.send_fifo), out_fifo->rate_cap);
        if (!t) {
          // Fair-shared or multi-hop: the thread block holds its connection until the network
          // says the message is in.
          out_fifo->messages.push_back({kNever, std::move(sent)});
          out_fifo->sender = g;
          tb.transfer_began = now;
          tb.transfer_copy_end = end;
          tb.busy_until = kNever;
          return;
        }
        // A thread block or connection slower than the link stretches the transfer by the
        // difference.
        const Picoseconds serial = network_.serialization(route.front(), bytes);
        const Picoseconds capped =
            out_fifo->rate_cap > 0 ? transfer_ps(bytes, out_fifo->rate_cap) : 0;
        const Picoseconds hold = t->start + std::max(serial, capped);
        const Picoseconds arrival = t->arrival +
                                    o_.model.message_latency[CostModel::index(proto_)] +
                                    (hold - t->start - serial);
        out_fifo->messages.push_back({arrival, std::move(sent)});
        end = std::max(end, hold);
        if (out_fifo->popper >= 0)
          wake(std::exchange(out_fifo->popper, -1), arrival);
        if (o_.trace)
          trace_transfer(fmt::format("{} it{} step{}", op_type_name(in.op), tb.iteration, tb.step),
                         route.front(), t->start, arrival);
      }
    }
    complete(g, now, end, n);
  }

  // The time a connection's message leaves, ready at `now`: across nodes, once its rank's proxy
  // has posted the messages before it, one at a time.
  Picoseconds proxy_ready(const Fifo &fifo, Picoseconds now) {
    if (fifo.proxy < 0)
      return now;
    Picoseconds &free = proxy_free_[size_t(fifo.proxy)];
    const Picoseconds ready = std::max(now, free);
    free = ready + o_.model.proxy_message_cost;
    return ready;
  }

  // A transfer on the timeline of its first link (a link of the network's machine, the quotient
  // under a symmetry), under its sending rank.
  void trace_transfer(std::string name, LinkId link, Picoseconds start, Picoseconds arrival) {
    if (!o_.trace)
      return;
    const Link &l = network_.topology().link(link);
    trace_.push_back(
        {std::move(name), l.src.value(), kLinkThread + t_.find_link(l.src, l.dst)->value(),
         fmt::format("link {}->{}", l.src.value(), l.dst.value()), start, arrival - start});
  }

  // A network-run (fair-shared or multi-hop) transfer of connection `d.tag` has arrived: its
  // message can be received. Its sender went on when its first link was done (`sender_released`).
  void transfer_arrived(const Delivery &d) {
    Fifo &fifo = fifos_[d.tag];
    size_t index = 0;
    while (index < fifo.messages.size() && fifo.messages.at(index).arrival != kNever)
      ++index;
    SYNCOLL_INVARIANT(index < fifo.messages.size(),
                      "a network-run transfer arrived on a connection without one");
    Message &pending = fifo.messages.at(index);
    pending.arrival = d.times.arrival + o_.model.message_latency[CostModel::index(proto_)];
    if (fifo.popper >= 0 && index == 0)
      wake(std::exchange(fifo.popper, -1), pending.arrival);
    trace_transfer("transfer", fifo.route.front(), d.times.start, pending.arrival);
  }

  // The sender's link has carried the transfer of connection `d.tag`: its thread block goes on.
  void sender_released(const Delivery &d) {
    Fifo &fifo = fifos_[d.tag];
    const int g = std::exchange(fifo.sender, -1);
    SYNCOLL_INVARIANT(g >= 0, "a network-run transfer released a connection without a sender");
    Tb &tb = tbs_[size_t(g)];
    const Instruction &in = tb.in;
    tb.busy_until = 0;
    complete(g, tb.transfer_began, std::max(tb.transfer_copy_end, d.first_hop_end), messages(in));
  }

  // The instruction step of thread block `g` that began at `now` is done at `end`.
  void complete(int g, Picoseconds now, Picoseconds end, int n) {
    Tb &tb = tbs_[size_t(g)];
    const Instruction &in = tb.in;
    tb.busy += end - now;
    if (o_.trace)
      trace_.push_back({fmt::format("{} it{} step{}", op_type_name(in.op), tb.iteration, tb.step),
                        tb.rank.value(), tb.tb->id.value(), fmt::format("tb {}", tb.tb->id.value()),
                        now, end - now});
    tb.busy_until = end;
    if (++tb.message < std::max(1, n)) {
      wake(g, end);
      return;
    }
    tb.message = 0;
    tb.step_started = false;
    if (in.has_dep) {
      tb.flag = int64_t(tb.iteration) * (max_len_ + 1) + tb.step;
      for (int w : tb.flag_waiters)
        wake(w, end);
      tb.flag_waiters.clear();
    }
    const bool wrapped = next_step(tb);
    tb.step = wrapped ? 0 : tb.step + 1;
    if (wrapped && ++tb.iteration == iterations_) {
      tb.done = true;
      finish_ = std::max(finish_, end);
      return;
    }
    finish_ = std::max(finish_, end);
    if (!park(g, end))
      wake(g, end);
  }

  // Moves the block's current instruction to its next step (the first after the last), and says
  // whether it wrapped around to the first.
  static bool next_step(Tb &tb) {
    if (++tb.in_run < tb.current.length) {
      // In place, field by field: the step differs from the last by the run's strides only.
      tb.in.src.offset += tb.current.src_stride;
      tb.in.dst.offset += tb.current.dst_stride;
      if (tb.in.dependency)
        tb.in.dependency->step =
            StepIndex(tb.in.dependency->step.value() + tb.current.dependency_stride);
      ++tb.in.declared_index;
      return false;
    }
    tb.in_run = 0;
    const bool wrapped = ++tb.run == tb.runs_end;
    if (wrapped)
      tb.run = tb.runs;
    tb.current = *tb.run;
    tb.in = tb.current.first;
    return wrapped;
  }

  // A block whose next step can only wait for a message not yet sent registers for it now, so
  // the message wakes it, instead of waking at the end of this step only to find nothing there:
  // one event per step instead of two.
  bool park(int g, Picoseconds end) {
    Tb &tb = tbs_[size_t(g)];
    const Instruction &next = tb.in;
    if (o_.model.step_overhead > 0 || !op_receives(next.op) || messages(next) == 0 ||
        !dependency_met(tb, next))
      return false;
    Fifo &in_fifo = fifos_[size_t(tb.recv_fifo)];
    if (in_fifo.popper >= 0)
      return false;
    if (!in_fifo.messages.empty()) {
      // A message on its way with a known arrival after the step ends: the block would wake at
      // `end` only to find it not there and sleep until it is.
      const Picoseconds arrival = in_fifo.messages.front().arrival;
      if (arrival == kNever || arrival <= end)
        return false;
      wake(g, arrival);
      return true;
    }
    in_fifo.popper = g;
    tb.parked = true;
    return true;
  }

  Payload message_data(const Tb &tb, const Instruction &in, int n, const Payload &received) {
    if (!tracking(tb))
      return {};
    const int per = chunks_in_message(in, n);
    const int lo = n <= 1 ? 0 : tb.message, hi = std::min(in.count, lo + per);
    Payload out;
    for (int k = lo; k < hi; ++k) {
      const SymbolicSlot r =
          size_t(k - lo) < received.size() ? received[size_t(k - lo)] : SymbolicSlot{};
      SymbolicSlot v;
      switch (in.op) {
      case OpType::Send:
        v = load(tb.rank, {in.src.buffer, in.src.offset + k});
        break;
      case OpType::Recv:
      case OpType::RecvCopySend:
        v = r;
        break;
      case OpType::RecvReduceSend:
      case OpType::RecvReduceCopy:
      case OpType::RecvReduceCopySend:
        v = combine(r, load(tb.rank, {in.src.buffer, in.src.offset + k}));
        break;
      case OpType::Copy:
      case OpType::Reduce:
      case OpType::Nop:
        SYNCOLL_UNREACHABLE("a local step carries no message");
      }
      if (op_traits(in.op).writes_dst)
        store(tb.rank, {in.dst.buffer, in.dst.offset + k}, v);
      out.push_back(std::move(v));
    }
    return out;
  }

  void apply_local(RankId rank, const Instruction &in) {
    if (in.op != OpType::Copy && in.op != OpType::Reduce)
      return;
    std::vector<SymbolicSlot> values;
    for (int k = 0; k < in.count; ++k) {
      SymbolicSlot s = load(rank, {in.src.buffer, in.src.offset + k});
      values.push_back(
          in.op == OpType::Copy ? s : combine(load(rank, {in.dst.buffer, in.dst.offset + k}), s));
    }
    for (int k = 0; k < in.count; ++k)
      store(rank, {in.dst.buffer, in.dst.offset + k}, values[size_t(k)]);
  }
};

} // namespace

Expected<ProgramSimulation> simulate_program(const Program &program, const Topology &topology,
                                             const ProgramSimOptions &options) {
  // Symbolic contents are per rank: those runs simulate every rank. A trace is spread from the
  // simulated ranks to all, so that a traced run takes the same time as one without.
  std::optional<RankSymmetry> symmetry;
  if (options.use_symmetry && !options.collective)
    symmetry = RankSymmetry::find(program, topology, options.model);
  return ProgramSimulator(program, topology, options, symmetry ? &*symmetry : nullptr).run();
}

} // namespace syncoll::simulator
