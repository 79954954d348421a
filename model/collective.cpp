#include "model/collective.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/json_document.h"
#include "model/topology.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace syncoll {
namespace {

bool is_rooted(CollectiveKind k) {
  return collective_traits(k).rooted;
}

// Which chunk holds each (rank, slot) of a buffer: a flat table where the buffer is of a size
// worth one, else a map.
class Owners {
public:
  Owners(int ranks, int size)
      : size_(size), flat_(int64_t(ranks) * std::max(size, 0) <= (int64_t(1) << 24)) {
    if (flat_)
      table_.assign(size_t(ranks) * size_t(std::max(size, 0)), kNone);
  }
  // The chunk already there, or nothing after recording `chunk` there.
  std::optional<size_t> claim(int rank, int slot, size_t chunk) {
    if (!flat_) {
      auto [it, inserted] = map_.emplace(std::make_pair(rank, slot), chunk);
      return inserted ? std::nullopt : std::optional(it->second);
    }
    SYNCOLL_INVARIANT(chunk < kNone, "more chunks than the owner table numbers");
    uint32_t &held = table_[size_t(rank) * size_t(size_) + size_t(slot)];
    if (held != kNone)
      return size_t(held);
    held = uint32_t(chunk);
    return std::nullopt;
  }

private:
  static constexpr uint32_t kNone = ~uint32_t(0);
  int size_;
  bool flat_;
  std::vector<uint32_t> table_;
  std::map<std::pair<int, int>, size_t> map_;
};

} // namespace

std::string_view in_place_kind_name(InPlaceKind kind) {
  switch (kind) {
  case InPlaceKind::None:
    return "none";
  case InPlaceKind::Same:
    return "same";
  case InPlaceKind::InputInOutput:
    return "input_in_output";
  case InPlaceKind::OutputInInput:
    return "output_in_input";
  }
  SYNCOLL_UNREACHABLE("in-place kind without a name");
}

Expected<CollectiveSpec> CollectiveSpec::create(CollectiveDraft d) {
  Diagnostics diag;
  if (d.name.empty())
    diag.error_at("/name", "collective name must not be empty");
  if (d.num_ranks < 1 || d.num_ranks > kMaxRanks)
    return fail_at("/ranks",
                   fmt::format("rank count {} is out of range [1, {}]", d.num_ranks, kMaxRanks));
  if (d.chunk_factor < 1)
    diag.error_at("/chunk_factor",
                  fmt::format("chunk factor {} must be at least 1", d.chunk_factor));
  if (d.input_chunks < 0)
    diag.error_at("/input_chunks", "input buffer size must not be negative");
  if (d.output_chunks < 0)
    diag.error_at("/output_chunks", "output buffer size must not be negative");
  if (d.root && (*d.root < 0 || *d.root >= d.num_ranks))
    diag.error_at("/root",
                  fmt::format("root rank {} is out of range [0, {})", *d.root, d.num_ranks));
  if (diag.has_errors())
    return tl::unexpected(diag);

  Owners input_owner(d.num_ranks, d.input_chunks), output_owner(d.num_ranks, d.output_chunks);
  // The last chunk each rank was listed in as a pre and as a post place, to find a rank listed
  // twice; each place's JSON pointer is spelled only for an error.
  std::vector<size_t> listed_pre(size_t(d.num_ranks), ~size_t(0)), listed_post = listed_pre;
  for (size_t c = 0; c < d.chunks.size(); ++c) {
    auto &ch = d.chunks[c];
    if (ch.pre.empty())
      diag.error_at(fmt::format("/chunks/{}/pre", c), fmt::format("chunk {} has no pre place", c));
    auto check_places = [&](std::vector<ChunkPlace> &places, const char *field, int size,
                            Owners &owner, std::vector<size_t> &listed, const char *buffer) {
      for (size_t k = 0; k < places.size(); ++k) {
        const auto &p = places[k];
        const auto pat = [&] { return fmt::format("/chunks/{}/{}/{}", c, field, k); };
        if (p.rank.value() < 0 || p.rank.value() >= d.num_ranks) {
          diag.error_at(pat(), fmt::format("chunk {}: rank {} is out of range [0, {})", c,
                                           p.rank.value(), d.num_ranks));
          continue;
        }
        if (p.slot < 0 || p.slot >= size) {
          diag.error_at(pat(), fmt::format("chunk {}: {} slot {} is out of range [0, {})", c,
                                           buffer, p.slot, size));
          continue;
        }
        if (std::exchange(listed[p.rank.index()], c) == c)
          diag.error_at(pat(), fmt::format("chunk {}: rank {} is listed twice", c, p.rank.value()));
        if (const auto held = owner.claim(p.rank.value(), p.slot, c))
          diag.error_at(pat(), fmt::format("chunk {}: {} slot {} of rank {} already holds chunk {}",
                                           c, buffer, p.slot, p.rank.value(), *held));
      }
      std::sort(places.begin(), places.end());
    };
    check_places(ch.pre, "pre", d.input_chunks, input_owner, listed_pre, "input");
    check_places(ch.post, "post", d.output_chunks, output_owner, listed_post, "output");
  }
  if (d.in_place == InPlaceKind::InputInOutput &&
      int64_t(d.num_ranks) * d.input_chunks > d.output_chunks)
    diag.error_at("/in_place",
                  fmt::format("in place as input_in_output needs an output buffer of at least "
                              "ranks x input = {} chunks, it has {}",
                              int64_t(d.num_ranks) * d.input_chunks, d.output_chunks));
  if (d.in_place == InPlaceKind::OutputInInput &&
      int64_t(d.num_ranks) * d.output_chunks > d.input_chunks)
    diag.error_at("/in_place",
                  fmt::format("in place as output_in_input needs an input buffer of at least "
                              "ranks x output = {} chunks, it has {}",
                              int64_t(d.num_ranks) * d.output_chunks, d.input_chunks));
  if (d.in_place == InPlaceKind::Same && d.input_chunks != d.output_chunks)
    diag.error_at("/in_place", fmt::format("in place as 'same' needs equal input and output "
                                           "buffers, they are {} and {} chunks",
                                           d.input_chunks, d.output_chunks));
  if (diag.has_errors())
    return tl::unexpected(diag);
  CollectiveSpec spec;
  spec.d_ = std::move(d);
  return spec;
}

std::optional<RankId> CollectiveSpec::root() const {
  if (!d_.root)
    return std::nullopt;
  return RankId(*d_.root);
}

const ChunkSpec &CollectiveSpec::chunk(ChunkId id) const {
  SYNCOLL_INVARIANT(id.value() >= 0 && id.value() < num_chunks(), "chunk id out of range");
  return d_.chunks[id.index()];
}

bool CollectiveSpec::is_combining() const {
  return std::any_of(d_.chunks.begin(), d_.chunks.end(),
                     [](const ChunkSpec &c) { return c.reduced; });
}

bool CollectiveSpec::is_pre(ChunkId c, RankId r) const {
  const auto &pre = chunk(c).pre;
  return std::any_of(pre.begin(), pre.end(), [&](const ChunkPlace &p) { return p.rank == r; });
}

bool CollectiveSpec::is_post(ChunkId c, RankId r) const {
  const auto &post = chunk(c).post;
  return std::any_of(post.begin(), post.end(), [&](const ChunkPlace &p) { return p.rank == r; });
}

Contribution CollectiveSpec::initial_value(ChunkId c, RankId r) const {
  const ChunkSpec &ch = chunk(c);
  SYNCOLL_INVARIANT(is_pre(c, r), "initial value asked of a rank that does not hold the chunk");
  return ch.reduced ? Contribution{c, r} : Contribution{c, ch.pre.front().rank};
}

std::vector<Contribution> CollectiveSpec::expected_value(ChunkId c) const {
  const ChunkSpec &ch = chunk(c);
  if (!ch.reduced)
    return {Contribution{c, ch.pre.front().rank}};
  std::vector<Contribution> out;
  for (const auto &p : ch.pre)
    out.push_back({c, p.rank});
  return out;
}

bool operator==(const CollectiveSpec &a, const CollectiveSpec &b) {
  const auto &x = a.d_;
  const auto &y = b.d_;
  return x.name == y.name && x.kind == y.kind && x.num_ranks == y.num_ranks &&
         x.chunk_factor == y.chunk_factor && x.root == y.root && x.input_chunks == y.input_chunks &&
         x.output_chunks == y.output_chunks && x.in_place == y.in_place && x.chunks == y.chunks;
}

Expected<CollectiveSpec> make_collective(CollectiveKind kind, int P, int C,
                                         std::optional<int> root) {
  if (kind == CollectiveKind::Custom)
    return fail({}, "a custom collective is defined by a JSON file, not by name");
  const std::string name(collective_kind_name(kind));
  if (P < 1 || P > kMaxRanks)
    return fail({}, fmt::format("{}: rank count {} is out of range [1, {}]", name, P, kMaxRanks));
  if (C < 1 || int64_t(P) * P * C > kMaxChunkCopies)
    return fail({}, fmt::format("{}: chunk factor {} is out of range for {} ranks", name, C, P));
  if (is_rooted(kind) && !root)
    return fail({}, fmt::format("{} needs a root rank", name));
  if (!is_rooted(kind) && root)
    return fail({}, fmt::format("{} takes no root rank", name));
  if (root && (*root < 0 || *root >= P))
    return fail({}, fmt::format("{}: root rank {} is out of range [0, {})", name, *root, P));
  if (kind == CollectiveKind::AllToNext && P < 2)
    return fail({}, "alltonext needs at least 2 ranks");

  CollectiveDraft d;
  d.name = name;
  d.kind = kind;
  d.num_ranks = P;
  d.chunk_factor = C;
  d.root = root;
  const CollectiveTraits &traits = collective_traits(kind);
  d.input_chunks = scaled_chunks(traits.input_chunks, P, C);
  d.output_chunks = scaled_chunks(traits.output_chunks, P, C);
  d.in_place = traits.in_place;
  auto place = [](int r, int s) { return ChunkPlace{RankId(r), s}; };
  auto all = [&](int slot) {
    std::vector<ChunkPlace> v;
    for (int r = 0; r < P; ++r)
      v.push_back(place(r, slot));
    return v;
  };
  // Chunk numbering follows SCCL (section 3.2.2): chunk i*P + n is the i-th chunk of rank n.
  switch (kind) {
  case CollectiveKind::Allgather:
    for (int i = 0; i < C; ++i)
      for (int n = 0; n < P; ++n)
        d.chunks.push_back({{place(n, i)}, all(n * C + i), false});
    break;
  case CollectiveKind::Alltoall:
    // Scattered pre, Transpose post: chunk n + P*dst + P*P*i goes from rank n to rank dst.
    for (int i = 0; i < C; ++i)
      for (int dst = 0; dst < P; ++dst)
        for (int n = 0; n < P; ++n)
          d.chunks.push_back({{place(n, dst * C + i)}, {place(dst, n * C + i)}, false});
    break;
  case CollectiveKind::Broadcast:
    for (int i = 0; i < C; ++i)
      d.chunks.push_back({{place(*root, i)}, all(i), false});
    break;
  case CollectiveKind::Gather:
    for (int i = 0; i < C; ++i)
      for (int n = 0; n < P; ++n)
        d.chunks.push_back({{place(n, i)}, {place(*root, n * C + i)}, false});
    break;
  case CollectiveKind::Scatter:
    for (int i = 0; i < C; ++i)
      for (int n = 0; n < P; ++n)
        d.chunks.push_back({{place(*root, n * C + i)}, {place(n, i)}, false});
    break;
  case CollectiveKind::Reduce:
    for (int i = 0; i < C; ++i)
      d.chunks.push_back({all(i), {place(*root, i)}, true});
    break;
  case CollectiveKind::ReduceScatter:
    for (int i = 0; i < C; ++i)
      for (int n = 0; n < P; ++n)
        d.chunks.push_back({all(n * C + i), {place(n, i)}, true});
    break;
  case CollectiveKind::Allreduce:
    for (int i = 0; i < C; ++i)
      d.chunks.push_back({all(i), all(i), true});
    break;
  case CollectiveKind::AllToNext:
    // GC3, section 7.4: rank n sends its buffer to rank n+1; the last rank sends nothing.
    for (int n = 0; n + 1 < P; ++n)
      for (int i = 0; i < C; ++i)
        d.chunks.push_back({{place(n, i)}, {place(n + 1, i)}, false});
    break;
  case CollectiveKind::Custom:
    SYNCOLL_UNREACHABLE("custom handled above");
  }
  auto spec = CollectiveSpec::create(std::move(d));
  SYNCOLL_INVARIANT(spec.has_value(), "standard collective failed validation");
  return spec;
}

Expected<CollectiveSpec> make_collective(std::string_view name, int P, int C,
                                         std::optional<int> root) {
  auto kind = parse_collective_kind(name);
  if (!kind) {
    std::string known;
    for (const CollectiveTraits &t : all_collective_traits())
      if (t.standard)
        known += (known.empty() ? "" : ", ") + std::string(t.name);
    return fail({}, fmt::format("unknown collective '{}' (known: {}; or a custom collective "
                                "JSON file)",
                                name, known));
  }
  return make_collective(*kind, P, C, root);
}

namespace {
Expected<std::vector<ChunkPlace>> read_places(const JsonView &v) {
  SYNCOLL_TRY(items, v.elements());
  std::vector<ChunkPlace> out;
  for (const auto &item : items) {
    SYNCOLL_TRY(pair, item.elements());
    if (pair.size() != 2)
      return item.error(
          fmt::format("expected a place as [rank, slot], found {} elements", pair.size()));
    SYNCOLL_TRY(rank, pair[0].as_int(INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(slot, pair[1].as_int(INT32_MIN, INT32_MAX));
    out.push_back({RankId(static_cast<int32_t>(rank)), static_cast<int>(slot)});
  }
  return out;
}
} // namespace

Expected<CollectiveSpec> collective_from_json(const JsonView &root) {
  SYNCOLL_CHECK(root.only_keys({"format", "name", "kind", "ranks", "chunk_factor", "root",
                                "input_chunks", "output_chunks", "in_place", "chunks"}));
  if (auto format = root.optional_member("format")) {
    SYNCOLL_TRY(f, format->as_string());
    if (f != "syncoll-collective")
      return format->error(fmt::format("expected format 'syncoll-collective', found '{}'", f));
  }
  SYNCOLL_TRY(kind_v, root.member("kind"));
  SYNCOLL_TRY(kind_name, kind_v.as_string());
  auto kind = parse_collective_kind(kind_name);
  if (!kind)
    return kind_v.error(fmt::format("unknown collective kind '{}'", kind_name));
  SYNCOLL_TRY(ranks_v, root.member("ranks"));
  SYNCOLL_TRY(ranks, ranks_v.as_int(1, kMaxRanks));
  int chunk_factor = 1;
  if (auto cf = root.optional_member("chunk_factor")) {
    SYNCOLL_TRY(v, cf->as_int(1, 1 << 20));
    chunk_factor = static_cast<int>(v);
  }
  std::optional<int> root_rank;
  if (auto rv = root.optional_member("root")) {
    SYNCOLL_TRY(v, rv->as_int(INT32_MIN, INT32_MAX));
    root_rank = static_cast<int>(v);
  }
  if (*kind != CollectiveKind::Custom) {
    for (const char *key : {"name", "input_chunks", "output_chunks", "in_place", "chunks"})
      if (auto extra = root.optional_member(key))
        return extra->error(
            fmt::format("'{}' is only for custom collectives; {} defines its own", key, kind_name));
    auto spec = make_collective(*kind, static_cast<int>(ranks), chunk_factor, root_rank);
    if (!spec)
      return kind_v.error(spec.error().items().front().message);
    return spec;
  }
  CollectiveDraft d;
  d.kind = CollectiveKind::Custom;
  d.num_ranks = static_cast<int>(ranks);
  d.chunk_factor = chunk_factor;
  d.root = root_rank;
  SYNCOLL_TRY(name_v, root.member("name"));
  SYNCOLL_TRY(name, name_v.as_string());
  d.name = name;
  SYNCOLL_TRY(in_v, root.member("input_chunks"));
  SYNCOLL_TRY(in, in_v.as_int(0, 1 << 24));
  d.input_chunks = static_cast<int>(in);
  SYNCOLL_TRY(out_v, root.member("output_chunks"));
  SYNCOLL_TRY(out, out_v.as_int(0, 1 << 24));
  d.output_chunks = static_cast<int>(out);
  if (auto ip = root.optional_member("in_place")) {
    SYNCOLL_TRY(s, ip->as_string());
    bool found = false;
    for (auto k : {InPlaceKind::None, InPlaceKind::Same, InPlaceKind::InputInOutput,
                   InPlaceKind::OutputInInput})
      if (in_place_kind_name(k) == s)
        d.in_place = k, found = true;
    if (!found)
      return ip->error(fmt::format("unknown in_place '{}' (expected none, same, input_in_output "
                                   "or output_in_input)",
                                   s));
  }
  SYNCOLL_TRY(chunks_v, root.member("chunks"));
  SYNCOLL_TRY(chunks, chunks_v.elements());
  for (const auto &cv : chunks) {
    SYNCOLL_CHECK(cv.only_keys({"pre", "post", "reduce"}));
    ChunkSpec ch;
    SYNCOLL_TRY(pre_v, cv.member("pre"));
    SYNCOLL_TRY(pre, read_places(pre_v));
    ch.pre = std::move(pre);
    SYNCOLL_TRY(post_v, cv.member("post"));
    SYNCOLL_TRY(post, read_places(post_v));
    ch.post = std::move(post);
    if (auto rv = cv.optional_member("reduce")) {
      SYNCOLL_TRY(r, rv->as_bool());
      ch.reduced = r;
    }
    d.chunks.push_back(std::move(ch));
  }
  auto spec = CollectiveSpec::create(std::move(d));
  if (!spec) {
    Diagnostics diagnostics = spec.error();
    diagnostics.resolve_pointers([&](const std::string &p) { return root.location_of(p); });
    return tl::unexpected(diagnostics);
  }
  return spec;
}

Expected<CollectiveSpec> read_collective_file(const std::string &path) {
  SYNCOLL_TRY(doc, JsonDocument::read_file(path));
  return collective_from_json(doc.root());
}

nlohmann::ordered_json collective_to_json(const CollectiveSpec &spec) {
  nlohmann::ordered_json j;
  j["format"] = "syncoll-collective";
  j["kind"] = std::string(collective_kind_name(spec.kind()));
  j["ranks"] = spec.num_ranks();
  j["chunk_factor"] = spec.chunk_factor();
  if (spec.root())
    j["root"] = spec.root()->value();
  if (spec.kind() != CollectiveKind::Custom)
    return j;
  j["name"] = spec.name();
  j["input_chunks"] = spec.input_chunks();
  j["output_chunks"] = spec.output_chunks();
  j["in_place"] = std::string(in_place_kind_name(spec.in_place()));
  auto chunks = nlohmann::ordered_json::array();
  for (int c = 0; c < spec.num_chunks(); ++c) {
    const auto &ch = spec.chunk(ChunkId(c));
    auto places = [](const std::vector<ChunkPlace> &ps) {
      auto a = nlohmann::ordered_json::array();
      for (const auto &p : ps)
        a.push_back({p.rank.value(), p.slot});
      return a;
    };
    nlohmann::ordered_json cj;
    cj["pre"] = places(ch.pre);
    cj["post"] = places(ch.post);
    cj["reduce"] = ch.reduced;
    chunks.push_back(std::move(cj));
  }
  j["chunks"] = std::move(chunks);
  return j;
}

Expected<void> fits_collective_model(CollectiveKind kind, int ranks, int chunk_factor) {
  const int64_t copies = int64_t(ranks) * ranks * chunk_factor;
  if (copies > kMaxChunkCopies)
    return fail({}, fmt::format("{} of {} chunks per rank on {} ranks: {} chunk copies (ranks^2 x "
                                "chunks per rank), where the collective model holds at most "
                                "2^24",
                                collective_kind_name(kind), chunk_factor, ranks, copies));
  return {};
}

} // namespace syncoll
