#include "nccl/algorithms.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace syncoll::nccl {
namespace {

BufferRef in(int k) {
  return {BufferKind::Input, k};
}
BufferRef out(int k) {
  return {BufferKind::Output, k};
}

// The header every NCCL program shares; the caller adds the ranks.
ProgramDraft nccl_draft(std::string name, CollectiveKind kind, Protocol protocol, int ranks,
                        int channels, int chunks_per_loop, bool in_place) {
  ProgramDraft d;
  d.name = std::move(name);
  d.collective = std::string(collective_traits(kind).executor_name);
  d.protocol = protocol;
  d.num_ranks = ranks;
  d.num_channels = channels;
  d.chunks_per_loop = chunks_per_loop;
  d.in_place = in_place;
  d.out_of_place = !in_place;
  return d;
}

// The slots [first, first + count) modulo n, as contiguous (start, length) ranges.
std::vector<std::pair<int, int>> wrapped_ranges(int n, int first, int count) {
  first = ((first % n) + n) % n;
  const int head = std::min(count, n - first);
  std::vector<std::pair<int, int>> ranges{{first, head}};
  if (count > head)
    ranges.emplace_back(0, count - head);
  return ranges;
}

} // namespace

std::optional<std::vector<RankId>> find_ring(const Topology &t) {
  const int n = t.num_ranks();
  if (n < 2)
    return std::nullopt;
  std::vector<RankId> order;
  for (int r = 0; r < n; ++r)
    order.emplace_back(r);
  bool identity = true;
  for (int r = 0; r < n && identity; ++r)
    identity = t.find_link(RankId(r), RankId((r + 1) % n)).has_value();
  if (identity)
    return order;
  // Depth-first search for a Hamiltonian cycle from rank 0, bounded in work.
  std::vector<RankId> path{RankId(0)};
  std::vector<bool> used(size_t(n), false);
  used[0] = true;
  std::vector<std::vector<LinkId>> out_links(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    for (LinkId l : t.out_links(RankId(r)))
      if (!t.is_switch(t.link(l).dst)) // a ring of ranks: hops between ranks only
        out_links[size_t(r)].push_back(l);
  std::vector<size_t> next(size_t(n), 0);
  long budget = 2'000'000;
  while (!path.empty() && budget-- > 0) {
    const RankId at = path.back();
    if (int(path.size()) == n) {
      if (t.find_link(at, RankId(0)))
        return path;
    }
    auto &i = next[path.size() - 1];
    const auto &links = out_links[at.index()];
    while (i < links.size() && used[t.link(links[i]).dst.index()])
      ++i;
    if (int(path.size()) < n && i < links.size()) {
      const RankId to = t.link(links[i++]).dst;
      used[to.index()] = true;
      path.push_back(to);
      next[path.size() - 1] = 0;
    } else {
      used[at.index()] = path.size() > 1 ? false : used[at.index()];
      path.pop_back();
    }
  }
  return std::nullopt;
}

Expected<Program> nccl_ring_program(CollectiveKind kind,
                                    const std::vector<std::vector<RankId>> &channel_rings,
                                    Protocol protocol) {
  const int channels = static_cast<int>(channel_rings.size());
  if (channels < 1 || channels > 32)
    return fail({}, fmt::format("channels must be in [1, 32], got {}", channels));
  const int n = static_cast<int>(channel_rings.front().size());
  if (n < 2)
    return fail({}, "a ring needs at least 2 ranks");
  if (kind != CollectiveKind::Allreduce && kind != CollectiveKind::Allgather &&
      kind != CollectiveKind::ReduceScatter && kind != CollectiveKind::Broadcast &&
      kind != CollectiveKind::Reduce)
    return fail({}, fmt::format("NCCL has no ring {}", collective_kind_name(kind)));
  const bool rooted = kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
  // position[ch][rank]: where the rank sits on channel ch's ring.
  std::vector<std::vector<int>> position(size_t(channels), std::vector<int>(size_t(n), -1));
  for (int ch = 0; ch < channels; ++ch) {
    const auto &ring = channel_rings[size_t(ch)];
    if (int(ring.size()) != n)
      return fail({}, "every channel's ring must hold every rank");
    for (int i = 0; i < n; ++i) {
      if (ring[size_t(i)].value() < 0 || ring[size_t(i)].value() >= n ||
          position[size_t(ch)][ring[size_t(i)].index()] >= 0)
        return fail({}, fmt::format("channel {}'s ring is not a permutation of the ranks", ch));
      position[size_t(ch)][ring[size_t(i)].index()] = i;
    }
    if (rooted && ring.front() != channel_rings.front().front())
      return fail({}, "a rooted collective's rings must all start at its root");
  }
  // A rooted collective moves one chunk per channel; the others one per rank and channel.
  ProgramDraft d =
      nccl_draft("nccl_ring_" + std::string(collective_traits(kind).executor_name), kind, protocol,
                 n, channels, rooted ? channels : n * channels, kind == CollectiveKind::Allreduce);
  auto mod = [n](int a) { return ((a % n) + n) % n; };
  for (int r = 0; r < n; ++r) {
    RankProgram rp;
    rp.rank = RankId(r);
    for (int ch = 0; ch < channels; ++ch) {
      const int p = position[size_t(ch)][size_t(r)];
      // Ring positions rather than rank ids drive every schedule below.
      auto rank_at = [&](int pos) { return channel_rings[size_t(ch)][size_t(mod(pos))]; };
      // A broadcast's last rank sends nowhere and its root receives from nobody; a reduce runs
      // from the rank after the root around to the root, which sends nowhere.
      const bool no_send = (kind == CollectiveKind::Broadcast && p == n - 1) ||
                           (kind == CollectiveKind::Reduce && p == 0);
      const bool no_recv = (kind == CollectiveKind::Broadcast && p == 0) ||
                           (kind == CollectiveKind::Reduce && p == 1);
      ThreadBlockBuilder b(TbId(ch), no_send ? std::nullopt : std::optional(rank_at(p + 1)),
                           no_recv ? std::nullopt : std::optional(rank_at(p - 1)), ChannelId(ch));
      // NCCL runs rings for these five collectives only (checked above): a new collective kind
      // has nothing to add here.
      if (kind == CollectiveKind::Allreduce) {
        rp.input_chunks = rp.output_chunks = n * channels;
        // Chunk c of channel ch lives at ch*n + c; position p's step k works on chunk p - k.
        // Steps from..to of one op are runs of descending offsets, cut where they wrap.
        auto steps = [&](OpType op, int from, int to) {
          for (int k = from; k <= to;) {
            const int chunk = mod(p - k), length = std::min(to - k + 1, chunk + 1);
            b.steps(op, in(ch * n + chunk), -1, in(ch * n + chunk), -1, length);
            k += length;
          }
        };
        steps(OpType::Send, 0, 0);
        steps(OpType::RecvReduceSend, 1, n - 2);
        steps(OpType::RecvReduceCopySend, n - 1, n - 1);
        steps(OpType::RecvCopySend, n, 2 * n - 3);
        steps(OpType::Recv, 2 * n - 2, 2 * n - 2);
      } else if (kind == CollectiveKind::Allgather) {
        rp.input_chunks = channels;
        rp.output_chunks = n * channels;
        auto slot = [&](int pos) { return out(rank_at(pos).value() * channels + ch); };
        b.step(OpType::Copy, in(ch), slot(p));
        b.step(OpType::Send, in(ch), slot(p));
        for (int k = 1; k <= n - 2; ++k)
          b.step(OpType::RecvCopySend, slot(p - k), slot(p - k));
        b.step(OpType::Recv, slot(p - (n - 1)), slot(p - (n - 1)));
      } else if (kind == CollectiveKind::ReduceScatter) {
        rp.input_chunks = n * channels;
        rp.output_chunks = channels;
        // The partial for the rank at position q travels q+1, q+2, ... and ends at q.
        auto slot = [&](int pos) { return in(rank_at(pos).value() * channels + ch); };
        b.step(OpType::Send, slot(p - 1), slot(p - 1));
        for (int k = 1; k <= n - 2; ++k)
          b.step(OpType::RecvReduceSend, slot(p - k - 1), slot(p - k - 1));
        b.step(OpType::RecvReduceCopy, slot(p), out(ch));
      } else if (kind == CollectiveKind::Reduce) {
        rp.input_chunks = rp.output_chunks = channels;
        if (p == 1)
          b.step(OpType::Send, in(ch), in(ch));
        else if (p > 1)
          b.step(OpType::RecvReduceSend, in(ch), in(ch));
        else
          b.step(OpType::RecvReduceCopy, in(ch), out(ch));
      } else {
        SYNCOLL_INVARIANT(kind == CollectiveKind::Broadcast, "a ring the check above let through");
        rp.input_chunks = rp.output_chunks = channels;
        if (p == 0) {
          b.step(OpType::Copy, in(ch), out(ch));
          b.step(OpType::Send, in(ch), out(ch));
        } else if (p < n - 1) {
          b.step(OpType::RecvCopySend, out(ch), out(ch));
        } else {
          b.step(OpType::Recv, out(ch), out(ch));
        }
      }
      rp.thread_blocks.push_back(b.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  return Program::create(std::move(d));
}

std::optional<std::vector<int>> find_tree(const Topology &t, RankId root) {
  const int n = t.num_ranks();
  std::vector<int> parent(size_t(n), -2);
  parent[root.index()] = -1;
  std::vector<int> queue{root.value()};
  for (size_t i = 0; i < queue.size(); ++i)
    for (LinkId id : t.out_links(RankId(queue[i]))) {
      const RankId to = t.link(id).dst;
      if (!t.is_switch(to) && parent[to.index()] == -2 && t.find_link(to, RankId(queue[i]))) {
        parent[to.index()] = queue[i];
        queue.push_back(to.value());
      }
    }
  if (int(queue.size()) != n)
    return std::nullopt;
  return parent;
}

Expected<Program> nccl_tree_allreduce_program(const std::vector<int> &parent, int chunks,
                                              Protocol protocol, int channels) {
  return nccl_tree_allreduce_program(std::vector(size_t(std::max(channels, 1)), parent), chunks,
                                     protocol);
}

Expected<Program> nccl_tree_allreduce_program(const std::vector<std::vector<int>> &channel_trees,
                                              int chunks, Protocol protocol) {
  const int channels = static_cast<int>(channel_trees.size());
  if (channels < 1 || channels > 32)
    return fail({}, fmt::format("channels must be in [1, 32], got {}", channels));
  const int n = static_cast<int>(channel_trees.front().size());
  for (const auto &tree : channel_trees)
    if (int(tree.size()) != n)
      return fail({}, "every channel's tree must hold every rank");
  if (n < 2)
    return fail({}, "a tree needs at least 2 ranks");
  if (chunks < 1 || chunks > 64)
    return fail({}, fmt::format("pipeline chunks must be in [1, 64], got {}", chunks));
  // children[ch][r]: rank r's children in channel ch's tree.
  std::vector<std::vector<std::vector<int>>> children(static_cast<size_t>(channels));
  for (auto &per_rank : children)
    per_rank.resize(size_t(n));
  for (int ch = 0; ch < channels; ++ch)
    for (int r = 0; r < n; ++r) {
      const int p = channel_trees[size_t(ch)][size_t(r)];
      if (p < -1 || p >= n || p == r)
        return fail({}, fmt::format("channel {}'s tree gives rank {} the parent {}", ch, r, p));
      if (p >= 0)
        children[size_t(ch)][size_t(p)].push_back(r);
    }
  ProgramDraft d = nccl_draft("nccl_tree_allreduce", CollectiveKind::Allreduce, protocol, n,
                              channels, chunks * channels, true);
  for (int r = 0; r < n; ++r) {
    // Scratch: each channel's partials from its children, one region after another.
    std::vector<int> scratch_base(size_t(channels) + 1, 0);
    for (int ch = 0; ch < channels; ++ch)
      scratch_base[size_t(ch) + 1] =
          scratch_base[size_t(ch)] + int(children[size_t(ch)][size_t(r)].size()) * chunks;
    RankProgram rp{RankId(r), chunks * channels, chunks * channels, scratch_base.back(), {}};
    std::vector<ThreadBlockBuilder> tbs;
    for (int ch = 0; ch < channels; ++ch) {
      const auto &kids = children[size_t(ch)][size_t(r)];
      const std::vector<int> &parent = channel_trees[size_t(ch)];
      // Channel ch owns chunks [ch * chunks, (ch + 1) * chunks) and its own scratch.
      auto chunk = [&](int k) { return in(ch * chunks + k); };
      auto scratch = [&](size_t j, int k) {
        return BufferRef{BufferKind::Scratch, scratch_base[size_t(ch)] + int(j) * chunks + k};
      };
      auto add = [&](std::optional<RankId> send, std::optional<RankId> recv) {
        tbs.emplace_back(TbId(int(tbs.size())), send, recv, ChannelId(ch));
        return int(tbs.size()) - 1;
      };
      auto step = [&](int tb, OpType op, BufferRef src, BufferRef dst,
                      std::optional<Dependency> dep,
                      bool has_dep) { return tbs[size_t(tb)].step(op, src, dst, 1, dep, has_dep); };
      // Partials from each child into scratch.
      std::vector<int> from_child;
      for (size_t j = 0; j < kids.size(); ++j) {
        from_child.push_back(add(std::nullopt, RankId(kids[j])));
        for (int k = 0; k < chunks; ++k)
          step(from_child.back(), OpType::Recv, chunk(k), scratch(j, k), std::nullopt, true);
      }
      // Reduce them into the buffer; the last reduction of chunk k publishes it.
      std::vector<int> reduced(size_t(chunks), -1);
      int reducer = -1;
      if (!kids.empty()) {
        reducer = add(std::nullopt, std::nullopt);
        for (int k = 0; k < chunks; ++k)
          for (size_t j = 0; j < kids.size(); ++j)
            reduced[size_t(k)] =
                step(reducer, OpType::Reduce, scratch(j, k), chunk(k),
                     Dependency{TbId(from_child[j]), StepIndex(k)}, j + 1 == kids.size());
      }
      auto after_reduction = [&](int k) -> std::optional<Dependency> {
        if (reducer < 0)
          return std::nullopt;
        return Dependency{TbId(reducer), StepIndex(reduced[size_t(k)])};
      };
      // Up to the parent and the result back from it.
      int down_from_parent = -1;
      if (parent[size_t(r)] >= 0) {
        const RankId p(parent[size_t(r)]);
        const int up = add(p, std::nullopt);
        for (int k = 0; k < chunks; ++k)
          step(up, OpType::Send, chunk(k), chunk(k), after_reduction(k), true);
        down_from_parent = add(std::nullopt, p);
        // The result overwrites the partial only after the partial has left.
        for (int k = 0; k < chunks; ++k)
          step(down_from_parent, OpType::Recv, chunk(k), chunk(k),
               Dependency{TbId(up), StepIndex(k)}, true);
      }
      // The result down to each child.
      for (size_t j = 0; j < kids.size(); ++j) {
        const int down = add(RankId(kids[j]), std::nullopt);
        for (int k = 0; k < chunks; ++k)
          step(down, OpType::Send, chunk(k), chunk(k),
               down_from_parent >= 0
                   ? std::optional<Dependency>(Dependency{TbId(down_from_parent), StepIndex(k)})
                   : after_reduction(k),
               false);
      }
    }
    for (ThreadBlockBuilder &b : tbs)
      rp.thread_blocks.push_back(b.take());
    d.ranks.push_back(std::move(rp));
  }
  return Program::create(std::move(d));
}

Expected<Program> nccl_alltoall_program(int n, Protocol protocol, int channels) {
  return nccl_alltoall_program(n, protocol, channels, n, channels);
}

Expected<Program> nccl_alltoall_program(int n, Protocol protocol, int channels, int gpus_per_node,
                                        int net_channels) {
  if (n < 2)
    return fail({}, "an alltoall needs at least 2 ranks");
  for (int c : {channels, net_channels})
    if (c < 1 || c > 32)
      return fail({}, fmt::format("channels per peer must be in [1, 32], got {}", c));
  if (gpus_per_node < 1 || n % gpus_per_node != 0)
    return fail({}, fmt::format("{} ranks are not whole nodes of {} GPUs", n, gpus_per_node));
  // A part is cut so that either channel count moves a whole number of its chunks.
  const int chunks = std::lcm(channels, net_channels);
  ProgramDraft d = nccl_draft("nccl_p2p_alltoall", CollectiveKind::Alltoall, protocol, n,
                              std::max(channels, net_channels), n * chunks, false);
  // Chunk k of the part for (or from) rank j lives at j * chunks + k.
  auto part = [chunks](int j, int k) { return j * chunks + k; };
  auto channels_to = [&](int r, int j) {
    return r / gpus_per_node == j / gpus_per_node ? channels : net_channels;
  };
  for (int r = 0; r < n; ++r) {
    RankProgram rp{RankId(r), n * chunks, n * chunks, 0, {}};
    // One thread block per channel keeps the rank's own part; for each peer and channel one
    // thread block sends and another receives, as NCCL's grouped send/receive runs them on
    // separate warps.
    for (int ch = 0; ch < channels; ++ch) {
      const int share = chunks / channels;
      ThreadBlockBuilder own(TbId(ch), std::nullopt, std::nullopt, ChannelId(ch));
      own.step(OpType::Copy, in(part(r, ch * share)), out(part(r, ch * share)), share);
      rp.thread_blocks.push_back(own.take());
    }
    for (int k = 1; k < n; ++k) {
      const int to = (r + k) % n, from = (r - k + n) % n;
      const int out_channels = channels_to(r, to), in_channels = channels_to(r, from);
      for (int ch = 0; ch < std::max(out_channels, in_channels); ++ch) {
        if (ch < out_channels) {
          const int share = chunks / out_channels;
          ThreadBlockBuilder send(TbId(int(rp.thread_blocks.size())), RankId(to), std::nullopt,
                                  ChannelId(ch));
          send.step(OpType::Send, in(part(to, ch * share)), out(part(r, ch * share)), share);
          rp.thread_blocks.push_back(send.take());
        }
        if (ch < in_channels) {
          const int share = chunks / in_channels;
          ThreadBlockBuilder recv(TbId(int(rp.thread_blocks.size())), std::nullopt, RankId(from),
                                  ChannelId(ch));
          recv.step(OpType::Recv, in(part(r, ch * share)), out(part(from, ch * share)), share);
          rp.thread_blocks.push_back(recv.take());
        }
      }
    }
    d.ranks.push_back(std::move(rp));
  }
  return Program::create(std::move(d));
}

Expected<Program> nccl_pat_allgather_program(int n, Protocol protocol) {
  if (n < 2)
    return fail({}, "an allgather needs at least 2 ranks");
  ProgramDraft d =
      nccl_draft("nccl_pat_allgather", CollectiveKind::Allgather, protocol, n, 1, n, false);
  auto mod = [n](int a) { return ((a % n) + n) % n; };
  auto ranges = [n](int first, int count) { return wrapped_ranges(n, first, count); };
  for (int r = 0; r < n; ++r) {
    RankProgram rp{RankId(r), 1, n, 0, {}};
    // Step k moves the 2^k slots a rank holds (r, r + 1, ...) to the rank 2^k behind and takes
    // the next 2^k from the rank 2^k ahead. Each step sends from one thread block and receives
    // in another (a step's sends may split into more messages than a FIFO holds, and every rank
    // sends before it receives). Receive thread blocks run in step order, the first one after
    // the copy of the rank's own part; step k sends once step k - 1 has received.
    std::optional<Dependency> ready;
    int k = 0;
    for (int dist = 1; dist < n; dist *= 2, ++k) {
      const int count = std::min(dist, n - dist);
      ThreadBlockBuilder send(TbId(2 * k), RankId(mod(r - dist)), std::nullopt, ChannelId(0));
      if (k == 0) {
        send.step(OpType::Send, in(0), out(r));
      } else {
        bool first = true;
        for (auto [start, len] : ranges(r, count)) {
          send.step(OpType::Send, out(start), out(start), len, first ? ready : std::nullopt, false);
          first = false;
        }
      }
      rp.thread_blocks.push_back(send.take());
      ThreadBlockBuilder recv(TbId(2 * k + 1), std::nullopt, RankId(mod(r + dist)), ChannelId(0));
      if (k == 0)
        recv.step(OpType::Copy, in(0), out(r));
      int last = -1;
      for (auto [start, len] : ranges(r + dist, count))
        last = recv.step(OpType::Recv, out(start), out(start), len, last < 0 ? ready : std::nullopt,
                         true);
      ready = Dependency{TbId(2 * k + 1), StepIndex(last)};
      rp.thread_blocks.push_back(recv.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  return Program::create(std::move(d));
}

Expected<Program> nccl_pat_reducescatter_program(int n, Protocol protocol) {
  if (n < 2)
    return fail({}, "a reducescatter needs at least 2 ranks");
  ProgramDraft d =
      nccl_draft("nccl_pat_reducescatter", CollectiveKind::ReduceScatter, protocol, n, 1, n, false);
  auto mod = [n](int a) { return ((a % n) + n) % n; };
  auto ranges = [n](int first, int count) { return wrapped_ranges(n, first, count); };
  auto scratch = [](int k) { return BufferRef{BufferKind::Scratch, k}; };
  std::vector<int> distances;
  for (int dist = 1; dist < n; dist *= 2)
    distances.push_back(dist);
  for (int r = 0; r < n; ++r) {
    RankProgram rp{RankId(r), n, 1, n, {}};
    // The Allgather's schedule transposed: steps from the farthest distance down, each rank
    // sending the partial sums of the parts the rank `dist` ahead gathers and reducing the parts
    // it gathers itself from the rank `dist` behind. Partials live in scratch (the input copied
    // there first); the last step leaves the rank's own part complete.
    std::optional<Dependency> ready;
    for (size_t i = distances.size(); i-- > 0;) {
      const int dist = distances[i];
      const int count = std::min(dist, n - dist);
      const int tb = 2 * int(distances.size() - 1 - i);
      const bool first_step = i + 1 == distances.size();
      ThreadBlockBuilder send(TbId(tb), RankId(mod(r + dist)), std::nullopt, ChannelId(0));
      bool first = true;
      for (auto [start, len] : ranges(r + dist, count)) {
        // Before any reduction, a part's partial is the rank's own input.
        const BufferRef from = first_step ? in(start) : scratch(start);
        send.step(OpType::Send, from, scratch(start), len, first ? ready : std::nullopt, false);
        first = false;
      }
      rp.thread_blocks.push_back(send.take());
      ThreadBlockBuilder recv(TbId(tb + 1), std::nullopt, RankId(mod(r - dist)), ChannelId(0));
      if (first_step)
        recv.step(OpType::Copy, in(0), scratch(0), n);
      int last = -1;
      for (auto [start, len] : ranges(r, count))
        last = recv.step(OpType::RecvReduceCopy, scratch(start), scratch(start), len,
                         last < 0 && !first_step ? ready : std::nullopt, true);
      if (i == 0)
        last = recv.step(OpType::Copy, scratch(r), out(0), 1, std::nullopt, true);
      ready = Dependency{TbId(tb + 1), StepIndex(last)};
      rp.thread_blocks.push_back(recv.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  return Program::create(std::move(d));
}

int nccl_ring_steps(CollectiveKind kind, int ranks) {
  const bool rooted = kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
  return kind == CollectiveKind::Allreduce ? 2 * (ranks - 1) : rooted ? ranks : ranks - 1;
}

double nccl_ring_time_us(CollectiveKind kind, double bytes, const NcclRingParameters &p) {
  const ProtocolTraits &proto = protocol_traits(p.protocol);
  const int n = p.ranks;
  const int steps = nccl_ring_steps(kind, n);
  const double hop = p.nvlink ? proto.nccl_ring_nvlink_hop_us : proto.nccl_ring_pci_hop_us;
  double latency = proto.nccl_ring_base_latency_us;
  if (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce)
    latency += hop; // the same channels: one hop latency
  else
    latency += steps * hop;
  const double bus = p.channels * p.channel_gbps * proto.nccl_tuning_bandwidth_factor;
  const double alg =
      (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce) ? bus : bus * n / steps;
  return latency + bytes / (1000.0 * alg);
}

} // namespace syncoll::nccl
