#include "compose/composition.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace syncoll::compose {
namespace {

using Place = std::pair<int, int>; ///< (rank, send slot)
using Value = std::vector<Place>;  ///< sorted multiset of the send slots combined into a slot

std::string describe(const Slice &s) {
  return fmt::format("{}[{}..{})", s.buffer == BufferKind::Input ? "send" : "recv", s.offset,
                     s.offset + s.count);
}

std::vector<RankId> members(const Members &m, int ranks, RankId root) {
  std::vector<RankId> out;
  switch (m.which) {
  case Members::Which::All:
  case Members::Which::Others:
    for (int r = 0; r < ranks; ++r)
      if (m.which == Members::Which::All || r != root.value())
        out.emplace_back(r);
    return out;
  case Members::Which::List:
    out = m.list;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  SYNCOLL_UNREACHABLE("a member set without a case");
}

// Where each rank reads and writes in a primitive: (rank, buffer, slot) triples.
using Slot = std::tuple<int, BufferKind, int>;
void for_each_read(const Primitive &p, auto &&f) {
  const bool many = p.kind == PrimitiveKind::Reduction;
  for (int k = 0; k < p.source.count; ++k) {
    if (many)
      for (RankId r : p.ranks)
        f(Slot{r.value(), p.source.buffer, p.source.offset + k});
    else
      f(Slot{p.root.value(), p.source.buffer, p.source.offset + k});
  }
}
void for_each_write(const Primitive &p, auto &&f) {
  const bool many = p.kind == PrimitiveKind::Multicast;
  for (int k = 0; k < p.target.count; ++k) {
    if (many)
      for (RankId r : p.ranks)
        f(Slot{r.value(), p.target.buffer, p.target.offset + k});
    else
      f(Slot{p.root.value(), p.target.buffer, p.target.offset + k});
  }
}

std::string describe(const Slot &s) {
  return fmt::format("rank {} {} slot {}", std::get<0>(s),
                     std::get<1>(s) == BufferKind::Input ? "send" : "recv", std::get<2>(s));
}

} // namespace

Expected<Composition> Composition::create(int ranks, int send_chunks, int recv_chunks) {
  if (ranks < 1 || send_chunks < 1 || recv_chunks < 1)
    return fail({}, fmt::format("a composition needs at least one rank and one chunk in each "
                                "buffer; got {} ranks, {} send and {} receive chunks",
                                ranks, send_chunks, recv_chunks));
  return Composition(ranks, send_chunks, recv_chunks);
}

Expected<void> Composition::multicast(Slice source, RankId root, const Members &receivers,
                                      Slice target) {
  return add({PrimitiveKind::Multicast, source, root, members(receivers, ranks_, root), target});
}

Expected<void> Composition::reduction(Slice source, const Members &contributors, RankId root,
                                      Slice target) {
  return add({PrimitiveKind::Reduction, source, root, members(contributors, ranks_, root), target});
}

void Composition::fence() {
  if (epochs_.back().empty())
    return;
  epochs_.emplace_back();
  epoch_written_.clear();
  epoch_read_.clear();
}

Expected<void> Composition::add(Primitive p) {
  const std::string what = p.kind == PrimitiveKind::Multicast ? "multicast" : "reduction";
  auto in_buffer = [&](const Slice &s) {
    const int size = s.buffer == BufferKind::Input ? send_chunks_ : recv_chunks_;
    return (s.buffer == BufferKind::Input || s.buffer == BufferKind::Output) && s.offset >= 0 &&
           s.count >= 1 && s.offset + s.count <= size;
  };
  if (p.root.value() < 0 || p.root.value() >= ranks_)
    return fail(
        {}, fmt::format("{}: root {} is not one of the {} ranks", what, p.root.value(), ranks_));
  for (RankId r : p.ranks)
    if (r.value() < 0 || r.value() >= ranks_)
      return fail({},
                  fmt::format("{}: rank {} is not one of the {} ranks", what, r.value(), ranks_));
  if (p.ranks.empty())
    return fail({}, fmt::format("{} from rank {}: no {}", what, p.root.value(),
                                p.kind == PrimitiveKind::Multicast ? "receivers" : "contributors"));
  if (!in_buffer(p.source) || !in_buffer(p.target))
    return fail({},
                fmt::format("{}: {} or {} is outside its buffer (send {} chunks, receive {})", what,
                            describe(p.source), describe(p.target), send_chunks_, recv_chunks_));
  if (p.target.buffer != BufferKind::Output)
    return fail({}, fmt::format("{}: writes {}; primitives write receive buffers only", what,
                                describe(p.target)));
  if (p.source.count != p.target.count)
    return fail({}, fmt::format("{}: {} and {} differ in size", what, describe(p.source),
                                describe(p.target)));
  // A slot written in an epoch is neither read nor written by another primitive of that epoch:
  // the primitives run concurrently.
  const std::set<Slot> &written = epoch_written_, &read = epoch_read_;
  std::set<Slot> mine;
  std::optional<std::string> conflict;
  for_each_write(p, [&](const Slot &s) {
    if (!conflict && (written.count(s) || read.count(s)))
      conflict = fmt::format("{}: writes {}, which another primitive of this epoch {}", what,
                             describe(s), written.count(s) ? "writes" : "reads");
    mine.insert(s);
  });
  for_each_read(p, [&](const Slot &s) {
    if (!conflict && written.count(s))
      conflict = fmt::format("{}: reads {}, which another primitive of this epoch writes (a fence "
                             "between them orders them)",
                             what, describe(s));
    if (!conflict && mine.count(s) && !(p.kind == PrimitiveKind::Multicast && p.source == p.target))
      conflict = fmt::format("{}: reads {}, which it also writes", what, describe(s));
  });
  if (conflict)
    return fail({}, *conflict);
  epoch_written_.insert(mine.begin(), mine.end());
  for_each_read(p, [&](const Slot &s) { epoch_read_.insert(s); });
  epochs_.back().push_back(std::move(p));
  return {};
}

Composition Composition::refined(int parts) const {
  SYNCOLL_INVARIANT(parts >= 1, "refining into no parts");
  Composition c(ranks_, send_chunks_ * parts, recv_chunks_ * parts);
  c.epochs_ = epochs_;
  for (auto &epoch : c.epochs_)
    for (Primitive &p : epoch)
      for (Slice *s : {&p.source, &p.target}) {
        s->offset *= parts;
        s->count *= parts;
      }
  for (const Primitive &p : c.epochs_.back()) {
    for_each_write(p, [&](const Slot &s) { c.epoch_written_.insert(s); });
    for_each_read(p, [&](const Slot &s) { c.epoch_read_.insert(s); });
  }
  return c;
}

Expected<CollectiveSpec> Composition::specification(std::string name) const {
  // Every slot's value after each epoch; a send slot starts as itself.
  std::map<Slot, Value> state;
  for (int r = 0; r < ranks_; ++r)
    for (int k = 0; k < send_chunks_; ++k)
      state[{r, BufferKind::Input, k}] = {{r, k}};
  for (const auto &epoch : epochs_) {
    std::map<Slot, Value> next = state;
    for (const Primitive &p : epoch)
      for (int k = 0; k < p.source.count; ++k) {
        auto value_of = [&](int rank) -> Expected<Value> {
          const Slot s{rank, p.source.buffer, p.source.offset + k};
          auto it = state.find(s);
          if (it == state.end())
            return fail({}, fmt::format("a primitive reads {}, which nothing has written before "
                                        "it",
                                        describe(s)));
          return it->second;
        };
        if (p.kind == PrimitiveKind::Multicast) {
          SYNCOLL_TRY(v, value_of(p.root.value()));
          for (RankId r : p.ranks)
            next[{r.value(), p.target.buffer, p.target.offset + k}] = v;
        } else {
          Value sum;
          for (RankId r : p.ranks) {
            SYNCOLL_TRY(v, value_of(r.value()));
            sum.insert(sum.end(), v.begin(), v.end());
          }
          std::sort(sum.begin(), sum.end());
          next[{p.root.value(), p.target.buffer, p.target.offset + k}] = sum;
        }
      }
    state = std::move(next);
  }
  // One chunk per distinct value left in a receive slot.
  std::map<Value, std::vector<ChunkPlace>> posts;
  for (const auto &[slot, value] : state)
    if (std::get<1>(slot) == BufferKind::Output)
      posts[value].push_back({RankId(std::get<0>(slot)), std::get<2>(slot)});
  CollectiveDraft d;
  d.name = std::move(name);
  d.kind = CollectiveKind::Custom;
  d.num_ranks = ranks_;
  d.input_chunks = send_chunks_;
  d.output_chunks = recv_chunks_;
  for (const auto &[value, post] : posts) {
    if (std::adjacent_find(value.begin(), value.end()) != value.end())
      return fail({}, fmt::format("rank {} send slot {} is combined into one value more than "
                                  "once",
                                  std::adjacent_find(value.begin(), value.end())->first,
                                  std::adjacent_find(value.begin(), value.end())->second));
    ChunkSpec c;
    for (const Place &p : value)
      c.pre.push_back({RankId(p.first), p.second});
    c.post = post;
    c.reduced = value.size() > 1;
    d.chunks.push_back(std::move(c));
  }
  return CollectiveSpec::create(std::move(d));
}

Expected<Composition> Composition::standard(CollectiveKind kind, int ranks, int chunk_factor,
                                            std::optional<int> root) {
  // make_collective decides what is a valid (kind, ranks, factor, root): its buffer sizes are the
  // composition's.
  SYNCOLL_TRY(spec, make_collective(kind, ranks, chunk_factor, root));
  SYNCOLL_TRY(c, create(ranks, spec.input_chunks(), spec.output_chunks()));
  const int C = chunk_factor;
  auto send = [](int offset, int count) { return Slice{BufferKind::Input, offset, count}; };
  auto recv = [](int offset, int count) { return Slice{BufferKind::Output, offset, count}; };
  auto rank = [](int r) { return RankId(r); };
  switch (kind) {
  case CollectiveKind::Broadcast:
    SYNCOLL_CHECK(c.multicast(send(0, C), rank(*root), Members::all(), recv(0, C)));
    break;
  case CollectiveKind::Reduce:
    SYNCOLL_CHECK(c.reduction(send(0, C), Members::all(), rank(*root), recv(0, C)));
    break;
  case CollectiveKind::Allgather:
    for (int r = 0; r < ranks; ++r)
      SYNCOLL_CHECK(c.multicast(send(0, C), rank(r), Members::all(), recv(r * C, C)));
    break;
  case CollectiveKind::ReduceScatter:
    for (int r = 0; r < ranks; ++r)
      SYNCOLL_CHECK(c.reduction(send(r * C, C), Members::all(), rank(r), recv(0, C)));
    break;
  case CollectiveKind::Gather:
    for (int r = 0; r < ranks; ++r)
      SYNCOLL_CHECK(c.multicast(send(0, C), rank(r), Members::of({rank(*root)}), recv(r * C, C)));
    break;
  case CollectiveKind::Scatter:
    for (int r = 0; r < ranks; ++r)
      SYNCOLL_CHECK(c.multicast(send(r * C, C), rank(*root), Members::of({rank(r)}), recv(0, C)));
    break;
  case CollectiveKind::Alltoall:
    for (int r = 0; r < ranks; ++r)
      for (int d = 0; d < ranks; ++d)
        SYNCOLL_CHECK(c.multicast(send(d * C, C), rank(r), Members::of({rank(d)}), recv(r * C, C)));
    break;
  case CollectiveKind::Allreduce: {
    // Reduce-scatter, then all-gather of the reduced slices: each byte crosses the machine twice
    // instead of once per rank. With fewer chunks than ranks, as many slices as chunks, their
    // roots spread evenly over the ranks and, slice after slice, over the positions within a span
    // of ranks / slices consecutive ranks: where the innermost groups of a hierarchy are
    // consecutive ranks (a node's GPUs), the roots then sit on every GPU, and behind every NIC,
    // rather than all on each node's first (one chunk: a reduction to rank 0 and a broadcast).
    const int slices = std::min(C, ranks);
    const int span = ranks / slices;
    auto first = [&](int j) { return int(int64_t(j) * C / slices); };
    auto root_of = [&](int j) { return rank(int(int64_t(j) * ranks / slices) + j % span); };
    for (int j = 0; j < slices; ++j)
      SYNCOLL_CHECK(c.reduction(send(first(j), first(j + 1) - first(j)), Members::all(), root_of(j),
                                recv(first(j), first(j + 1) - first(j))));
    c.fence();
    for (int j = 0; j < slices && ranks > 1; ++j)
      SYNCOLL_CHECK(c.multicast(recv(first(j), first(j + 1) - first(j)), root_of(j),
                                Members::others(), recv(first(j), first(j + 1) - first(j))));
    break;
  }
  case CollectiveKind::AllToNext:
    for (int r = 0; r + 1 < ranks; ++r)
      SYNCOLL_CHECK(c.multicast(send(0, C), rank(r), Members::of({rank(r + 1)}), recv(0, C)));
    break;
  case CollectiveKind::Custom:
    return fail({}, "a custom collective has no standard composition; write one (a composition "
                    "file)");
  }
  return c;
}

bool same_postcondition(const CollectiveSpec &a, const CollectiveSpec &b) {
  using Asked = std::map<std::pair<int, int>, std::pair<bool, Value>>;
  auto asked = [](const CollectiveSpec &s) {
    Asked out;
    for (int c = 0; c < s.num_chunks(); ++c) {
      const ChunkSpec &chunk = s.chunk(ChunkId(c));
      Value v;
      for (const ChunkPlace &p : chunk.pre)
        v.push_back({p.rank.value(), p.slot});
      std::sort(v.begin(), v.end());
      if (!chunk.reduced)
        v.resize(1); // an uncombined chunk's value is its first holder's
      for (const ChunkPlace &p : chunk.post)
        out[{p.rank.value(), p.slot}] = {chunk.reduced && v.size() > 1, v};
    }
    return out;
  };
  return a.num_ranks() == b.num_ranks() && asked(a) == asked(b);
}

} // namespace syncoll::compose
