// The composition file (docs/formats.md, "Compositions"): epochs of primitives, a fence between
// consecutive epochs.
#include "compose/composition_json.h"

#include "model/json_document.h"

#include <fmt/format.h>

namespace syncoll::compose {
namespace {

std::optional<BufferKind> buffer_named(std::string_view name) {
  if (name == "send")
    return BufferKind::Input;
  if (name == "recv")
    return BufferKind::Output;
  return std::nullopt;
}

Expected<Slice> slice_from_json(const JsonView &v) {
  SYNCOLL_CHECK(v.only_keys({"buffer", "offset", "count"}));
  SYNCOLL_TRY(buffer_view, v.member("buffer"));
  SYNCOLL_TRY(buffer, buffer_view.as_string());
  Slice s;
  const std::optional<BufferKind> kind = buffer_named(buffer);
  if (!kind)
    return buffer_view.error(fmt::format("unknown buffer '{}' (expected send or recv)", buffer));
  s.buffer = *kind;
  SYNCOLL_TRY(offset_view, v.member("offset"));
  SYNCOLL_TRY(offset, offset_view.as_int(0, 1 << 20));
  s.offset = int(offset);
  if (auto count_view = v.optional_member("count")) {
    SYNCOLL_TRY(count, count_view->as_int(1, 1 << 20));
    s.count = int(count);
  }
  return s;
}

Expected<Members> members_from_json(const JsonView &v, int ranks) {
  if (v.is_string()) {
    SYNCOLL_TRY(which, v.as_string());
    if (which == "all")
      return Members::all();
    if (which == "others")
      return Members::others();
    return v.error(fmt::format("unknown member set '{}' (expected all, others or a list of "
                               "ranks)",
                               which));
  }
  SYNCOLL_TRY(elements, v.elements());
  std::vector<RankId> list;
  for (const JsonView &e : elements) {
    SYNCOLL_TRY(r, e.as_int(0, ranks - 1));
    list.emplace_back(int(r));
  }
  return Members::of(std::move(list));
}

} // namespace

Expected<Composition> composition_from_json(const JsonView &root) {
  SYNCOLL_CHECK(root.only_keys({"name", "ranks", "send_chunks", "recv_chunks", "epochs"}));
  SYNCOLL_TRY(ranks_view, root.member("ranks"));
  SYNCOLL_TRY(ranks, ranks_view.as_int(1, 4096));
  SYNCOLL_TRY(send_view, root.member("send_chunks"));
  SYNCOLL_TRY(send_chunks, send_view.as_int(1, 1 << 20));
  SYNCOLL_TRY(recv_view, root.member("recv_chunks"));
  SYNCOLL_TRY(recv_chunks, recv_view.as_int(1, 1 << 20));
  SYNCOLL_TRY(c, Composition::create(int(ranks), int(send_chunks), int(recv_chunks)));
  SYNCOLL_TRY(epochs_view, root.member("epochs"));
  SYNCOLL_TRY(epochs, epochs_view.elements());
  for (const JsonView &epoch : epochs) {
    SYNCOLL_TRY(primitives, epoch.elements());
    for (const JsonView &p : primitives) {
      SYNCOLL_CHECK(p.only_keys({"multicast", "reduction"}));
      const bool multicast = p.has("multicast");
      if (multicast == p.has("reduction"))
        return p.error("a primitive is an object with one key, multicast or reduction");
      SYNCOLL_TRY(body, p.member(multicast ? "multicast" : "reduction"));
      SYNCOLL_CHECK(body.only_keys({"root", "source", "target", "receivers", "contributors"}));
      SYNCOLL_TRY(root_view, body.member("root"));
      SYNCOLL_TRY(root_rank, root_view.as_int(0, ranks - 1));
      SYNCOLL_TRY(source_view, body.member("source"));
      SYNCOLL_TRY(source, slice_from_json(source_view));
      SYNCOLL_TRY(target_view, body.member("target"));
      SYNCOLL_TRY(target, slice_from_json(target_view));
      SYNCOLL_TRY(members_view, body.member(multicast ? "receivers" : "contributors"));
      SYNCOLL_TRY(members, members_from_json(members_view, int(ranks)));
      auto added = multicast ? c.multicast(source, RankId(int(root_rank)), members, target)
                             : c.reduction(source, members, RankId(int(root_rank)), target);
      if (!added) // the primitive's own rule, located at the primitive
        return p.error(added.error().items().front().message);
    }
    c.fence();
  }
  return c;
}

Expected<Composition> read_composition_file(const std::string &path) {
  SYNCOLL_TRY(document, JsonDocument::read_file(path));
  return composition_from_json(document.root());
}

} // namespace syncoll::compose
