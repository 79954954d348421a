#include "lowering/from_algorithm.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll::lowering {

Expected<DslProgram> algorithm_to_dsl(const Algorithm &algorithm, const Topology &topology,
                                      const CollectiveSpec &collective, DslOptions options) {
  options.in_place = false;
  const std::string name = algorithm.name.empty() ? "synthesized" : algorithm.name;
  SYNCOLL_TRY(prog, DslProgram::create(name, topology, collective, options));
  const int G = collective.num_chunks();
  // Where each rank keeps a chunk it receives: its output slot, or scratch slot `chunk`.
  auto home = [&](int c, RankId n) -> std::pair<Buffer, int> {
    for (const ChunkPlace &q : collective.chunk(ChunkId(c)).post)
      if (q.rank == n)
        return {Buffer::output(), q.slot};
    return {Buffer::named("relay"), c};
  };
  std::map<std::pair<int, int>, ChunkRef> held; // (chunk, rank) -> current value
  for (int c = 0; c < G; ++c)
    for (const ChunkPlace &p : collective.chunk(ChunkId(c)).pre) {
      SYNCOLL_TRY(ref, prog.chunk(p.rank.value(), Buffer::input(), p.slot));
      held.emplace(std::make_pair(c, p.rank.value()), ref);
    }
  for (size_t s = 0; s < algorithm.steps.size(); ++s) {
    // Sends whose source receives the same chunk in this step go first (they send the value
    // from before the step); repeat until every send is placed.
    std::vector<Send> pending = algorithm.steps[s].sends, ordered;
    while (!pending.empty()) {
      std::vector<Send> later;
      for (const Send &x : pending) {
        const bool source_written = std::any_of(pending.begin(), pending.end(), [&](const Send &y) {
          return &y != &x && y.chunk == x.chunk && y.dst == x.src;
        });
        (source_written ? later : ordered).push_back(x);
      }
      if (later.size() == pending.size())
        return fail({}, fmt::format("step {}: the sends of chunk {} form a cycle; every send "
                                    "must read the value from before the step",
                                    s + 1, later.front().chunk.value()));
      pending = std::move(later);
    }
    std::map<std::pair<int, int>, int> on_link; // sends of this step so far per link
    for (const Send &x : ordered) {
      const int c = x.chunk.value();
      // The k-th send of the step over a link starts on channel k: a thread block moves one
      // message at a time, so sends that share a link in a step (a doubled NVLink, or several
      // rounds) need thread blocks of their own to overlap. On DGX-1 this took the synthesized
      // Allgather (C2, S2, R3) at 1 GiB from 11.3 ms to 9.4 ms.
      CopyOptions lane;
      lane.preferred_channel =
          std::min(on_link[{x.src.value(), x.dst.value()}]++, kMaxChannelIndex - 1);
      if (c < 0 || c >= G)
        return fail({}, fmt::format("step {}: chunk {} does not exist", s + 1, c));
      auto src = held.find({c, x.src.value()});
      if (src == held.end())
        return fail({}, fmt::format("step {}: rank {} sends chunk {} it does not hold", s + 1,
                                    x.src.value(), c));
      const auto [buffer, index] = home(c, x.dst);
      const auto key = std::make_pair(c, x.dst.value());
      if (x.op == SendOp::Copy) {
        SYNCOLL_TRY(ref, prog.copy(src->second, x.dst.value(), buffer, index, lane));
        held.insert_or_assign(key, ref);
        continue;
      }
      auto dst = held.find(key);
      if (dst == held.end())
        return fail({}, fmt::format("step {}: rank {} reduces chunk {} into rank {}, which has "
                                    "no contribution to it",
                                    s + 1, x.src.value(), c, x.dst.value()));
      if (dst->second.buffer != buffer || dst->second.index != index) {
        // The receiver's own contribution moves out of its input before anything is added.
        SYNCOLL_TRY(moved, prog.copy(dst->second, x.dst.value(), buffer, index));
        dst->second = moved;
      }
      SYNCOLL_TRY(sum, prog.reduce(dst->second, src->second, lane));
      dst->second = sum;
    }
  }
  for (int c = 0; c < G; ++c)
    for (const ChunkPlace &q : collective.chunk(ChunkId(c)).post) {
      auto it = held.find({c, q.rank.value()});
      if (it == held.end())
        return fail({}, fmt::format("rank {} ends without chunk {}", q.rank.value(), c));
      if (it->second.buffer == Buffer::output() && it->second.index == q.slot)
        continue;
      SYNCOLL_CHECK(prog.copy(it->second, q.rank.value(), Buffer::output(), q.slot));
    }
  return prog;
}

} // namespace syncoll::lowering
