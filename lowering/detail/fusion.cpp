// Pass 3, fusion (GC3 section 4.2): a receive whose value goes straight out again becomes one
// instruction. r + s of the received chunks -> rcs; rrc + s -> rrcs, or rrs when the reduced value
// is only forwarded and then overwritten (the ring's reduce-scatter half).
#include "lowering/detail/passes.h"
#include "model/invariant.h"

#include <algorithm>

namespace syncoll::lowering::detail {
namespace {

// Per memory chunk, every access in trace order: (instruction, writes).
using History = std::map<Memory, std::vector<std::pair<int, bool>>>;

History access_history(const Aliasing &alias, const InstructionDag &dag) {
  History history;
  for (size_t i = 0; i < dag.instructions.size(); ++i) {
    const DagInstruction &in = dag.instructions[i];
    for (const Memory &m : reads_of(alias, in))
      history[m].emplace_back(int(i), false);
    for (const Memory &m : writes_of(alias, in))
      history[m].emplace_back(int(i), true);
  }
  return history;
}

// The accesses of `m` after `writer`'s write, up to and including the next write.
std::vector<std::pair<int, bool>> next_accesses(const History &history, int writer,
                                                const Memory &m) {
  std::vector<std::pair<int, bool>> after;
  const auto &h = history.at(m);
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
}

// The one send that first reads every chunk receive `r` wrote, if there is one.
std::optional<int> sole_forwarder(const History &history, int r,
                                  const std::vector<Memory> &written) {
  std::optional<int> forward;
  for (const Memory &m : written) {
    auto after = next_accesses(history, r, m);
    if (after.empty() || after.front().second)
      return std::nullopt;
    const int reader = after.front().first;
    if (forward && *forward != reader)
      return std::nullopt;
    forward = reader;
  }
  return forward;
}

} // namespace

void fuse(const Aliasing &alias, InstructionDag &dag) {
  const History history = access_history(alias, dag);
  for (size_t i = 0; i < dag.instructions.size(); ++i) {
    DagInstruction &r = dag.instructions[i];
    // Only single-chunk receives fuse. A fused step of c chunks is c messages at large sizes
    // (count splitting, docs/semantics.md), and a ring of them fills Simple's 2-slot FIFOs with
    // the first send alone: every thread block then waits for output space (the verifier finds
    // this cycle in an aggregated hierarchical Allreduce). Unfused, the receiving thread block
    // drains its connection on its own.
    if (r.removed || r.count != 1 || (r.op != OpType::Recv && r.op != OpType::RecvReduceCopy))
      continue;
    const std::vector<Memory> written = writes_of(alias, r);
    const std::optional<int> forward = sole_forwarder(history, int(i), written);
    if (!forward)
      continue;
    DagInstruction &s = dag.instructions[size_t(*forward)];
    if (s.removed || s.op != OpType::Send || s.count != r.count ||
        alias.range(s.rank, s.src_buffer, s.src_index, s.count) != written)
      continue;
    if (s.hints.channel != r.hints.channel)
      continue;
    // The value dies after the send when every written chunk is next overwritten, read by
    // nothing but that send.
    bool dies = r.op == OpType::RecvReduceCopy;
    for (const Memory &m : written) {
      auto after = next_accesses(history, int(i), m);
      dies = dies && after.size() == 2 && after.back().second && after.front().first == *forward;
    }
    r.op = r.op == OpType::Recv ? OpType::RecvCopySend
                                : (dies ? OpType::RecvReduceSend : OpType::RecvReduceCopySend);
    r.send_peer = s.send_peer;
    r.operations.insert(r.operations.end(), s.operations.begin(), s.operations.end());
    r.hints.send_tb = s.hints.send_tb;
    s.removed = true;
    for (auto &[from, to] : dag.messages)
      if (from == *forward)
        from = int(i);
  }
  recompute_edges(alias, dag);
}

} // namespace syncoll::lowering::detail
