#include "verifier/structural.h"

#include "verifier/detail/connections.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll::verifier {
namespace {

int buffer_size(const RankProgram &rp, BufferKind b) {
  switch (b) {
  case BufferKind::Input:
    return rp.input_chunks;
  case BufferKind::Output:
    return rp.output_chunks;
  case BufferKind::Scratch:
    return rp.scratch_chunks;
  }
  return 0;
}

// Which operands a step really uses (reference 1.3): the others are ignored by the runtime and
// may hold anything (msccl-tools writes the peer's location there).
bool uses_src(OpType op) {
  return op == OpType::Send || op == OpType::RecvReduceSend || op == OpType::RecvReduceCopy ||
         op == OpType::RecvReduceCopySend || op == OpType::Copy || op == OpType::Reduce;
}
bool uses_dst(OpType op) {
  return op == OpType::Recv || op == OpType::RecvCopySend || op == OpType::RecvReduceCopy ||
         op == OpType::RecvReduceCopySend || op == OpType::Copy || op == OpType::Reduce;
}

} // namespace

std::vector<StructuralIssue> check_structure(const Program &program,
                                             const CollectiveSpec *collective) {
  std::vector<StructuralIssue> out;
  auto issue = [&](const char *code, std::string message, std::optional<StepRef> where = {}) {
    out.push_back({code, std::move(message), where});
  };
  if (program.num_channels() > kMaxChannelIndex)
    issue("nchannels-limit",
          fmt::format("nchannels {} exceeds the runtime's 32 channels", program.num_channels()));
  for (const RankProgram &rp : program.ranks()) {
    const RankId me = rp.rank;
    if (collective) {
      if (rp.input_chunks < collective->input_chunks())
        issue("buffer-size", fmt::format("rank {}: i_chunks {} is smaller than {}'s input of {} "
                                         "chunks",
                                         me.value(), rp.input_chunks, collective->name(),
                                         collective->input_chunks()));
      if (rp.output_chunks < collective->output_chunks())
        issue("buffer-size", fmt::format("rank {}: o_chunks {} is smaller than {}'s output of {} "
                                         "chunks",
                                         me.value(), rp.output_chunks, collective->name(),
                                         collective->output_chunks()));
    }
    for (const ThreadBlock &tb : rp.thread_blocks) {
      if (tb.channel.value() >= program.num_channels())
        issue("chan-range",
              fmt::format("rank {} tb {}: channel {} is not below nchannels {}; its connection is "
                          "never set up",
                          me.value(), tb.id.value(), tb.channel.value(), program.num_channels()),
              StepRef{me, tb.id, 0, 0});
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const Instruction &in = tb.steps[k];
        const StepRef at{me, tb.id, static_cast<int>(k), 0};
        const std::string where = describe(at);
        if (in.declared_index != static_cast<int>(k))
          issue("step-index",
                fmt::format("{}: s=\"{}\" but the step is at position {}; the runtime numbers by "
                            "position, so dependencies on it are off",
                            where, in.declared_index, k),
                at);
        if (in.op != OpType::Nop && in.count == 0)
          issue("count-zero", fmt::format("{}: cnt 0 breaks the proxy's step accounting", where),
                at);
        if (in.op == OpType::Nop && !in.dependency)
          issue("nop-without-dep",
                fmt::format("{}: a nop without a dependency is not counted by the device, so "
                            "flags of later steps are off by one",
                            where),
                at);
        for (auto [ref, used, name] : {std::tuple{in.src, uses_src(in.op), "src"},
                                       std::tuple{in.dst, uses_dst(in.op), "dst"}}) {
          if (!used)
            continue;
          const int size = buffer_size(rp, ref.buffer);
          if (ref.offset < 0 || ref.offset + in.count > size)
            issue("offset-range",
                  fmt::format("{}: {} {}[{}..{}) runs past the buffer's {} chunks", where, name,
                              buffer_kind_name(ref.buffer), ref.offset, ref.offset + in.count,
                              size),
                  at);
        }
        if ((in.op == OpType::Copy || in.op == OpType::Reduce) && in.src.buffer == in.dst.buffer &&
            in.src.offset < in.dst.offset + in.count && in.dst.offset < in.src.offset + in.count)
          issue("copy-overlap",
                fmt::format("{}: '{}' with overlapping src and dst ranges is undefined", where,
                            op_type_name(in.op)),
                at);
        if (in.dependency) {
          const Dependency &d = *in.dependency;
          if (d.tb.value() > 127)
            issue("depid-range",
                  fmt::format("{}: depid {} does not fit the device's int8", where, d.tb.value()),
                  at);
          if (d.tb.index() >= rp.thread_blocks.size()) {
            issue("dep-target",
                  fmt::format("{}: depends on tb {}, which rank {} does not have", where,
                              d.tb.value(), me.value()),
                  at);
            continue;
          }
          const ThreadBlock &target = rp.thread_blocks[d.tb.index()];
          if (d.step.index() >= target.steps.size()) {
            issue("dep-target",
                  fmt::format("{}: depends on step {} of tb {}, which has {} steps", where,
                              d.step.value(), d.tb.value(), target.steps.size()),
                  at);
            continue;
          }
          if (d.tb == tb.id && d.step.index() >= k)
            issue("dep-self",
                  fmt::format("{}: waits for step {} of its own thread block, which "
                              "cannot run before it",
                              where, d.step.value()),
                  at);
          bool published = false;
          for (size_t j = d.step.index(); j < target.steps.size(); ++j)
            published = published || target.steps[j].has_dep;
          if (!published)
            issue("dep-unpublished",
                  fmt::format("{}: depends on tb {} step {}, but neither it nor a later step of "
                              "tb {} has hasdep=1, so the wait hangs in the last iteration",
                              where, d.tb.value(), d.step.value(), d.tb.value()),
                  at);
        }
      }
    }
  }

  const detail::ConnectionMap cm = detail::map_connections(program);
  for (const detail::Connection &c : cm.connections) {
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
    // The k-th push pairs with the k-th pop; compare them step by step.
    std::vector<std::pair<StepRef, int>> pushes, pops;
    for (TbId t : c.pushers) {
      const ThreadBlock &tb = program.rank(c.sender).thread_blocks[t.index()];
      for (size_t k = 0; k < tb.steps.size(); ++k)
        if (op_sends(tb.steps[k].op))
          pushes.push_back({{c.sender, t, int(k), 0}, tb.steps[k].count});
    }
    for (TbId t : c.poppers) {
      const ThreadBlock &tb = program.rank(c.receiver).thread_blocks[t.index()];
      for (size_t k = 0; k < tb.steps.size(); ++k)
        if (op_receives(tb.steps[k].op))
          pops.push_back({{c.receiver, t, int(k), 0}, tb.steps[k].count});
    }
    if (pushes.size() != pops.size()) {
      if (pops.empty() && c.poppers.empty())
        issue("conn-unmatched",
              fmt::format("{}: rank {} sends {} messages, but rank {} has no "
                          "thread block receiving from rank {} on channel {}",
                          name, c.sender.value(), pushes.size(), c.receiver.value(),
                          c.sender.value(), c.channel.value()),
              pushes.front().first);
      else if (pushes.empty() && c.pushers.empty())
        issue("conn-unmatched",
              fmt::format("{}: rank {} receives {} messages, but rank {} has no "
                          "thread block sending to rank {} on channel {}",
                          name, c.receiver.value(), pops.size(), c.sender.value(),
                          c.receiver.value(), c.channel.value()),
              pops.front().first);
      else
        issue("message-count",
              fmt::format("{}: {} send steps but {} receive steps per iteration", name,
                          pushes.size(), pops.size()),
              pushes.size() > pops.size() ? pushes[pops.size()].first : pops[pushes.size()].first);
    }
    for (size_t k = 0; k < std::min(pushes.size(), pops.size()); ++k)
      if (pushes[k].second != pops[k].second) {
        issue("count-mismatch",
              fmt::format("{}: message {} is sent by {} with cnt {} but received by {} with cnt "
                          "{}; it hangs or corrupts depending on the message size",
                          name, k, describe(pushes[k].first), pushes[k].second,
                          describe(pops[k].first), pops[k].second),
              pops[k].first);
        break;
      }
  }
  return out;
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
