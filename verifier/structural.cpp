#include "verifier/structural.h"

#include "model/collective_traits.h"
#include "verifier/detail/connections.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <map>

namespace syncoll::verifier {
namespace {

// The rules of docs/semantics.md, "Structure", one group per method: buffers, steps,
// dependencies, connections.
class StructureChecker {
public:
  StructureChecker(const Program &program, const CollectiveSpec *collective,
                   std::span<const int> transfer_sizes)
      : program_(program), collective_(collective),
        transfer_sizes_(transfer_sizes.begin(), transfer_sizes.end()) {
    if (!collective)
      return;
    // The slots the collective reads (pre places) and writes (post places) on each rank: a
    // buffer a rank never uses for the collective (a broadcast's input off the root) may be
    // declared smaller.
    needed_.assign(size_t(program.num_ranks()), {0, 0});
    for (int c = 0; c < collective->num_chunks(); ++c) {
      const ChunkSpec &chunk = collective->chunk(ChunkId(c));
      for (const ChunkPlace &p : chunk.pre)
        if (p.rank.index() < needed_.size())
          needed_[p.rank.index()][0] = std::max(needed_[p.rank.index()][0], p.slot + 1);
      for (const ChunkPlace &p : chunk.post)
        if (p.rank.index() < needed_.size())
          needed_[p.rank.index()][1] = std::max(needed_[p.rank.index()][1], p.slot + 1);
    }
  }

  std::vector<StructuralIssue> run() {
    for (const RankProgram &rp : program_.ranks()) {
      buffer_rules(rp);
      for (const ThreadBlock &tb : rp.thread_blocks) {
        channel_rule(rp, tb);
        size_t k = 0;
        for (const Instruction &in : tb.steps) {
          step_rules(rp, tb, k, in);
          if (in.dependency)
            dependency_rules(rp, tb, k, in);
          ++k;
        }
      }
    }
    for (const detail::Connection &c : detail::map_connections(program_).connections)
      connection_rules(c);
    return std::move(out_);
  }

private:
  void issue(const char *code, std::string message, std::optional<StepRef> where = {}) {
    out_.push_back({code, std::move(message), where});
  }

  // Buffers hold at least what the collective reads and writes, in every aliasing mode the
  // program claims. Out of place each declared buffer must hold the collective's; in place the
  // two share memory, and the runtimes declare the aliased one as 0 chunks (docs/semantics.md,
  // "Aliasing"), so each collective slot must only land where some declared slot lands.
  void buffer_rules(const RankProgram &rp) {
    if (!collective_)
      return;
    const int me = rp.rank.value();
    if (program_.out_of_place() || !program_.in_place()) {
      const auto [input, output] = needed_[rp.rank.index()];
      if (rp.input_chunks < input)
        issue("buffer-size",
              fmt::format("rank {}: i_chunks {} is smaller than the {} chunks {} "
                          "reads there{}",
                          me, rp.input_chunks, input, collective_->name(), out_of_place_note()));
      if (rp.output_chunks < output)
        issue("buffer-size",
              fmt::format("rank {}: o_chunks {} is smaller than the {} chunks {} "
                          "writes there{}",
                          me, rp.output_chunks, output, collective_->name(), out_of_place_note()));
    }
    if (program_.in_place())
      in_place_buffer_rule(rp);
  }

  std::string out_of_place_note() const {
    return program_.in_place() ? " (out of place, which the program also claims)" : "";
  }

  void in_place_buffer_rule(const RankProgram &rp) {
    std::array<std::vector<bool>, 2> covered; // per home buffer (input, output)
    auto mark = [&](BufferKind b, int k) {
      const AliasedSlot home = in_place_slot(*collective_, rp.rank, b, k);
      auto &v = covered[size_t(home.buffer)];
      if (v.size() <= size_t(home.index))
        v.resize(size_t(home.index) + 1, false);
      v[size_t(home.index)] = true;
    };
    for (int k = 0; k < rp.input_chunks; ++k)
      mark(BufferKind::Input, k);
    for (int k = 0; k < rp.output_chunks; ++k)
      mark(BufferKind::Output, k);
    const auto [input, output] = needed_[rp.rank.index()];
    for (auto [b, size] :
         {std::pair{BufferKind::Input, input}, std::pair{BufferKind::Output, output}})
      for (int k = 0; k < size; ++k) {
        const AliasedSlot home = in_place_slot(*collective_, rp.rank, b, k);
        const auto &v = covered[size_t(home.buffer)];
        if (size_t(home.index) < v.size() && v[size_t(home.index)])
          continue;
        issue("buffer-size",
              fmt::format(
                  "rank {}: in place, {}'s {} slot {} lives at {}[{}], which neither "
                  "declared buffer holds (i_chunks {}, o_chunks {})",
                  rp.rank.value(), collective_->name(), b == BufferKind::Input ? "input" : "output",
                  k, buffer_kind_name(home.buffer), home.index, rp.input_chunks, rp.output_chunks));
        break;
      }
  }

  void channel_rule(const RankProgram &rp, const ThreadBlock &tb) {
    if (tb.channel.value() >= program_.num_channels())
      issue("chan-range",
            fmt::format("rank {} tb {}: channel {} is not below nchannels {}; its connection is "
                        "never set up",
                        rp.rank.value(), tb.id.value(), tb.channel.value(),
                        program_.num_channels()),
            StepRef{rp.rank, tb.id, 0, 0});
  }

  // Numbering, counts, nops, operand ranges and local copies of one step.
  void step_rules(const RankProgram &rp, const ThreadBlock &tb, size_t k, const Instruction &in) {
    const StepRef at{rp.rank, tb.id, static_cast<int>(k), 0};
    const std::string where = describe(at);
    if (in.declared_index != static_cast<int>(k))
      issue("step-index",
            fmt::format("{}: s=\"{}\" but the step is at position {}; the runtime numbers by "
                        "position, so dependencies on it are off",
                        where, in.declared_index, k),
            at);
    if (in.op != OpType::Nop && in.count == 0)
      issue("count-zero", fmt::format("{}: cnt 0 breaks the proxy's step accounting", where), at);
    if (in.op == OpType::Nop && !in.dependency)
      issue("nop-without-dep",
            fmt::format("{}: a nop without a dependency is not counted by the device, so "
                        "flags of later steps are off by one",
                        where),
            at);
    // Only the operands a step really uses are checked: the runtime ignores the others, and
    // msccl-tools writes the peer's location there.
    const OpTraits &op = op_traits(in.op);
    for (auto [ref, used, name] : {std::tuple{in.src, op.reads_src, "src"},
                                   std::tuple{in.dst, op.reads_dst || op.writes_dst, "dst"}}) {
      if (!used)
        continue;
      const int size = rp.chunks(ref.buffer);
      if (ref.offset < 0 || ref.offset + in.count > size)
        issue("offset-range",
              fmt::format("{}: {} {}[{}..{}) runs past the buffer's {} chunks", where, name,
                          buffer_kind_name(ref.buffer), ref.offset, ref.offset + in.count, size),
              at);
    }
    const bool local = !op.sends && !op.receives && op.writes_dst;
    if (local && in.src.buffer == in.dst.buffer && in.src.offset < in.dst.offset + in.count &&
        in.dst.offset < in.src.offset + in.count)
      issue("copy-overlap",
            fmt::format("{}: '{}' with overlapping src and dst ranges is undefined", where,
                        op_type_name(in.op)),
            at);
  }

  // A dependency names a step that exists, can run first, and publishes its flag.
  void dependency_rules(const RankProgram &rp, const ThreadBlock &tb, size_t k,
                        const Instruction &in) {
    const Dependency d = *in.dependency;
    const StepRef at{rp.rank, tb.id, static_cast<int>(k), 0};
    const std::string where = describe(at);
    if (d.tb.value() > 127)
      issue("depid-range",
            fmt::format("{}: depid {} does not fit the device's int8", where, d.tb.value()), at);
    if (d.tb.index() >= rp.thread_blocks.size()) {
      issue("dep-target",
            fmt::format("{}: depends on tb {}, which rank {} does not have", where, d.tb.value(),
                        rp.rank.value()),
            at);
      return;
    }
    const ThreadBlock &target = rp.thread_blocks[d.tb.index()];
    if (d.step.index() >= target.steps.size()) {
      issue("dep-target",
            fmt::format("{}: depends on step {} of tb {}, which has {} steps", where,
                        d.step.value(), d.tb.value(), target.steps.size()),
            at);
      return;
    }
    if (d.tb == tb.id && d.step.index() >= k)
      issue("dep-self",
            fmt::format("{}: waits for step {} of its own thread block, which cannot run "
                        "before it",
                        where, d.step.value()),
            at);
    bool published = false;
    for (size_t j = d.step.index(); j < target.steps.size(); ++j)
      published = published || target.steps[j].has_dep;
    if (!published)
      issue("dep-unpublished",
            fmt::format("{}: depends on tb {} step {}, but neither it nor a later step of tb {} "
                        "has hasdep=1, so the wait hangs in the last iteration",
                        where, d.tb.value(), d.step.value(), d.tb.value()),
            at);
  }

  // One sender and one receiver per connection, and the k-th push pairs with the k-th pop.
  void connection_rules(const detail::Connection &c) {
    const std::string name = fmt::format("connection {}->{} channel {}", c.sender.value(),
                                         c.receiver.value(), c.channel.value());
    if (c.pushers.size() > 1)
      issue("conn-shared",
            fmt::format("{}: rank {} thread blocks {} and {} both send on it; they share one FIFO "
                        "slot counter",
                        name, c.sender.value(), c.pushers[0].value(), c.pushers[1].value()),
            StepRef{c.sender, c.pushers[1], 0, 0});
    if (c.poppers.size() > 1)
      issue("conn-shared",
            fmt::format("{}: rank {} thread blocks {} and {} both receive on it; they share one "
                        "FIFO slot counter",
                        name, c.receiver.value(), c.poppers[0].value(), c.poppers[1].value()),
            StepRef{c.receiver, c.poppers[1], 0, 0});
    const auto pushes = messages(c.sender, c.pushers, op_sends);
    const auto pops = messages(c.receiver, c.poppers, op_receives);
    if (pops.empty() && c.poppers.empty() && !pushes.empty()) {
      issue("conn-unmatched",
            fmt::format("{}: rank {} sends {} messages, but rank {} has no "
                        "thread block receiving from rank {} on channel {}",
                        name, c.sender.value(), pushes.size(), c.receiver.value(), c.sender.value(),
                        c.channel.value()),
            pushes.front().first);
      return;
    }
    if (pushes.empty() && c.pushers.empty() && !pops.empty()) {
      issue("conn-unmatched",
            fmt::format("{}: rank {} receives {} messages, but rank {} has no "
                        "thread block sending to rank {} on channel {}",
                        name, c.receiver.value(), pops.size(), c.sender.value(), c.receiver.value(),
                        c.channel.value()),
            pops.front().first);
      return;
    }
    // The k-th transfer pushed pairs with the k-th popped, after count splitting: steps must
    // split into the same transfers in every regime the sizes reach (a cnt=2 send against two
    // cnt=1 receives pairs only when every chunk travels alone).
    for (int per_transfer : transfer_sizes_)
      if (!transfers_pair(name, pushes, pops, per_transfer))
        return;
  }

  // One regime: false, with the issue reported, when the transfers do not pair.
  bool transfers_pair(const std::string &name, const std::vector<std::pair<StepRef, int>> &pushes,
                      const std::vector<std::pair<StepRef, int>> &pops, int per_transfer) {
    const auto sent = transfers(pushes, per_transfer), received = transfers(pops, per_transfer);
    const std::string regime = per_transfer >= kMaxStepCount
                                   ? std::string("a whole step per transfer")
                                   : fmt::format("up to {} chunk(s) per transfer", per_transfer);
    if (sent.size() != received.size()) {
      issue("message-count",
            fmt::format("{}: {} send steps make {} transfers but {} receive steps make {} per "
                        "iteration ({})",
                        name, pushes.size(), sent.size(), pops.size(), received.size(), regime),
            sent.size() > received.size() ? sent[received.size()].first
                                          : received[sent.size()].first);
      return false;
    }
    for (size_t k = 0; k < sent.size(); ++k)
      if (sent[k].second != received[k].second) {
        issue("count-mismatch",
              fmt::format("{}: transfer {} carries {} chunk(s) from {} but {} into {} ({}); it "
                          "hangs or corrupts",
                          name, k, sent[k].second, describe(sent[k].first), received[k].second,
                          describe(received[k].first), regime),
              received[k].first);
        return false;
      }
    return true;
  }

  // Steps as the transfers the executor makes of them: ceil(cnt / per_transfer) each.
  static std::vector<std::pair<StepRef, int>>
  transfers(const std::vector<std::pair<StepRef, int>> &steps, int per_transfer) {
    std::vector<std::pair<StepRef, int>> out;
    for (const auto &[at, count] : steps)
      for (int left = std::max(1, count); left > 0; left -= per_transfer)
        out.push_back({at, std::min(left, per_transfer)});
    return out;
  }

  // The steps of `tbs` on `rank` that use the connection, with their counts, in order.
  std::vector<std::pair<StepRef, int>> messages(RankId rank, const std::vector<TbId> &tbs,
                                                bool (*uses)(OpType)) const {
    std::vector<std::pair<StepRef, int>> out;
    for (TbId t : tbs) {
      const ThreadBlock &tb = program_.rank(rank).thread_blocks[t.index()];
      int k = 0;
      for (const Instruction &in : tb.steps) {
        if (uses(in.op))
          out.push_back({{rank, t, k, 0}, in.count});
        ++k;
      }
    }
    return out;
  }

  const Program &program_;
  const CollectiveSpec *collective_;
  std::vector<std::array<int, 2>> needed_; ///< per rank: input and output slots the collective uses
  std::vector<int> transfer_sizes_;
  std::vector<StructuralIssue> out_;
};

} // namespace

std::vector<StructuralIssue> check_structure(const Program &program,
                                             const CollectiveSpec *collective,
                                             std::span<const int> transfer_sizes) {
  return StructureChecker(program, collective,
                          transfer_sizes.empty() ? std::span<const int>(kSmallAndLargeMessages)
                                                 : transfer_sizes)
      .run();
}

std::vector<StructuralIssue> check_resources(const Program &program, const ResourceLimits &limits) {
  std::vector<StructuralIssue> out;
  if (program.num_channels() > limits.max_channels)
    out.push_back({"channels",
                   fmt::format("nchannels {} exceeds the limit of {}", program.num_channels(),
                               limits.max_channels),
                   std::nullopt});
  for (const RankProgram &rp : program.ranks()) {
    if (int(rp.thread_blocks.size()) > limits.sm_budget)
      out.push_back({"sm-budget",
                     fmt::format("rank {}: {} thread blocks exceed the SM budget of {}; they "
                                 "cannot all be resident, and their spin-waits deadlock",
                                 rp.rank.value(), rp.thread_blocks.size(), limits.sm_budget),
                     std::nullopt});
    std::map<std::pair<int, int>, int> senders, receivers;
    for (const ThreadBlock &tb : rp.thread_blocks) {
      const StepRef at{rp.rank, tb.id, 0, 0};
      if (tb.id.value() > kMaxThreadBlockId)
        out.push_back({"tb-limit",
                       fmt::format("rank {}: tb id {} is beyond the runtime's {} thread blocks",
                                   rp.rank.value(), tb.id.value(), kMaxThreadBlockId + 1),
                       at});
      if (tb.channel.value() >= limits.max_channels)
        out.push_back({"channel-limit",
                       fmt::format("rank {} tb {}: channel {} is beyond the runtime's {} channels "
                                   "(indices 0..{})",
                                   rp.rank.value(), tb.id.value(), tb.channel.value(),
                                   limits.max_channels, limits.max_channels - 1),
                       at});
      for (size_t k = 0; k < tb.steps.size(); ++k)
        if (tb.steps[k].count > kMaxStepCount)
          out.push_back({"count-limit",
                         fmt::format("{}: cnt {} is beyond the executor's {}",
                                     describe(StepRef{rp.rank, tb.id, int(k), 0}),
                                     tb.steps[k].count, kMaxStepCount),
                         StepRef{rp.rank, tb.id, int(k), 0}});
      if (int(tb.steps.size()) > limits.max_steps_per_tb)
        out.push_back(
            {"steps",
             fmt::format("rank {} tb {}: {} steps exceed the runtime's {}", rp.rank.value(),
                         tb.id.value(), tb.steps.size(), limits.max_steps_per_tb),
             StepRef{rp.rank, tb.id, limits.max_steps_per_tb, 0}});
      if (tb.send_peer)
        ++senders[{tb.channel.value(), 0}];
      if (tb.recv_peer)
        ++receivers[{tb.channel.value(), 0}];
    }
    for (auto *counts : {&senders, &receivers})
      for (const auto &[key, n] : *counts)
        if (n > limits.max_tbs_per_channel_dir)
          out.push_back({"tbs-per-channel",
                         fmt::format("rank {} channel {}: {} thread blocks in one direction "
                                     "exceed the runtime's {}",
                                     rp.rank.value(), key.first, n, limits.max_tbs_per_channel_dir),
                         std::nullopt});
  }
  return out;
}

bool breaks_persistence(const std::vector<StructuralIssue> &issues) {
  return std::any_of(issues.begin(), issues.end(),
                     [](const StructuralIssue &i) { return i.code == "conn-shared"; });
}

} // namespace syncoll::verifier
