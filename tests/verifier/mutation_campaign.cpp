#include "tests/verifier/mutation_campaign.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/mscclir.h"
#include "model/runtime_constants.h"
#include "testing/programs.h"
#include "verifier/verify.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

namespace syncoll::testing {
namespace {

// ---- The oracle: random schedules over the semantics of docs/semantics.md, written apart from
// ---- verifier/ so that the two can disagree.

struct Val {
  bool defined = false;
  std::vector<Contribution> parts;
  bool operator==(const Val &) const = default;
};

Val plus(const Val &a, const Val &b) {
  if (!a.defined || !b.defined)
    return {};
  Val v{true, a.parts};
  v.parts.insert(v.parts.end(), b.parts.begin(), b.parts.end());
  std::sort(v.parts.begin(), v.parts.end());
  return v;
}

class RandomRun {
public:
  RandomRun(const Program &p, const CollectiveSpec &c, bool in_place, int capacity,
            int per_transfer, std::mt19937_64 &rng)
      : p_(p), c_(c), in_place_(in_place), capacity_(capacity), per_transfer_(per_transfer),
        rng_(rng) {
    for (const auto &rp : p.ranks())
      for (const auto &tb : rp.thread_blocks) {
        tbs_.push_back({rp.rank, &tb});
        max_len_ = std::max<int64_t>(max_len_, int64_t(tb.steps.size()));
      }
    pos_.assign(tbs_.size(), {0, 0, 0});
    flags_.assign(tbs_.size(), -1);
    for (int it = 0; it < kIterations; ++it) {
      memory_.emplace_back();
      for (const auto &rp : p.ranks())
        memory_.back()[rp.rank.value()] = {};
      for (int ch = 0; ch < c.num_chunks(); ++ch)
        for (const auto &place : c.chunk(ChunkId(ch)).pre)
          store(it, place.rank, {BufferKind::Input, place.slot},
                Val{true, {c.initial_value(ChunkId(ch), place.rank)}});
    }
  }

  /// Empty when the run finished with every output right; otherwise what went wrong.
  std::string run() {
    while (true) {
      std::vector<size_t> enabled;
      bool all_done = true;
      for (size_t t = 0; t < tbs_.size(); ++t) {
        all_done = all_done && done(t);
        if (can_move(t))
          enabled.push_back(t);
      }
      if (enabled.empty()) {
        if (!all_done)
          return "a schedule deadlocks";
        break;
      }
      move(enabled[std::uniform_int_distribution<size_t>(0, enabled.size() - 1)(rng_)]);
    }
    for (int it = 0; it < kIterations; ++it)
      for (int ch = 0; ch < c_.num_chunks(); ++ch) {
        Val expected{true, c_.expected_value(ChunkId(ch))};
        for (const auto &place : c_.chunk(ChunkId(ch)).post)
          if (!(load(it, place.rank, {BufferKind::Output, place.slot}) == expected))
            return fmt::format("rank {} output slot {} is wrong after a schedule",
                               place.rank.value(), place.slot);
      }
    return "";
  }

private:
  static constexpr int kIterations = 2;
  struct Pos {
    int it, step, msg;
  };
  struct TbRef {
    RankId rank;
    const ThreadBlock *tb;
  };
  const Program &p_;
  const CollectiveSpec &c_;
  bool in_place_;
  int capacity_;
  int per_transfer_; ///< chunks one transfer carries

  std::mt19937_64 &rng_;
  int64_t max_len_ = 0;
  std::vector<TbRef> tbs_;
  std::vector<Pos> pos_;
  std::vector<int64_t> flags_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<Val>>> fifos_;
  std::vector<std::map<int, std::map<std::pair<int, int>, Val>>> memory_;

  // The key under which a slot is stored: in place, the home slot the runtime binds both
  // buffers' slots to (model's aliasing table; the buffer declared 0 chunks is reachable).
  std::pair<int, int> key(RankId rank, BufferRef ref) const {
    if (in_place_ && ref.buffer != BufferKind::Scratch) {
      const AliasedSlot home = in_place_slot(c_, rank, ref.buffer, ref.offset);
      return {int(home.buffer), home.index};
    }
    return {int(ref.buffer), ref.offset};
  }
  bool in_bounds(RankId rank, BufferRef ref) const {
    const auto &rp = p_.rank(rank);
    const int declared = rp.chunks(ref.buffer);
    return ref.offset >= 0 && ref.offset < slots_addressable(c_, declared, ref.buffer, in_place_);
  }
  Val load(int it, RankId rank, BufferRef ref) const {
    if (!in_bounds(rank, ref))
      return {};
    const auto &m = memory_[size_t(it)].at(rank.value());
    auto f = m.find(key(rank, ref));
    return f == m.end() ? Val{} : f->second;
  }
  void store(int it, RankId rank, BufferRef ref, Val v) {
    if (in_bounds(rank, ref))
      memory_[size_t(it)][rank.value()][key(rank, ref)] = std::move(v);
  }

  bool done(size_t t) const { return pos_[t].it >= kIterations || tbs_[t].tb->steps.empty(); }
  int messages(const Instruction &in) const {
    if (!op_sends(in.op) && !op_receives(in.op))
      return 0;
    return (std::max(1, in.count) + per_transfer_ - 1) / per_transfer_;
  }
  std::tuple<int, int, int> send_fifo(size_t t) const {
    const auto &tb = *tbs_[t].tb;
    return {tbs_[t].rank.value(), tb.send_peer->value(), tb.channel.value()};
  }
  std::tuple<int, int, int> recv_fifo(size_t t) const {
    const auto &tb = *tbs_[t].tb;
    return {tb.recv_peer->value(), tbs_[t].rank.value(), tb.channel.value()};
  }
  size_t tb_index(RankId rank, TbId id) const {
    for (size_t t = 0; t < tbs_.size(); ++t)
      if (tbs_[t].rank == rank && tbs_[t].tb->id == id)
        return t;
    return tbs_.size();
  }

  bool can_move(size_t t) {
    if (done(t))
      return false;
    const Pos &pos = pos_[t];
    const Instruction &in = tbs_[t].tb->steps[size_t(pos.step)];
    if (pos.msg == 0 && in.dependency) {
      size_t target = tb_index(tbs_[t].rank, in.dependency->tb);
      if (target == tbs_.size() ||
          flags_[target] < int64_t(pos.it) * (max_len_ + 1) + in.dependency->step.value())
        return false;
    }
    if (messages(in) == 0)
      return true;
    if (op_receives(in.op) && fifos_[recv_fifo(t)].empty())
      return false;
    if (op_sends(in.op) && int(fifos_[send_fifo(t)].size()) >= capacity_)
      return false;
    return true;
  }

  void move(size_t t) {
    Pos &pos = pos_[t];
    const RankId rank = tbs_[t].rank;
    const Instruction &in = tbs_[t].tb->steps[size_t(pos.step)];
    const int n = messages(in);
    const int it = pos.it;
    auto src = [&](int k) { return load(it, rank, {in.src.buffer, in.src.offset + k}); };
    auto dst = [&](int k, Val v) {
      store(it, rank, {in.dst.buffer, in.dst.offset + k}, std::move(v));
    };
    if (n == 0) {
      std::vector<Val> vals;
      for (int k = 0; k < in.count; ++k)
        vals.push_back(in.op == OpType::Copy
                           ? src(k)
                           : plus(load(it, rank, {in.dst.buffer, in.dst.offset + k}), src(k)));
      if (in.op == OpType::Copy || in.op == OpType::Reduce)
        for (int k = 0; k < in.count; ++k)
          dst(k, vals[size_t(k)]);
    } else {
      const int per = n <= 1 ? in.count : per_transfer_;
      const int lo = std::min(in.count, pos.msg * per), hi = std::min(in.count, lo + per);
      std::vector<Val> got;
      if (op_receives(in.op)) {
        auto &q = fifos_[recv_fifo(t)];
        got = std::move(q.front());
        q.pop_front();
      }
      std::vector<Val> out;
      for (int k = lo; k < hi; ++k) {
        Val r = size_t(k - lo) < got.size() ? got[size_t(k - lo)] : Val{};
        Val v = in.op == OpType::Send                                    ? src(k)
                : in.op == OpType::Recv || in.op == OpType::RecvCopySend ? r
                                                                         : plus(r, src(k));
        if (in.op == OpType::Recv || in.op == OpType::RecvCopySend ||
            in.op == OpType::RecvReduceCopy || in.op == OpType::RecvReduceCopySend)
          dst(k, v);
        out.push_back(std::move(v));
      }
      if (op_sends(in.op))
        fifos_[send_fifo(t)].push_back(std::move(out));
      if (++pos.msg < n)
        return;
    }
    if (in.has_dep)
      flags_[t] = int64_t(pos.it) * (max_len_ + 1) + pos.step;
    pos.msg = 0;
    if (++pos.step == int(tbs_[t].tb->steps.size()))
      pos.step = 0, ++pos.it;
  }
};

// ---- Faults --------------------------------------------------------------------------------

void renumber(std::vector<Instruction> &steps) {
  for (size_t k = 0; k < steps.size(); ++k)
    steps[k].declared_index = int(k);
}

template <class Edit>
void each_step(const ProgramDraft &d, std::vector<Mutant> &out, const std::string &fault,
               Edit &&edit) {
  for (size_t r = 0; r < d.ranks.size(); ++r)
    for (size_t t = 0; t < d.ranks[r].thread_blocks.size(); ++t)
      for (size_t k = 0; k < d.ranks[r].thread_blocks[t].steps.size(); ++k) {
        ProgramDraft m = d;
        ThreadBlock &tb = m.ranks[r].thread_blocks[t];
        std::vector<Instruction> steps = tb.steps.to_vector();
        if (!edit(steps, k))
          continue;
        tb.steps = StepList(steps);
        out.push_back({fault, fmt::format("rank {} tb {} step {}", r, t, k), true, std::move(m)});
      }
}

} // namespace

std::vector<CampaignProgram> campaign_programs() {
  std::vector<CampaignProgram> out;
  auto add = [&](std::string name, Program p) {
    auto c = collective_for_program(p, std::nullopt);
    out.push_back({std::move(name), std::move(p), *c});
  };
  add("ring allgather (4 ranks)", ring_allgather_program(4, 1));
  add("ring allreduce (4 ranks)", ring_allreduce_program(4, 1));
  add("ring allreduce LL (3 ranks, 2 ch)", ring_allreduce_program(3, 2, Protocol::LL));
  add("all-pairs allreduce (3 ranks)", allpairs_allreduce_program(3));
  add("recursive doubling allgather (4)", recursive_doubling_allgather_program(4));
  add("two-step alltoall (2x2)", two_step_alltoall_program(2, 2));
  return out;
}

std::vector<Mutant> mutants_of(const Program &program) {
  const ProgramDraft &d = program.draft();
  std::vector<Mutant> out;
  each_step(d, out, "drop dependency", [](std::vector<Instruction> &steps, size_t k) {
    if (!steps[k].dependency)
      return false;
    steps[k].dependency.reset();
    return true;
  });
  each_step(d, out, "swap steps", [](std::vector<Instruction> &steps, size_t k) {
    if (k + 1 >= steps.size())
      return false;
    std::swap(steps[k], steps[k + 1]);
    renumber(steps);
    return true;
  });
  for (size_t r = 0; r < d.ranks.size(); ++r)
    for (size_t t = 0; t < d.ranks[r].thread_blocks.size(); ++t)
      for (size_t k = 0; k < d.ranks[r].thread_blocks[t].steps.size(); ++k) {
        if (d.ranks[r].thread_blocks[t].steps[k].op != OpType::Send)
          continue;
        for (size_t u = 0; u < d.ranks[r].thread_blocks.size(); ++u) {
          if (u == t)
            continue;
          ProgramDraft m = d;
          auto &from = m.ranks[r].thread_blocks[t], &to = m.ranks[r].thread_blocks[u];
          std::vector<Instruction> from_steps = from.steps.to_vector();
          std::vector<Instruction> to_steps = to.steps.to_vector();
          to_steps.push_back(from_steps[k]);
          from_steps.erase(from_steps.begin() + long(k));
          renumber(from_steps);
          renumber(to_steps);
          from.steps = StepList(from_steps);
          to.steps = StepList(to_steps);
          out.push_back({"move send to another tb",
                         fmt::format("rank {} tb {} step {} -> tb {}", r, t, k, u), true,
                         std::move(m)});
        }
      }
  for (size_t r = 0; r < d.ranks.size(); ++r)
    for (int b = 0; b < 3; ++b) {
      ProgramDraft m = d;
      int &size = b == 0   ? m.ranks[r].input_chunks
                  : b == 1 ? m.ranks[r].output_chunks
                           : m.ranks[r].scratch_chunks;
      if (size == 0)
        continue;
      --size;
      out.push_back(
          {"shrink a buffer", fmt::format("rank {} buffer {}", r, "ios"[b]), true, std::move(m)});
    }
  each_step(d, out, "double a reduction", [](std::vector<Instruction> &steps, size_t k) {
    Instruction &in = steps[k];
    if (in.op == OpType::Reduce) {
      steps.insert(steps.begin() + long(k) + 1, Instruction(in));
    } else if (in.op == OpType::RecvCopySend || in.op == OpType::Recv) {
      // Reduce the received value with what is already there: that value counted twice.
      in.op = in.op == OpType::Recv ? OpType::RecvReduceCopy : OpType::RecvReduceCopySend;
      in.src = in.dst;
    } else {
      return false;
    }
    renumber(steps);
    return true;
  });
  if (d.protocol != Protocol::Simple) {
    ProgramDraft m = d;
    m.protocol = Protocol::Simple;
    out.push_back({"cut FIFO capacity", "protocol -> Simple", true, std::move(m)});
  }
  each_step(d, out, "remove a receive", [](std::vector<Instruction> &steps, size_t k) {
    if (!op_receives(steps[k].op))
      return false;
    steps.erase(steps.begin() + long(k));
    renumber(steps);
    return true;
  });
  each_step(d, out, "change a count", [](std::vector<Instruction> &steps, size_t k) {
    if (steps[k].op == OpType::Nop)
      return false;
    steps[k].count += 1;
    return true;
  });
  for (Mutant &m : out)
    m.parses = Program::create(m.draft).has_value();
  return out;
}

// The transfer sizes the executor uses somewhere in the program's size window: the window's
// ends and every power of two between, each size's chunk against the protocol's tile (written
// here from the executor's rule, apart from the verifier's regime analysis).
std::vector<int> transfer_sizes_in_window(const Program &program) {
  const int64_t loop = program.chunks_per_loop();
  const int64_t tile = protocol_traits(program.protocol()).executor_tile_bytes;
  const int64_t lo = std::max<int64_t>(program.draft().min_bytes, loop);
  const int64_t hi = program.draft().max_bytes > 0 ? program.draft().max_bytes : int64_t(1) << 40;
  std::set<int> sizes;
  auto at = [&](int64_t n) {
    const int64_t chunk = std::max<int64_t>(1, n / loop);
    sizes.insert(int(std::clamp<int64_t>(tile / chunk, 1, kMaxStepCount)));
  };
  if (hi < lo)
    return {};
  at(lo);
  at(hi);
  for (int64_t n = 1; n <= hi; n *= 2)
    if (n >= lo)
      at(n);
  return {sizes.rbegin(), sizes.rend()};
}

OracleVerdict run_oracle(const Program &program, const CollectiveSpec &collective, int schedules,
                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int capacity = protocol_traits(program.protocol()).fifo_messages;
  std::vector<bool> modes;
  if (program.in_place())
    modes.push_back(true);
  if (program.out_of_place() || !program.in_place())
    modes.push_back(false);
  for (bool in_place : modes)
    for (int per_transfer : transfer_sizes_in_window(program))
      for (int s = 0; s < schedules; ++s) {
        std::string what =
            RandomRun(program, collective, in_place, capacity, per_transfer, rng).run();
        if (!what.empty())
          return {true, fmt::format("{} ({}, {} chunk(s) per transfer)", what,
                                    in_place ? "in place" : "out of place", per_transfer)};
      }
  return {};
}

std::vector<CampaignProgram> corpus_programs(const std::string &dir, size_t max_steps) {
  std::vector<CampaignProgram> out;
  auto manifest = read_text_file(dir + "/MANIFEST.json");
  SYNCOLL_INVARIANT(manifest.has_value(), "the conformance corpus has no manifest");
  const nlohmann::json root = nlohmann::json::parse(*manifest);
  for (const auto &entry : root["entries"]) {
    if (!entry["violated"].empty())
      continue;
    const std::string file = entry["file"];
    auto program = read_program_file(dir + "/" + file);
    SYNCOLL_INVARIANT(program.has_value(), "a corpus file does not read");
    size_t steps = 0;
    for (const RankProgram &rp : program->value.ranks())
      for (const ThreadBlock &tb : rp.thread_blocks)
        steps += tb.steps.size();
    if (steps > max_steps)
      continue;
    auto collective =
        entry["collective"].is_null()
            ? collective_for_program(program->value, std::nullopt)
            : read_collective_file(dir + "/" + entry["collective"].get<std::string>());
    SYNCOLL_INVARIANT(collective.has_value(), "a corpus program without its collective");
    out.push_back({"corpus " + file.substr(0, file.size() - 4), program->value, *collective});
  }
  return out;
}

CampaignResult run_campaign(const std::vector<CampaignProgram> &programs, int schedules,
                            uint64_t seed) {
  CampaignResult result;
  for (const CampaignProgram &cp : programs) {
    verifier::VerifyOptions options;
    options.collective = cp.collective;
    if (!verifier::verify(cp.program, options).all_hold())
      result.correct_program_failures.push_back(cp.name + ": flagged by the verifier");
    if (run_oracle(cp.program, cp.collective, schedules, seed).misbehaves)
      result.correct_program_failures.push_back(cp.name + ": misbehaves under the oracle");
    std::map<std::string, CampaignRow> rows;
    for (const Mutant &m : mutants_of(cp.program)) {
      CampaignRow &row = rows[m.fault];
      row.program = cp.name;
      row.fault = m.fault;
      ++row.mutants;
      if (!m.parses) {
        ++row.rejected_by_parser;
        continue;
      }
      const Program mp = *Program::create(m.draft);
      const bool caught = !verifier::verify(mp, options).all_hold();
      const OracleVerdict oracle = run_oracle(mp, cp.collective, schedules, seed);
      row.caught_by_verifier += caught;
      row.behaviour_changing += oracle.misbehaves;
      if (oracle.misbehaves && !caught) {
        ++row.missed;
        row.missed_examples.push_back(m.where + ": " + oracle.how);
      }
      row.equivalent_and_passed += !oracle.misbehaves && !caught;
    }
    for (auto &[fault, row] : rows)
      result.rows.push_back(std::move(row));
  }
  return result;
}

} // namespace syncoll::testing
