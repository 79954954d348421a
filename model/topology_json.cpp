#include "model/topology_json.h"

#include "model/json_document.h"

#include <fmt/format.h>

namespace syncoll {
namespace {

Expected<std::pair<RankId, RankId>> read_link_ends(const JsonView &v) {
  SYNCOLL_TRY(pair, v.elements());
  if (pair.size() != 2)
    return v.error(fmt::format("expected a link as [src, dst], found {} elements", pair.size()));
  SYNCOLL_TRY(src, pair[0].as_int(INT32_MIN, INT32_MAX));
  SYNCOLL_TRY(dst, pair[1].as_int(INT32_MIN, INT32_MAX));
  return std::make_pair(RankId(static_cast<int32_t>(src)), RankId(static_cast<int32_t>(dst)));
}

} // namespace

Expected<Topology> topology_from_json(const JsonView &root) {
  if (auto ok = root.only_keys(
          {"format", "name", "ranks", "switches", "links", "relations", "hierarchy"});
      !ok)
    return tl::unexpected(ok.error());
  if (auto format = root.optional_member("format")) {
    SYNCOLL_TRY(f, format->as_string());
    if (f != "syncoll-topology")
      return format->error(fmt::format("expected format 'syncoll-topology', found '{}'", f));
  }
  TopologyDraft d;
  SYNCOLL_TRY(name_view, root.member("name"));
  SYNCOLL_TRY(name, name_view.as_string());
  d.name = name;
  SYNCOLL_TRY(ranks_view, root.member("ranks"));
  SYNCOLL_TRY(ranks, ranks_view.as_int(INT32_MIN, INT32_MAX));
  d.num_ranks = static_cast<int>(ranks);
  if (auto switches_view = root.optional_member("switches")) {
    SYNCOLL_TRY(switches, switches_view->elements());
    for (const auto &sv : switches) {
      SYNCOLL_TRY(switch_name, sv.as_string());
      d.switches.emplace_back(switch_name);
    }
  }

  SYNCOLL_TRY(links_view, root.member("links"));
  SYNCOLL_TRY(links, links_view.elements());
  for (const auto &lv : links) {
    if (auto ok = lv.only_keys({"src", "dst", "capacity", "alpha_ns", "bandwidth_gbps"}); !ok)
      return tl::unexpected(ok.error());
    Link l;
    SYNCOLL_TRY(src_v, lv.member("src"));
    SYNCOLL_TRY(src, src_v.as_int(INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(dst_v, lv.member("dst"));
    SYNCOLL_TRY(dst, dst_v.as_int(INT32_MIN, INT32_MAX));
    l.src = RankId(static_cast<int32_t>(src));
    l.dst = RankId(static_cast<int32_t>(dst));
    if (auto c = lv.optional_member("capacity")) {
      SYNCOLL_TRY(cap, c->as_int(INT32_MIN, INT32_MAX));
      l.capacity = static_cast<int>(cap);
    }
    SYNCOLL_TRY(alpha_v, lv.member("alpha_ns"));
    SYNCOLL_TRY(alpha, alpha_v.as_number(-1e300, 1e300));
    l.alpha = Nanoseconds{alpha};
    SYNCOLL_TRY(bw_v, lv.member("bandwidth_gbps"));
    SYNCOLL_TRY(bw, bw_v.as_number(-1e300, 1e300));
    l.bandwidth = BytesPerNs{bw};
    d.links.push_back(l);
  }

  if (auto rels = root.optional_member("relations")) {
    SYNCOLL_TRY(items, rels->elements());
    for (const auto &rv : items) {
      if (auto ok = rv.only_keys({"name", "capacity", "sharing", "links"}); !ok)
        return tl::unexpected(ok.error());
      TopologyDraft::Relation r;
      SYNCOLL_TRY(rn_v, rv.member("name"));
      SYNCOLL_TRY(rn, rn_v.as_string());
      r.name = rn;
      SYNCOLL_TRY(rc_v, rv.member("capacity"));
      SYNCOLL_TRY(rc, rc_v.as_int(INT32_MIN, INT32_MAX));
      r.capacity = static_cast<int>(rc);
      if (auto sv = rv.optional_member("sharing")) {
        SYNCOLL_TRY(sharing, sv->as_string());
        if (sharing == "fair")
          r.sharing = RelationSharing::Fair;
        else if (sharing != "fifo")
          return sv->error(fmt::format("unknown sharing '{}' (expected fifo or fair)", sharing));
      }
      SYNCOLL_TRY(rl_v, rv.member("links"));
      SYNCOLL_TRY(rl, rl_v.elements());
      for (const auto &ends_v : rl) {
        SYNCOLL_TRY(ends, read_link_ends(ends_v));
        r.links.push_back(ends);
      }
      d.relations.push_back(std::move(r));
    }
  }

  if (auto hv = root.optional_member("hierarchy")) {
    if (auto ok = hv->only_keys({"levels", "nics_per_node", "nic_bandwidth_gbps"}); !ok)
      return tl::unexpected(ok.error());
    SYNCOLL_TRY(levels_v, hv->member("levels"));
    SYNCOLL_TRY(levels, levels_v.elements());
    for (const auto &lv : levels) {
      if (auto ok = lv.only_keys({"name", "size"}); !ok)
        return tl::unexpected(ok.error());
      SYNCOLL_TRY(ln_v, lv.member("name"));
      SYNCOLL_TRY(ln, ln_v.as_string());
      SYNCOLL_TRY(ls_v, lv.member("size"));
      SYNCOLL_TRY(ls, ls_v.as_int(INT32_MIN, INT32_MAX));
      d.hierarchy.levels.push_back({ln, static_cast<int>(ls)});
    }
    if (auto nics = hv->optional_member("nics_per_node")) {
      SYNCOLL_TRY(n, nics->as_int(INT32_MIN, INT32_MAX));
      d.hierarchy.nics_per_node = static_cast<int>(n);
    }
    if (auto bw = hv->optional_member("nic_bandwidth_gbps")) {
      SYNCOLL_TRY(b, bw->as_number(-1e300, 1e300));
      d.hierarchy.nic_bandwidth = BytesPerNs{b};
    }
  }

  auto topology = Topology::create(std::move(d));
  if (!topology) {
    Diagnostics diagnostics = topology.error();
    diagnostics.resolve_pointers([&](const std::string &p) { return root.location_of(p); });
    return tl::unexpected(diagnostics);
  }
  return topology;
}

Expected<Topology> parse_topology_json(std::string_view text, const std::string &file_name) {
  auto doc = JsonDocument::parse(text, file_name);
  if (!doc)
    return tl::unexpected(doc.error());
  return topology_from_json(doc->root());
}

Expected<Topology> read_topology_file(const std::string &path) {
  auto doc = JsonDocument::read_file(path);
  if (!doc)
    return tl::unexpected(doc.error());
  return topology_from_json(doc->root());
}

nlohmann::ordered_json topology_to_json(const Topology &t) {
  nlohmann::ordered_json j;
  j["format"] = "syncoll-topology";
  j["name"] = t.name();
  j["ranks"] = t.num_ranks();
  if (t.num_switches() > 0)
    j["switches"] = t.switches();
  auto links = nlohmann::ordered_json::array();
  for (const Link &l : t.links()) {
    nlohmann::ordered_json lj;
    lj["src"] = l.src.value();
    lj["dst"] = l.dst.value();
    lj["capacity"] = l.capacity;
    lj["alpha_ns"] = l.alpha.count;
    lj["bandwidth_gbps"] = l.bandwidth.value;
    links.push_back(std::move(lj));
  }
  j["links"] = std::move(links);
  if (!t.relations().empty()) {
    auto rels = nlohmann::ordered_json::array();
    for (const auto &r : t.relations()) {
      nlohmann::ordered_json rj;
      rj["name"] = r.name;
      rj["capacity"] = r.capacity;
      if (r.sharing == RelationSharing::Fair)
        rj["sharing"] = "fair";
      auto ends = nlohmann::ordered_json::array();
      for (LinkId id : r.links)
        ends.push_back({t.link(id).src.value(), t.link(id).dst.value()});
      rj["links"] = std::move(ends);
      rels.push_back(std::move(rj));
    }
    j["relations"] = std::move(rels);
  }
  if (!t.hierarchy().empty()) {
    nlohmann::ordered_json h;
    auto levels = nlohmann::ordered_json::array();
    for (const auto &lv : t.hierarchy().levels)
      levels.push_back({{"name", lv.name}, {"size", lv.size}});
    h["levels"] = std::move(levels);
    if (t.hierarchy().nics_per_node > 0) {
      h["nics_per_node"] = t.hierarchy().nics_per_node;
      h["nic_bandwidth_gbps"] = t.hierarchy().nic_bandwidth.value;
    }
    j["hierarchy"] = std::move(h);
  }
  return j;
}

} // namespace syncoll
