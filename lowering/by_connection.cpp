// Lowering by connection (by_connection.h): lanes per link, then one walk over the steps that
// emits every thread block's instructions with their waits, then the verifier.
#include "lowering/by_connection.h"

#include "lowering/detail/lanes.h"
#include "lowering/detail/passes.h"
#include "model/collective_traits.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace syncoll::lowering {
namespace {

using detail::Connections;
using detail::Transfer;

/// A step of a thread block: (thread block, position in it).
struct Access {
  int tb = -1;
  int pos = -1;
};

/// One chunk slot of a rank's memory: input [0, I), output [I, I + O), scratch beyond.
struct SlotState {
  Access writer;
  int read_in_step = -1;
  int last_reader = -1; ///< since the last write: a list through RankState::reads
};

/// One read of a slot, and the read before it since the slot's last write (-1: none).
struct Read {
  Access at;
  int before;
};

struct RankState {
  std::vector<SlotState> slots;
  std::vector<Read> reads; ///< every slot's reads, linked per slot (no allocation per slot)
  std::vector<std::vector<Instruction>> tbs;
  /// Per thread block: the other thread blocks it has waited for, and up to which position.
  std::vector<std::vector<std::pair<int, int>>> known;
  int scratch = 0;
};

class Emitter {
public:
  Emitter(const Algorithm &a, const Topology &t, const CollectiveSpec &c,
          const std::vector<Transfer> &transfers, const Connections &connections)
      : a_(a), t_(t), c_(c), transfers_(transfers), lanes_(connections.lanes),
        sent_on_(connections.sent_on), N_(t.num_ranks()), G_(c.num_chunks()),
        I_(buffer_chunks(c, BufferKind::Input)), O_(buffer_chunks(c, BufferKind::Output)) {}

  Expected<ProgramDraft> run(Protocol protocol, int64_t min_bytes, int64_t max_bytes);
  int send_tb(const Transfer &x) const { return first_send_[size_t(x.link)] + x.lane; }
  int recv_tb(const Transfer &x) const { return first_recv_[size_t(x.link)] + x.lane; }

private:
  void lay_out_thread_blocks(ProgramDraft &d);
  BufferRef ref(int slot) const {
    if (slot < I_)
      return {BufferKind::Input, slot};
    if (slot < I_ + O_)
      return {BufferKind::Output, slot - I_};
    return {BufferKind::Scratch, slot - I_ - O_};
  }
  int fresh_scratch(int rank) {
    RankState &rs = ranks_[size_t(rank)];
    rs.slots.emplace_back();
    return I_ + O_ + rs.scratch++;
  }
  /// Where a new value of `chunk` at `rank` goes in `step`: its home (output slot, or its own
  /// scratch slot), unless a send of this step reads the home's old value.
  int destination(int chunk, int rank, int step) {
    int32_t &home = home_[size_t(rank) * size_t(G_) + size_t(chunk)];
    if (home < 0)
      home = fresh_scratch(rank);
    if (ranks_[size_t(rank)].slots[size_t(home)].read_in_step == step)
      return fresh_scratch(rank);
    return home;
  }
  /// Appends `in` to thread block `tb` of `rank` after waiting for every step of `needs_` (nops
  /// in front for all waits but the last); clears `needs_`.
  Access emit(int rank, int tb, Instruction in);
  /// The waits a write of a slot needs: its last writer and every read since.
  void need_write(const RankState &rs, int slot) {
    const SlotState &s = rs.slots[size_t(slot)];
    needs_.push_back(s.writer);
    for (int r = s.last_reader; r >= 0; r = rs.reads[size_t(r)].before)
      needs_.push_back(rs.reads[size_t(r)].at);
  }
  static void read(RankState &rs, int slot, Access at) {
    SlotState &s = rs.slots[size_t(slot)];
    rs.reads.push_back({at, s.last_reader});
    s.last_reader = int(rs.reads.size()) - 1;
  }
  static void wrote(RankState &rs, int slot, Access at) {
    rs.slots[size_t(slot)].writer = at;
    rs.slots[size_t(slot)].last_reader = -1;
  }
  Expected<void> emit_step(int step, size_t begin, size_t end);
  Expected<void> emit_final_copies();

  const Algorithm &a_;
  const Topology &t_;
  const CollectiveSpec &c_;
  const std::vector<Transfer> &transfers_;
  const std::vector<int> &lanes_;
  const std::vector<int> &sent_on_;
  const int N_, G_, I_, O_;
  std::vector<RankState> ranks_;
  std::vector<int32_t> held_; ///< (rank, chunk) -> slot of the rank's value, -1 none
  std::vector<int32_t> home_; ///< (rank, chunk) -> output slot at a post rank, or relay scratch
  /// (rank, chunk) -> the step that last wrote it, and where: 2 slot + 1 for a copy, 2 slot for
  /// a reduction (a second reduction in the step adds to the first; a copy cannot follow).
  std::vector<int32_t> written_in_, written_to_;
  std::vector<Access> needs_, waits_;
  std::vector<int64_t> touched_;
  std::vector<int> first_send_, first_recv_;
};

Access Emitter::emit(int rank, int tb, Instruction in) {
  RankState &rs = ranks_[size_t(rank)];
  std::vector<Instruction> &steps = rs.tbs[size_t(tb)];
  auto &known = rs.known[size_t(tb)];
  // The latest step per other thread block, unless this thread block already waited for it.
  std::sort(needs_.begin(), needs_.end(), [](const Access &x, const Access &y) {
    return std::tie(x.tb, x.pos) < std::tie(y.tb, y.pos);
  });
  std::vector<Access> &waits = waits_;
  waits.clear();
  for (size_t k = 0; k < needs_.size(); ++k) {
    const Access &n = needs_[k];
    if (n.tb < 0 || n.tb == tb || (k + 1 < needs_.size() && needs_[k + 1].tb == n.tb))
      continue;
    auto it = std::find_if(known.begin(), known.end(), [&](auto &p) { return p.first == n.tb; });
    if (it != known.end() && it->second >= n.pos)
      continue;
    if (it == known.end())
      known.emplace_back(n.tb, n.pos);
    else
      it->second = n.pos;
    waits.push_back(n);
  }
  needs_.clear();
  auto wait_on = [&](Instruction &step, const Access &w) {
    step.dependency = Dependency{TbId(w.tb), StepIndex(w.pos)};
    rs.tbs[size_t(w.tb)][size_t(w.pos)].has_dep = true;
  };
  for (size_t k = 0; k + 1 < waits.size(); ++k) {
    Instruction nop;
    nop.op = OpType::Nop;
    nop.src = nop.dst = {BufferKind::Input, -1};
    nop.count = 0;
    nop.declared_index = int(steps.size());
    wait_on(nop, waits[k]);
    steps.push_back(nop);
  }
  if (!waits.empty())
    wait_on(in, waits.back());
  in.declared_index = int(steps.size());
  steps.push_back(in);
  return {tb, int(steps.size()) - 1};
}

void Emitter::lay_out_thread_blocks(ProgramDraft &d) {
  // Per rank, receiving thread blocks first (a wait names its thread block in the device's int8,
  // and waits are mostly for receives): a receiving link with the sending link it forwards to,
  // by sending peer; the other receiving links, by peer; the other sending links, by peer.
  const std::vector<Link> &links = t_.links();
  std::vector<std::vector<int>> out(static_cast<size_t>(N_)), in(static_cast<size_t>(N_));
  for (size_t l = 0; l < links.size(); ++l)
    if (lanes_[l] > 0) {
      out[links[l].src.index()].push_back(int(l));
      in[links[l].dst.index()].push_back(int(l));
    }
  std::vector<int> received_on(links.size(), -1);
  for (size_t l = 0; l < links.size(); ++l)
    if (sent_on_[l] >= 0)
      received_on[size_t(sent_on_[l])] = int(l);
  first_send_.assign(links.size(), -1);
  first_recv_.assign(links.size(), -1);
  for (int r = 0; r < N_; ++r) {
    RankProgram &rp = d.ranks[size_t(r)];
    auto open = [&](int link, std::optional<RankId> send, std::optional<RankId> recv) {
      const int first = int(rp.thread_blocks.size());
      for (int lane = 0; lane < lanes_[size_t(link)]; ++lane)
        rp.thread_blocks.push_back(
            {TbId(int(rp.thread_blocks.size())), send, recv, ChannelId(lane), {}});
      return first;
    };
    for (int l : out[size_t(r)])
      if (const int from = received_on[size_t(l)]; from >= 0)
        first_recv_[size_t(from)] = first_send_[size_t(l)] =
            open(l, links[size_t(l)].dst, links[size_t(from)].src);
    for (int l : in[size_t(r)])
      if (sent_on_[size_t(l)] < 0)
        first_recv_[size_t(l)] = open(l, std::nullopt, links[size_t(l)].src);
    for (int l : out[size_t(r)])
      if (received_on[size_t(l)] < 0)
        first_send_[size_t(l)] = open(l, links[size_t(l)].dst, std::nullopt);
    // A rank's copies go into its thread blocks; one that has none gets one for them.
    if (rp.thread_blocks.empty())
      rp.thread_blocks.push_back({TbId(0), std::nullopt, std::nullopt, ChannelId(0), {}});
    ranks_[size_t(r)].tbs.resize(rp.thread_blocks.size());
    ranks_[size_t(r)].known.resize(rp.thread_blocks.size());
  }
}

Expected<void> Emitter::emit_step(int step, size_t begin, size_t end) {
  const size_t n = end - begin;
  std::vector<int> source(n), prior(n, -1), target(n);
  // Sources: every send reads the value from before the step.
  for (size_t i = 0; i < n; ++i) {
    const Transfer &x = transfers_[begin + i];
    source[i] = held_[size_t(x.src) * size_t(G_) + size_t(x.chunk)];
    if (source[i] < 0)
      return fail({}, fmt::format("step {}: rank {} sends chunk {} it does not hold", step + 1,
                                  x.src, x.chunk));
    ranks_[size_t(x.src)].slots[size_t(source[i])].read_in_step = step;
  }
  // Targets, in the step's order: a second reduction into a chunk in one step adds to the first.
  touched_.clear();
  for (size_t i = 0; i < n; ++i) {
    const Transfer &x = transfers_[begin + i];
    const size_t key = size_t(x.dst) * size_t(G_) + size_t(x.chunk);
    const bool again = written_in_[key] == step;
    const int before = again ? written_to_[key] : -1;
    if (!again)
      touched_.push_back(int64_t(key));
    if (!x.reduce) {
      if (again)
        return fail(
            {}, fmt::format("step {}: rank {} receives chunk {} twice", step + 1, x.dst, x.chunk));
      target[i] = destination(x.chunk, x.dst, step);
    } else {
      if (again && before % 2 == 1)
        return fail({}, fmt::format("step {}: rank {} reduces into chunk {} that a copy of the "
                                    "same step replaces",
                                    step + 1, x.dst, x.chunk));
      prior[i] = again ? before / 2 : held_[key];
      if (prior[i] < 0)
        return fail({}, fmt::format("step {}: rank {} reduces chunk {} into rank {}, which has "
                                    "no contribution to it",
                                    step + 1, x.src, x.chunk, x.dst));
      target[i] = again ? prior[i] : destination(x.chunk, x.dst, step);
    }
    written_in_[key] = step;
    written_to_[key] = 2 * target[i] + (x.reduce ? 0 : 1);
  }
  // Sends, then receives: a receive never waits on a send of its own step.
  for (size_t i = 0; i < n; ++i) {
    const Transfer &x = transfers_[begin + i];
    RankState &rs = ranks_[size_t(x.src)];
    Instruction in;
    in.op = OpType::Send;
    in.src = ref(source[i]);
    in.dst = ref(target[i]);
    needs_.push_back(rs.slots[size_t(source[i])].writer);
    read(rs, source[i], emit(x.src, send_tb(x), in));
  }
  for (size_t i = 0; i < n; ++i) {
    const Transfer &x = transfers_[begin + i];
    RankState &rs = ranks_[size_t(x.dst)];
    need_write(rs, target[i]);
    Instruction in;
    in.dst = ref(target[i]);
    if (x.reduce) {
      needs_.push_back(rs.slots[size_t(prior[i])].writer);
      in.op = OpType::RecvReduceCopy;
      in.src = ref(prior[i]);
    } else {
      in.op = OpType::Recv;
      in.src = ref(source[i]); // the peer's memory, in the peer's terms
    }
    const Access at = emit(x.dst, recv_tb(x), in);
    if (x.reduce && prior[i] != target[i])
      read(rs, prior[i], at);
    wrote(rs, target[i], at);
  }
  for (int64_t key : touched_)
    held_[size_t(key)] = written_to_[size_t(key)] / 2;
  return {};
}

Expected<void> Emitter::emit_final_copies() {
  for (int c = 0; c < G_; ++c)
    for (const ChunkPlace &q : c_.chunk(ChunkId(c)).post) {
      const int r = q.rank.value();
      const int from = held_[size_t(r) * size_t(G_) + size_t(c)];
      const int to = I_ + q.slot;
      if (from < 0)
        return fail({}, fmt::format("rank {} ends without chunk {}", r, c));
      if (from == to)
        continue;
      // After the step that wrote the value, in the thread block that wrote it (no wait); a
      // value the rank started with, last in its shortest thread block.
      RankState &rs = ranks_[size_t(r)];
      const Access writer = rs.slots[size_t(from)].writer;
      int tb = writer.tb;
      if (tb < 0)
        tb =
            int(std::min_element(rs.tbs.begin(), rs.tbs.end(),
                                 [](const auto &x, const auto &y) { return x.size() < y.size(); }) -
                rs.tbs.begin());
      needs_.push_back(writer);
      need_write(rs, to);
      Instruction in;
      in.op = OpType::Copy;
      in.src = ref(from);
      in.dst = ref(to);
      const Access at = emit(r, tb, in);
      read(rs, from, at);
      wrote(rs, to, at);
    }
  return {};
}

Expected<ProgramDraft> Emitter::run(Protocol protocol, int64_t min_bytes, int64_t max_bytes) {
  ProgramDraft d;
  d.name = a_.name.empty() ? "synthesized" : a_.name;
  d.collective = std::string(collective_traits(c_.kind()).executor_name);
  d.protocol = protocol;
  d.num_ranks = N_;
  d.in_place = false;
  d.out_of_place = true;
  d.min_bytes = min_bytes;
  d.max_bytes = max_bytes;
  d.chunks_per_loop = chunks_per_loop(c_);
  d.num_channels = 1;
  for (int l : lanes_)
    d.num_channels = std::max(d.num_channels, l);
  d.ranks.resize(size_t(N_));
  ranks_.assign(size_t(N_), {});
  for (int r = 0; r < N_; ++r) {
    d.ranks[size_t(r)].rank = RankId(r);
    ranks_[size_t(r)].slots.resize(size_t(I_ + O_));
  }
  lay_out_thread_blocks(d);
  held_.assign(size_t(N_) * size_t(G_), -1);
  home_.assign(size_t(N_) * size_t(G_), -1);
  written_in_.assign(size_t(N_) * size_t(G_), -1);
  written_to_.assign(size_t(N_) * size_t(G_), -1);
  for (int c = 0; c < G_; ++c) {
    const ChunkSpec &spec = c_.chunk(ChunkId(c));
    for (const ChunkPlace &p : spec.pre) {
      int32_t &h = held_[size_t(p.rank.value()) * size_t(G_) + size_t(c)];
      if (h < 0)
        h = p.slot;
    }
    for (const ChunkPlace &q : spec.post)
      home_[size_t(q.rank.value()) * size_t(G_) + size_t(c)] = I_ + q.slot;
  }
  size_t begin = 0;
  for (int s = 0; s < a_.num_steps(); ++s) {
    const size_t end = begin + a_.steps[size_t(s)].sends.size();
    SYNCOLL_CHECK(emit_step(s, begin, end));
    begin = end;
  }
  SYNCOLL_CHECK(emit_final_copies());
  for (int r = 0; r < N_; ++r) {
    RankProgram &rp = d.ranks[size_t(r)];
    RankState &rs = ranks_[size_t(r)];
    rp.input_chunks = I_;
    rp.output_chunks = O_;
    rp.scratch_chunks = rs.scratch;
    for (size_t t = 0; t < rs.tbs.size(); ++t)
      rp.thread_blocks[t].steps = StepList(rs.tbs[t]);
    // A rank without connections and without copies has nothing to do.
    if (rp.thread_blocks.size() == 1 && rp.thread_blocks.front().steps.empty())
      rp.thread_blocks.clear();
  }
  return d;
}

ConnectionLoweringStats stats_of(const ProgramDraft &d, const std::vector<int> &lanes,
                                 size_t transfers) {
  ConnectionLoweringStats s;
  s.transfers = transfers;
  for (int l : lanes)
    s.max_lanes = std::max(s.max_lanes, l);
  for (const RankProgram &rp : d.ranks) {
    s.max_thread_blocks = std::max(s.max_thread_blocks, int(rp.thread_blocks.size()));
    s.scratch_chunks = std::max(s.scratch_chunks, rp.scratch_chunks);
    for (const ThreadBlock &tb : rp.thread_blocks) {
      s.steps += tb.steps.size();
      s.longest_thread_block = std::max(s.longest_thread_block, int(tb.steps.size()));
    }
  }
  return s;
}

std::string thread_block_role(const ThreadBlock &tb) {
  if (tb.send_peer)
    return fmt::format("sends to {}", tb.send_peer->value());
  if (tb.recv_peer)
    return fmt::format("receives from {}", tb.recv_peer->value());
  return "local copies";
}

std::vector<std::string> advice_for(const ProgramDraft &d, const ConnectionLoweringStats &s,
                                    const verifier::ResourceLimits &limits) {
  std::vector<std::string> out;
  auto longest = [&]() -> std::pair<const RankProgram *, const ThreadBlock *> {
    for (const RankProgram &rp : d.ranks)
      for (const ThreadBlock &tb : rp.thread_blocks)
        if (int(tb.steps.size()) == s.longest_thread_block)
          return {&rp, &tb};
    return {nullptr, nullptr};
  };
  if (s.longest_thread_block > limits.max_steps_per_tb) {
    const auto [rp, tb] = longest();
    out.push_back(fmt::format(
        "steps per thread block: rank {} tb {} ({}) has {} steps where the executor holds {} "
        "(MSCCL_MAX_NUM_STEPS), with up to {} lanes per link already; it fits an executor built "
        "with MSCCL_MAX_NUM_STEPS >= {}, or a schedule with fewer pieces per rank (-C)",
        rp->rank.value(), tb->id.value(), thread_block_role(*tb), tb->steps.size(),
        limits.max_steps_per_tb, s.max_lanes, tb->steps.size()));
  }
  if (s.max_thread_blocks > limits.sm_budget)
    for (const RankProgram &rp : d.ranks)
      if (int(rp.thread_blocks.size()) == s.max_thread_blocks) {
        out.push_back(fmt::format(
            "thread blocks per rank: rank {} has {} (one per connection and lane) where {} can "
            "be resident (the SM budget); fewer lanes need more steps per thread block: it fits "
            "a schedule with fewer pieces per rank (-C) or fewer neighbours per rank",
            rp.rank.value(), rp.thread_blocks.size(), limits.sm_budget));
        break;
      }
  return out;
}

} // namespace

Expected<LoweredAlgorithm> lower_by_connection(const Algorithm &algorithm, const Topology &topology,
                                               const CollectiveSpec &collective,
                                               const ConnectionLoweringOptions &options) {
  if (options.instances < 1)
    return fail({}, fmt::format("instances must be at least 1, not {}", options.instances));
  if (collective.num_ranks() != topology.num_ranks())
    return fail({}, fmt::format("the collective has {} ranks, topology '{}' {}",
                                collective.num_ranks(), topology.name(), topology.num_ranks()));
  std::vector<int> per_step;
  SYNCOLL_TRY(transfers, detail::transfers_of(algorithm, topology, collective, per_step));
  const int most = std::max(1, options.limits.max_channels / options.instances);
  const int budget = std::max(1, options.limits.max_steps_per_tb);
  std::vector<int> lanes =
      detail::initial_lanes(topology, transfers, per_step, budget, most, options.limits.sm_budget);
  // Waits add nops, so a lane can still pass the budget: widen those links and lay out again.
  std::vector<int64_t> sent;
  const auto say = [&](const std::string &what) {
    if (options.progress)
      options.progress(what);
  };
  for (int round = 0;; ++round) {
    say(fmt::format("{} sends over {} lanes of {} links: emitting the thread blocks{}",
                    transfers.size(), std::accumulate(lanes.begin(), lanes.end(), int64_t(0)),
                    std::count_if(lanes.begin(), lanes.end(), [](int l) { return l > 0; }),
                    round > 0 ? " again (wider lanes)" : ""));
    detail::assign_lanes(transfers, lanes, sent);
    const Connections connections{lanes,
                                  detail::pair_connections(topology, collective.num_chunks(),
                                                           transfers, per_step, lanes, budget)};
    Emitter e(algorithm, topology, collective, transfers, connections);
    SYNCOLL_TRY(draft, e.run(options.protocol, options.min_bytes, options.max_bytes));
    bool widened = false;
    if (round < 4)
      for (const RankProgram &rp : draft.ranks)
        for (const ThreadBlock &tb : rp.thread_blocks) {
          if (int(tb.steps.size()) <= budget || (!tb.send_peer && !tb.recv_peer))
            continue;
          const RankId src = tb.send_peer ? rp.rank : *tb.recv_peer;
          const RankId dst = tb.send_peer ? *tb.send_peer : rp.rank;
          int &l = lanes[topology.find_link(src, dst)->index()];
          const int wider =
              std::min(most, int((int64_t(l) * int64_t(tb.steps.size()) + budget - 1) / budget));
          if (wider > l) {
            l = wider;
            widened = true;
          }
        }
    if (widened)
      continue;
    const ConnectionLoweringStats stats = stats_of(draft, lanes, transfers.size());
    std::vector<std::string> advice = advice_for(draft, stats, options.limits);
    SYNCOLL_TRY(one, Program::create(std::move(draft)));
    Program program = std::move(one);
    CollectiveSpec implemented = collective;
    if (options.instances > 1) {
      SYNCOLL_TRY(scaled, detail::replicate(program, collective, options.instances));
      program = std::move(scaled.first);
      implemented = std::move(scaled.second);
    }
    say(fmt::format("verifying {} steps", stats.steps));
    verifier::VerifyOptions vo;
    vo.collective = implemented;
    vo.limits = options.limits;
    vo.check_unfit_programs = options.check_unfit_programs;
    auto verified = verifier::certify(program, vo);
    return LoweredAlgorithm{std::move(program), std::move(implemented), stats, std::move(advice),
                            std::move(verified)};
  }
}

} // namespace syncoll::lowering
