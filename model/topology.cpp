#include "model/topology.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace syncoll {

Expected<Topology> Topology::create(TopologyDraft draft) {
  Diagnostics diagnostics;
  if (draft.name.empty())
    diagnostics.error_at("/name", "topology name must not be empty");
  if (draft.num_ranks < 1 || draft.num_ranks > kMaxRanks) {
    diagnostics.error_at(
        "/ranks", fmt::format("rank count {} is out of range [1, {}]", draft.num_ranks, kMaxRanks));
    return tl::unexpected(diagnostics);
  }
  // As many switches as ranks at most: far above any fabric, and a typo is caught early.
  if (draft.switches.size() > size_t(kMaxRanks)) {
    diagnostics.error_at("/switches", fmt::format("switch count {} is out of range [0, {}]",
                                                  draft.switches.size(), kMaxRanks));
    return tl::unexpected(diagnostics);
  }
  const int vertices = draft.num_ranks + static_cast<int>(draft.switches.size());
  auto in_range = [&](RankId r) { return r.value() >= 0 && r.value() < vertices; };
  std::set<std::string_view> switch_names;
  for (size_t i = 0; i < draft.switches.size(); ++i) {
    if (draft.switches[i].empty())
      diagnostics.error_at(fmt::format("/switches/{}", i), "switch name must not be empty");
    else if (!switch_names.insert(draft.switches[i]).second)
      diagnostics.error_at(fmt::format("/switches/{}", i),
                           fmt::format("duplicate switch '{}'", draft.switches[i]));
  }

  std::map<std::pair<RankId, RankId>, size_t> first_link;
  for (size_t i = 0; i < draft.links.size(); ++i) {
    const Link &l = draft.links[i];
    std::string at = fmt::format("/links/{}", i);
    if (!in_range(l.src))
      diagnostics.error_at(at + "/src",
                           fmt::format("link source {} is out of range [0, {}) (ranks, then "
                                       "switches)",
                                       l.src.value(), vertices));
    if (!in_range(l.dst))
      diagnostics.error_at(at + "/dst",
                           fmt::format("link destination {} is out of range [0, {}) (ranks, then "
                                       "switches)",
                                       l.dst.value(), vertices));
    if (l.src == l.dst)
      diagnostics.error_at(at + "/dst", fmt::format("link {}->{} connects a vertex to itself",
                                                    l.src.value(), l.dst.value()));
    if (l.capacity < 1)
      diagnostics.error_at(at + "/capacity",
                           fmt::format("link {}->{} capacity {} must be at least 1 chunk per round",
                                       l.src.value(), l.dst.value(), l.capacity));
    if (!(l.alpha.count >= 0))
      diagnostics.error_at(at + "/alpha_ns", fmt::format("link {}->{} latency must not be negative",
                                                         l.src.value(), l.dst.value()));
    if (!(l.bandwidth.value > 0))
      diagnostics.error_at(
          at + "/bandwidth_gbps",
          fmt::format("link {}->{} bandwidth must be positive", l.src.value(), l.dst.value()));
    auto [it, inserted] = first_link.emplace(std::make_pair(l.src, l.dst), i);
    if (!inserted)
      diagnostics.error_at(at, fmt::format("duplicate link {}->{} (first at /links/{}); give one "
                                           "link a larger capacity instead",
                                           l.src.value(), l.dst.value(), it->second));
  }
  if (diagnostics.has_errors())
    return tl::unexpected(diagnostics);

  Topology t;
  t.name_ = std::move(draft.name);
  t.num_ranks_ = draft.num_ranks;
  t.switches_ = std::move(draft.switches);
  t.links_ = std::move(draft.links);
  std::sort(t.links_.begin(), t.links_.end(), [](const Link &a, const Link &b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });
  t.out_begin_.assign(static_cast<size_t>(vertices) + 1, 0);
  for (const Link &l : t.links_)
    ++t.out_begin_[l.src.index() + 1];
  for (size_t r = 0; r < static_cast<size_t>(vertices); ++r)
    t.out_begin_[r + 1] += t.out_begin_[r];
  t.number_fabrics();

  std::set<std::string> relation_names;
  for (size_t i = 0; i < draft.relations.size(); ++i) {
    auto &rel = draft.relations[i];
    std::string at = fmt::format("/relations/{}", i);
    if (rel.name.empty())
      diagnostics.error_at(at + "/name", "bandwidth relation name must not be empty");
    else if (!relation_names.insert(rel.name).second)
      diagnostics.error_at(at + "/name",
                           fmt::format("duplicate bandwidth relation '{}'", rel.name));
    if (rel.capacity < 1)
      diagnostics.error_at(at + "/capacity",
                           fmt::format("bandwidth relation '{}' capacity {} must be at least 1",
                                       rel.name, rel.capacity));
    if (rel.links.empty())
      diagnostics.error_at(at + "/links",
                           fmt::format("bandwidth relation '{}' has no links", rel.name));
    BandwidthRelation out{rel.name, {}, rel.capacity, rel.sharing};
    for (size_t j = 0; j < rel.links.size(); ++j) {
      auto [src, dst] = rel.links[j];
      auto id = t.find_link(src, dst);
      if (!id) {
        diagnostics.error_at(fmt::format("{}/links/{}", at, j),
                             fmt::format("bandwidth relation '{}' names link {}->{}, which the "
                                         "topology does not have",
                                         rel.name, src.value(), dst.value()));
        continue;
      }
      out.links.push_back(*id);
    }
    std::sort(out.links.begin(), out.links.end());
    if (std::adjacent_find(out.links.begin(), out.links.end()) != out.links.end())
      diagnostics.error_at(at + "/links",
                           fmt::format("bandwidth relation '{}' lists a link twice", rel.name));
    t.relations_.push_back(std::move(out));
  }

  const Hierarchy &h = draft.hierarchy;
  if (!h.levels.empty()) {
    int64_t product = 1;
    for (size_t i = 0; i < h.levels.size(); ++i) {
      if (h.levels[i].size < 1)
        diagnostics.error_at(fmt::format("/hierarchy/levels/{}/size", i),
                             fmt::format("hierarchy level '{}' size {} must be at least 1",
                                         h.levels[i].name, h.levels[i].size));
      if (h.levels[i].name.empty())
        diagnostics.error_at(fmt::format("/hierarchy/levels/{}/name", i),
                             "hierarchy level name must not be empty");
      product *= std::max(1, h.levels[i].size);
    }
    if (product != t.num_ranks_)
      diagnostics.error_at("/hierarchy/levels",
                           fmt::format("hierarchy level sizes multiply to {}, but the topology "
                                       "has {} ranks",
                                       product, t.num_ranks_));
  }
  if (h.nics_per_node < 0)
    diagnostics.error_at("/hierarchy/nics_per_node", "NICs per node must not be negative");
  if (h.nics_per_node > 0 && !(h.nic_bandwidth.value > 0))
    diagnostics.error_at("/hierarchy/nic_bandwidth_gbps", "NIC bandwidth must be positive");
  if (h.nics_per_node > 0 && h.levels.empty())
    diagnostics.error_at("/hierarchy/levels", "NICs per node need hierarchy levels");
  t.hierarchy_ = h;
  if (diagnostics.has_errors())
    return tl::unexpected(diagnostics);
  return t;
}

// Switches joined by links in either direction form one fabric; union-find over switch links.
void Topology::number_fabrics() {
  std::vector<int32_t> parent(switches_.size());
  for (size_t i = 0; i < parent.size(); ++i)
    parent[i] = static_cast<int32_t>(i);
  auto root = [&](int32_t i) {
    while (parent[size_t(i)] != i)
      i = parent[size_t(i)] = parent[size_t(parent[size_t(i)])];
    return i;
  };
  for (const Link &l : links_)
    if (is_switch(l.src) && is_switch(l.dst))
      parent[size_t(root(l.src.value() - num_ranks_))] = root(l.dst.value() - num_ranks_);
  fabric_of_switch_.assign(switches_.size(), -1);
  std::vector<int32_t> number(switches_.size(), -1);
  int32_t fabrics = 0;
  for (size_t i = 0; i < switches_.size(); ++i) {
    int32_t &n = number[size_t(root(static_cast<int32_t>(i)))];
    if (n < 0)
      n = fabrics++;
    fabric_of_switch_[i] = n;
  }
  enters_.assign(size_t(num_ranks_), {});
  leaves_.assign(size_t(num_ranks_), {});
  auto add = [](std::vector<int32_t> &to, int32_t fabric) {
    if (std::find(to.begin(), to.end(), fabric) == to.end())
      to.push_back(fabric);
  };
  for (const Link &l : links_) {
    if (!is_switch(l.src) && is_switch(l.dst))
      add(enters_[l.src.index()], fabric_of_switch_[size_t(l.dst.value() - num_ranks_)]);
    if (is_switch(l.src) && !is_switch(l.dst))
      add(leaves_[l.dst.index()], fabric_of_switch_[size_t(l.src.value() - num_ranks_)]);
  }
}

int Topology::ranks_per_node() const {
  return hierarchy_.empty() ? num_ranks_ : num_ranks_ / hierarchy_.levels.front().size;
}

std::string Topology::vertex_name(RankId vertex) const {
  if (is_switch(vertex))
    return switches_.at(size_t(vertex.value() - num_ranks_));
  return std::to_string(vertex.value());
}

bool Topology::reaches(RankId src, RankId dst) const {
  if (find_link(src, dst))
    return true;
  if (switches_.empty())
    return false;
  const std::vector<int32_t> &in = enters_[src.index()];
  const std::vector<int32_t> &out = leaves_[dst.index()];
  return std::find_first_of(in.begin(), in.end(), out.begin(), out.end()) != in.end();
}

const Link &Topology::link(LinkId id) const {
  SYNCOLL_INVARIANT(id.value() >= 0 && id.index() < links_.size(), "link id out of range");
  return links_[id.index()];
}

std::optional<LinkId> Topology::find_link(RankId src, RankId dst) const {
  if (src.value() < 0 || src.value() >= num_vertices())
    return std::nullopt;
  auto begin = links_.begin() + out_begin_[src.index()];
  auto end = links_.begin() + out_begin_[src.index() + 1];
  auto it = std::lower_bound(begin, end, dst, [](const Link &l, RankId d) { return l.dst < d; });
  if (it == end || it->dst != dst)
    return std::nullopt;
  return LinkId(static_cast<int32_t>(it - links_.begin()));
}

std::vector<LinkId> Topology::out_links(RankId rank) const {
  SYNCOLL_INVARIANT(rank.value() >= 0 && rank.value() < num_vertices(), "vertex out of range");
  std::vector<LinkId> out;
  for (int32_t i = out_begin_[rank.index()]; i < out_begin_[rank.index() + 1]; ++i)
    out.emplace_back(i);
  return out;
}

std::vector<LinkId> Topology::in_links(RankId rank) const {
  std::vector<LinkId> out;
  for (size_t i = 0; i < links_.size(); ++i)
    if (links_[i].dst == rank)
      out.emplace_back(static_cast<int32_t>(i));
  return out;
}

int Topology::capacity(RankId src, RankId dst) const {
  auto id = find_link(src, dst);
  return id ? link(*id).capacity : 0;
}

TopologyDraft Topology::to_draft() const {
  TopologyDraft d;
  d.name = name_;
  d.num_ranks = num_ranks_;
  d.switches = switches_;
  d.links = links_;
  for (const auto &rel : relations_) {
    TopologyDraft::Relation r{rel.name, {}, rel.capacity, rel.sharing};
    for (LinkId id : rel.links)
      r.links.emplace_back(link(id).src, link(id).dst);
    d.relations.push_back(std::move(r));
  }
  d.hierarchy = hierarchy_;
  return d;
}

} // namespace syncoll
