#include "nccl/search.h"

#include "model/invariant.h"
#include "model/topology_library.h"
#include "simulator/routes.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <optional>
#include <random>
#include <span>

namespace syncoll::nccl {

namespace {

// NCCL's names of its path types (topo.cc's topoPathTypeStr), in NcclPathType's order.
constexpr std::string_view kPathNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                           "PXB", "P2C", "PXN", "PHB", "SYS"};
static_assert(std::size(kPathNames) == size_t(NcclPathType::Sys) + 1, "a name per path type");

} // namespace

std::string_view nccl_path_name(NcclPathType type) {
  return kPathNames[size_t(type)];
}

std::string nccl_path_names() {
  const std::span<const std::string_view> names(kPathNames);
  return fmt::format("{} or {}", fmt::join(names.first(names.size() - 1), ", "), names.back());
}

std::optional<NcclPathType> find_nccl_path_type(std::string_view name) {
  for (size_t i = 0; i < std::size(kPathNames); ++i)
    if (kPathNames[i] == name)
      return NcclPathType(i);
  return std::nullopt;
}

NcclPathType nccl_path_type(const Topology &t, simulator::Routes &routes, RankId a, RankId b) {
  if (t.find_link(a, b))
    return NcclPathType::Nvl;
  int bridges = 0, sockets = 0;
  for (LinkId l : routes.route(a, b)) {
    const RankId v = t.link(l).dst;
    if (!t.is_switch(v))
      continue;
    const std::string vertex = t.vertex_name(v);
    const std::string_view name = node_local_name(vertex);
    if (name == "nvswitch")
      return NcclPathType::Nvl;
    (name.starts_with("cpu") ? sockets : bridges) += 1;
  }
  if (sockets > 1)
    return NcclPathType::Sys;
  if (sockets == 1)
    return NcclPathType::Phb;
  return bridges > 1 ? NcclPathType::Pxb : NcclPathType::Pix;
}

namespace {

constexpr int kMaxGraphChannels = 16; // NCCL searches MAXCHANNELS / 2
constexpr double kSplitAtGbps = 25;   // a faster channel is split in two (ncclTopoDupChannels)
constexpr uint32_t kPlacementAttempts = 64;

// Residual NCCL graph bandwidth of every link and relation while channels are placed.
class Resources {
public:
  Resources(const Topology &t, const std::vector<double> &link_gbps) : link_(link_gbps) {
    relations_of_.resize(t.links().size());
    for (size_t r = 0; r < t.relations().size(); ++r) {
      const BandwidthRelation &rel = t.relations()[r];
      double per_unit = 1e300;
      for (LinkId l : rel.links) {
        per_unit = std::min(per_unit, link_gbps[l.index()] / t.link(l).capacity);
        relations_of_[l.index()].push_back(int(r));
      }
      relation_.push_back(per_unit * rel.capacity);
    }
  }
  bool fits(LinkId l, double gbps) const {
    if (link_[l.index()] + 1e-9 < gbps)
      return false;
    for (int r : relations_of_[l.index()])
      if (relation_[size_t(r)] + 1e-9 < gbps)
        return false;
    return true;
  }
  void take(LinkId l, double gbps) {
    link_[l.index()] -= gbps;
    for (int r : relations_of_[l.index()])
      relation_[size_t(r)] -= gbps;
  }
  double left(LinkId l) const { return link_[l.index()]; }
  // The most channels at `gbps` that the ring's links and relations carry together.
  int copies(const std::vector<LinkId> &ring, double gbps) const {
    Resources probe = *this;
    for (int n = 0; n < kMaxGraphChannels; ++n)
      for (LinkId l : ring) {
        if (!probe.fits(l, gbps))
          return n;
        probe.take(l, gbps);
      }
    return kMaxGraphChannels;
  }

private:
  std::vector<double> link_;
  std::vector<double> relation_;
  std::vector<std::vector<int>> relations_of_;
};

// The ways from one member to another a ring may take: the direct link, or where there is none
// and the node has switches (PCIe bridges, sockets), the route through them, as NCCL's paths
// between GPUs on a PCIe machine. A channel takes its speed from every link of the route.
struct Hops {
  struct Hop {
    int to;              ///< member index
    uint32_t begin, end; ///< its links in `links`
    NcclPathType type;
  };
  std::vector<std::vector<Hop>> from; ///< per member
  std::vector<LinkId> links;

  Hops(const Topology &t, const std::vector<int> &members, const std::vector<int> &member_index) {
    from.resize(members.size());
    for (size_t i = 0; i < members.size(); ++i)
      for (LinkId l : t.out_links(RankId(members[i])))
        if (const int to = member_index[t.link(l).dst.index()]; to >= 0)
          add(i, to, std::span<const LinkId>(&l, 1), NcclPathType::Nvl);
    if (t.num_switches() == 0)
      return;
    simulator::Routes routes(t);
    for (size_t i = 0; i < members.size(); ++i)
      for (size_t j = 0; j < members.size(); ++j) {
        const RankId a(members[i]), b(members[j]);
        if (i != j && !t.find_link(a, b) && t.reaches(a, b))
          add(i, int(j), routes.route(a, b), nccl_path_type(t, routes, a, b));
      }
  }
  void add(size_t at, int to, std::span<const LinkId> route, NcclPathType type) {
    from[at].push_back({to, uint32_t(links.size()), uint32_t(links.size() + route.size()), type});
    links.insert(links.end(), route.begin(), route.end());
  }
  // The path types its hops take, nearest first: the levels NCCL's search widens through.
  std::vector<NcclPathType> types() const {
    std::vector<NcclPathType> out;
    for (const std::vector<Hop> &out_of : from)
      for (const Hop &h : out_of)
        out.push_back(h.type);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::span<const LinkId> of(const Hop &h) const {
    return {links.data() + h.begin, links.data() + h.end};
  }
  bool fits(const Resources &res, const Hop &h, double gbps) const {
    for (LinkId l : of(h))
      if (!res.fits(l, gbps))
        return false;
    return true;
  }
  void take(Resources &res, const Hop &h, double gbps) const {
    for (LinkId l : of(h))
      res.take(l, gbps);
  }
  double left(const Resources &res, const Hop &h) const {
    double least = 1e300;
    for (LinkId l : of(h))
      least = std::min(least, res.left(l));
    return least;
  }
};

// A Hamiltonian cycle through `members` (in the topology's rank ids) whose every hop fits
// `gbps`, depth first from members[0], trying the hops with the most bandwidth left first; the
// cycle's links in order (a hop through switches gives several). Bounded in work, as NCCL's
// search is by its timeout.
// With `may_end`, the walk is a chain instead: it ends at the last member it reaches, which
// `may_end` must accept, and has no link back (a node's part of a ring across nodes). No hop
// takes a path farther than `farthest` (NCCL's typeIntra).
std::optional<std::vector<LinkId>> find_cycle(const Topology &t, Resources res,
                                              const std::vector<int> &members, double gbps,
                                              uint32_t shuffle = 0,
                                              const std::function<bool(int)> &may_end = nullptr,
                                              NcclPathType farthest = NcclPathType::Sys) {
  const size_t n = members.size();
  std::vector<int> member_index(size_t(t.num_vertices()), -1);
  for (size_t i = 0; i < n; ++i)
    member_index[size_t(members[i])] = int(i);
  const Hops hops(t, members, member_index);
  using Hop = Hops::Hop;
  // Depth first with an explicit stack (a ring of thousands of ranks is as deep): a frame per
  // rank on the path, holding the hops out of it still to try.
  struct Frame {
    int at;
    std::vector<Hop> next;
    size_t tried = 0;
  };
  std::vector<Hop> path;
  std::vector<bool> used(n, false);
  long budget = 200'000;
  // Work is counted per rank entered, as a recursive search counts its calls.
  auto open = [&](int at) {
    --budget;
    Frame f{at, {}, 0};
    for (const Hop &h : hops.from[size_t(at)])
      if (!used[size_t(h.to)] && h.type <= farthest && hops.fits(res, h, gbps))
        f.next.push_back(h);
    if (shuffle != 0) {
      std::mt19937 rng(shuffle + uint32_t(path.size()) * 7919u + uint32_t(at));
      std::shuffle(f.next.begin(), f.next.end(), rng);
    }
    std::stable_sort(f.next.begin(), f.next.end(), [&](const Hop &a, const Hop &b) {
      return hops.left(res, a) > hops.left(res, b);
    });
    return f;
  };
  auto links_of = [&](const std::vector<Hop> &walk) {
    std::vector<LinkId> out;
    for (const Hop &h : walk)
      for (LinkId l : hops.of(h))
        out.push_back(l);
    return out;
  };
  if (n < 2)
    return std::nullopt;
  used[0] = true;
  std::vector<Frame> stack{open(0)};
  while (!stack.empty()) {
    if (budget < 0)
      return std::nullopt;
    Frame &f = stack.back();
    if (path.size() + 1 == n && may_end) {
      if (may_end(members[size_t(f.at)]))
        return links_of(path);
    } else if (path.size() + 1 == n) {
      for (const Hop &back : hops.from[size_t(f.at)])
        if (back.to == 0 && back.type <= farthest && hops.fits(res, back, gbps)) {
          path.push_back(back);
          return links_of(path);
        }
    } else if (f.tried < f.next.size()) {
      const Hop h = f.next[f.tried++];
      used[size_t(h.to)] = true;
      hops.take(res, h, gbps);
      path.push_back(h);
      stack.push_back(open(h.to));
      continue;
    }
    // Nothing left to try from here: step back.
    used[size_t(f.at)] = f.at == 0;
    stack.pop_back();
    if (!path.empty()) {
      hops.take(res, path.back(), -gbps);
      path.pop_back();
    }
  }
  return std::nullopt;
}

// The ranks a cycle visits, in order (the switches a hop crosses left out).
std::vector<RankId> ranks_of(const Topology &t, const std::vector<LinkId> &cycle) {
  std::vector<RankId> out;
  for (LinkId l : cycle)
    if (!t.is_switch(t.link(l).src))
      out.push_back(t.link(l).src);
  return out;
}

// Whether a ring hops between two of the host's AMD sockets (NCCL's PATH_SYS through them).
bool crosses_amd_sockets(const Topology &t, const std::vector<LinkId> &ring,
                         const NcclSearchHost &host) {
  const auto amd = [&](RankId v) {
    return std::find(host.amd_sockets.begin(), host.amd_sockets.end(), v) != host.amd_sockets.end();
  };
  return std::any_of(ring.begin(), ring.end(),
                     [&](LinkId l) { return amd(t.link(l).src) && amd(t.link(l).dst); });
}

// The most channels at `gbps` over `members`: the same ring repeated (tried first, as NCCL
// does), or different rings placed one after another, which NCCL does not try where the ring
// crosses between AMD sockets.
std::vector<std::vector<LinkId>> place_channels(const Topology &t, const Resources &start,
                                                const std::vector<int> &members, double gbps,
                                                const NcclSearchHost &host, NcclPathType farthest) {
  std::vector<std::vector<LinkId>> same;
  if (auto ring = find_cycle(t, start, members, gbps, 0, nullptr, farthest)) {
    same.assign(size_t(start.copies(*ring, gbps)), *ring);
    if (crosses_amd_sockets(t, *ring, host))
      return same;
  }
  // Different rings, placed greedily; ties among equally loaded links are broken by a fixed
  // sequence of shuffles, and the attempt that places the most rings wins (NCCL backtracks
  // within a time budget instead; this is its deterministic stand-in).
  // No rank sends more channels than its links carry: the bound attempts stop at.
  size_t bound = kMaxGraphChannels;
  for (int r : members) {
    int fit = 0;
    for (LinkId l : t.out_links(RankId(r)))
      if (!t.is_switch(t.link(l).dst) || t.num_switches() > 0)
        fit += int(std::floor(start.left(l) / gbps + 1e-9));
    bound = std::min(bound, size_t(fit));
  }
  const uint32_t attempts = members.size() <= 16 ? kPlacementAttempts : 4;
  std::vector<std::vector<LinkId>> different;
  for (uint32_t attempt = 0; attempt < attempts && different.size() < bound; ++attempt) {
    std::vector<std::vector<LinkId>> rings;
    Resources res = start;
    while (int(rings.size()) < kMaxGraphChannels) {
      auto ring = find_cycle(t, res, members, gbps, attempt, nullptr, farthest);
      if (!ring)
        break;
      for (LinkId l : *ring)
        res.take(l, gbps);
      rings.push_back(std::move(*ring));
    }
    if (rings.size() > different.size())
      different = std::move(rings);
  }
  return different.size() > same.size() ? different : same;
}

// What pass 1 keeps: the channels placed at one speed, on paths of one level or nearer.
template <class Channel> struct Placed {
  std::vector<Channel> channels;
  double gbps = 0;
  size_t level = 0;
  NcclPathType type = NcclPathType::Nvl; ///< the level's path type
  double total() const { return double(channels.size()) * gbps; }
};

// Pass 1's walk down the speed list, shared by rings and chains: from the highest speed the
// machine's fastest link (`widest`) carries, each speed placed (`place(speed, level)`: the
// channels found on paths up to the level-th path type), the most total bandwidth kept; it
// stops where the next speed is under half the best. At each speed the paths widen a level at
// a time from the nearest while nothing is kept yet or what is kept takes wider paths, as
// NCCL's typeIntra does (so a machine whose GPUs are linked never rings through its host).
template <class Channel, class Place>
std::optional<Placed<Channel>> walk_speeds(std::span<const double> speeds, double widest,
                                           size_t levels, Place place) {
  size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > widest)
    ++i;
  std::optional<Placed<Channel>> best;
  for (; i < speeds.size(); ++i) {
    if (best && speeds[i] / best->gbps <= 0.49)
      break;
    for (size_t level = 0; level < levels; ++level) {
      Placed<Channel> f{place(speeds[i], level), speeds[i], level};
      if (!f.channels.empty() && (!best || f.total() > best->total() + 1e-9))
        best = std::move(f);
      if (best && best->level <= level)
        break;
    }
  }
  return best;
}

// The path types the hops among `members` take, nearest first (at least one level).
std::vector<NcclPathType> path_levels(const Topology &t, const std::vector<int> &members) {
  std::vector<int> member_index(size_t(t.num_vertices()), -1);
  for (size_t i = 0; i < members.size(); ++i)
    member_index[size_t(members[i])] = int(i);
  std::vector<NcclPathType> levels = Hops(t, members, member_index).types();
  if (levels.empty())
    levels.push_back(NcclPathType::Nvl);
  return levels;
}

std::vector<int> all_ranks(const Topology &t) {
  std::vector<int> out(size_t(t.num_ranks()));
  for (int r = 0; r < t.num_ranks(); ++r)
    out[size_t(r)] = r;
  return out;
}

using Found = Placed<std::vector<LinkId>>;

// Pass 1 of NCCL's search over one set of ranks, then the split of fast channels.
// `widest`: the fastest link of the whole machine, where the speed list starts.
std::optional<Found> search(const Topology &t, const std::vector<double> &link_gbps,
                            std::span<const double> speeds, const std::vector<int> &members,
                            double widest, const NcclSearchHost &host) {
  const Resources res(t, link_gbps);
  const std::vector<NcclPathType> levels = path_levels(t, members);
  auto best = walk_speeds<std::vector<LinkId>>(
      speeds, widest, levels.size(), [&](double gbps, size_t level) {
        return place_channels(t, res, members, gbps, host, levels[level]);
      });
  if (!best)
    return std::nullopt;
  best->type = levels[best->level];
  if (best->gbps >= kSplitAtGbps) {
    const size_t n = std::min<size_t>(best->channels.size() * 2, kMaxGraphChannels);
    std::vector<std::vector<LinkId>> split;
    for (size_t c = 0; c < n; ++c)
      split.push_back(best->channels[c % best->channels.size()]);
    best->gbps = best->total() / double(n);
    best->channels = std::move(split);
  }
  return best;
}

// Across nodes on a fixed mesh (no switch but the host's sockets: a full xGMI mesh, DGX-1's
// cube-mesh, Frontier's cube; a hop through the host only at a wider path type) a channel is a
// chain NET -> GPU ... GPU -> NET, as NCCL's search walks it: from the GPU of the channel's NIC
// through every GPU of the node to one that leaves through its own NIC. The link from the last
// GPU back to the first is never used, so a node's links carry more chains than rings (8 GPUs
// of a full mesh: 8 link-disjoint chains, one per NIC, where only 7 rings fit). Channels come in
// rounds of one per NIC, each NIC sending one chain of the round out. Pass 1 as for rings: down
// the speed list, the most total bandwidth in whole rounds kept, then fast channels split.

std::vector<std::vector<RankId>> place_chains(const Topology &node, const Resources &start,
                                              int nics, double gbps, uint32_t shuffle,
                                              NcclPathType farthest) {
  const int gpus = node.num_ranks();
  auto nic_of = [&](int gpu) { return gpu * nics / gpus; };
  std::vector<std::vector<RankId>> whole, round;
  std::vector<bool> sends(size_t(nics), false);
  Resources res = start;
  while (int(whole.size() + round.size()) < kMaxGraphChannels) {
    const int first = int(round.size()) * gpus / nics;
    std::vector<int> members{first};
    for (int g = 0; g < gpus; ++g)
      if (g != first)
        members.push_back(g);
    auto chain = find_cycle(
        node, res, members, gbps, shuffle, [&](int last) { return !sends[size_t(nic_of(last))]; },
        farthest);
    if (!chain)
      break;
    for (LinkId l : *chain)
      res.take(l, gbps);
    std::vector<RankId> ranks = ranks_of(node, *chain);
    ranks.push_back(node.link(chain->back()).dst);
    sends[size_t(nic_of(ranks.back().value()))] = true;
    round.push_back(std::move(ranks));
    if (int(round.size()) == nics) {
      std::move(round.begin(), round.end(), std::back_inserter(whole));
      round.clear();
      sends.assign(size_t(nics), false);
    }
  }
  return whole;
}

std::optional<Placed<std::vector<RankId>>> search_chains(const Topology &node,
                                                         const std::vector<double> &link_gbps,
                                                         std::span<const double> speeds, int nics,
                                                         double widest) {
  const Resources start(node, link_gbps);
  const std::vector<NcclPathType> levels = path_levels(node, all_ranks(node));
  auto best = walk_speeds<std::vector<RankId>>(
      speeds, widest, levels.size(), [&](double gbps, size_t level) {
        std::vector<std::vector<RankId>> most;
        for (uint32_t attempt = 0; attempt < kPlacementAttempts; ++attempt)
          if (auto chains = place_chains(node, start, nics, gbps, attempt, levels[level]);
              chains.size() > most.size())
            most = std::move(chains);
        return most;
      });
  if (best)
    best->type = levels[best->level];
  // Split as rings are, in whole rounds: a chain twice at half the speed.
  if (best && best->gbps >= kSplitAtGbps &&
      best->channels.size() * 2 <= size_t(kMaxGraphChannels)) {
    const size_t n = best->channels.size();
    for (size_t c = 0; c < n; ++c)
      best->channels.push_back(best->channels[c]);
    best->gbps /= 2;
  }
  return best;
}

// Whether a node's only switch vertices are its host's sockets: its GPUs meet over links of their
// own or through the host (a fixed mesh, as DGX-1's cube-mesh or Frontier's xGMI cube), not
// through PCIe switches or an NVSwitch.
bool only_sockets(const Topology &node) {
  return std::all_of(node.switches().begin(), node.switches().end(),
                     [](const std::string &v) { return node_local_name(v).starts_with("cpu"); });
}

// Ranks 0 .. gpus - 1 of `t` with the links among them, and its relations cut down to those
// links (relations with none left dropped).
std::optional<Topology> first_node(const Topology &t, int gpus) {
  TopologyDraft d;
  d.name = t.name() + ".node0";
  d.num_ranks = gpus;
  // Node 0's switch vertices (PCIe bridges, sockets of a dumped node), by their names within it.
  std::vector<int> vertex(size_t(t.num_vertices()), -1);
  for (int r = 0; r < gpus; ++r)
    vertex[size_t(r)] = r;
  for (int k = 0; k < t.num_switches(); ++k)
    if (const std::string &name = t.switches()[size_t(k)]; name.starts_with("node0.")) {
      vertex[size_t(t.num_ranks() + k)] = gpus + int(d.switches.size());
      d.switches.emplace_back(node_local_name(name));
    }
  auto inside = [&](const Link &l) {
    return vertex[l.src.index()] >= 0 && vertex[l.dst.index()] >= 0;
  };
  auto local = [&](RankId v) { return RankId(vertex[v.index()]); };
  for (Link l : t.links())
    if (inside(l)) {
      l.src = local(l.src);
      l.dst = local(l.dst);
      d.links.push_back(l);
    }
  for (const BandwidthRelation &rel : t.relations()) {
    TopologyDraft::Relation r{rel.name, {}, rel.capacity, rel.sharing};
    for (LinkId id : rel.links)
      if (inside(t.link(id)))
        r.links.emplace_back(local(t.link(id).src), local(t.link(id).dst));
    if (!r.links.empty())
      d.relations.push_back(std::move(r));
  }
  auto node = Topology::create(std::move(d));
  SYNCOLL_INVARIANT(node.has_value(), "a node cut out of a valid topology is valid");
  return *std::move(node);
}

} // namespace

const SystemPreset *preset_of_node(const Topology &topology) {
  for (const SystemPreset &s : all_system_presets())
    if (s.node_topology == topology.name())
      return &s;
  // A node read from elsewhere (NCCL's own topology dump) under another name is still that
  // system's node when its links and relations are the same.
  for (const SystemPreset &s : all_system_presets()) {
    if (s.gpus_per_node != topology.num_ranks() || topology.num_switches() > 0)
      continue;
    auto node = make_library_topology(s.node_topology, {});
    if (node && node->links() == topology.links() && node->relations() == topology.relations())
      return &s;
  }
  return nullptr;
}

const GenerationTraits &nccl_generation_for(const Topology &topology) {
  const SystemPreset *preset = preset_of_node(topology);
  return generation_traits(preset ? preset->generation : GpuGeneration::Ampere);
}

int NcclRingGraph::runtime_channels() const {
  return std::min(kNcclMaxChannels, 2 * channels());
}

std::vector<std::vector<RankId>> NcclRingGraph::channel_rings(int count,
                                                              std::optional<RankId> root) const {
  std::vector<std::vector<RankId>> out;
  for (int c = 0; c < count; ++c) {
    out.push_back(rings[size_t(c % channels())]);
    if (root)
      std::rotate(out.back().begin(), std::find(out.back().begin(), out.back().end(), *root),
                  out.back().end());
  }
  return out;
}

std::vector<double> nccl_link_gbps(const Topology &t, const GenerationTraits &g) {
  const int gpus = t.hierarchy().empty() ? t.num_ranks() : t.hierarchy().levels.back().size;
  std::vector<double> out;
  for (const Link &l : t.links()) {
    const bool same_node =
        !t.is_switch(l.src) && !t.is_switch(l.dst) && l.src.value() / gpus == l.dst.value() / gpus;
    out.push_back(same_node ? l.bandwidth.value / g.nvlink_line_gbps * g.nccl_nvlink_gbps
                            : l.bandwidth.value);
  }
  return out;
}

double nccl_net_speed(const GenerationTraits &g, double share_gbps) {
  for (double s : g.nccl_inter_speeds)
    if (s <= share_gbps + 1e-9)
      return s;
  return g.nccl_inter_speeds.back();
}

namespace {

// Across nodes: channel c leaves and enters each node through NIC c mod NICs, as a chain that
// starts at a GPU of that NIC; each NIC's bandwidth is shared by the channels on it.
// Channels come in whole rounds over the NICs, so that every NIC carries as many.
NcclRingGraph across_nodes(NcclRingGraph graph, const GenerationTraits &g, const Hierarchy &h,
                           int gpus, int nodes) {
  const int nics = std::max(1, h.nics_per_node);
  if (graph.channels() > nics)
    graph.rings.resize(size_t(graph.channels() / nics * nics));
  const int per_nic = (graph.channels() + nics - 1) / nics;
  graph.inter_gbps = std::min(nccl_net_speed(g, h.nic_bandwidth.value / per_nic), graph.intra_gbps);
  for (int c = 0; c < graph.channels(); ++c) {
    std::vector<RankId> &ring = graph.rings[size_t(c)];
    const int first_gpu = (c % nics) * gpus / nics;
    auto at = std::find(ring.begin(), ring.end(), RankId(first_gpu));
    SYNCOLL_INVARIANT(at != ring.end(), "an intra-node ring misses a GPU");
    std::rotate(ring.begin(), at, ring.end());
    std::vector<RankId> global;
    for (int node = 0; node < nodes; ++node)
      for (RankId r : ring)
        global.emplace_back(node * gpus + r.value());
    ring = std::move(global);
  }
  return graph;
}

} // namespace

std::optional<NcclRingGraph> nccl_search_rings(const Topology &t, const GenerationTraits &g,
                                               const NcclSearchHost &host) {
  const std::vector<double> link_gbps = nccl_link_gbps(t, g);
  const Hierarchy &h = t.hierarchy();
  const int gpus = h.empty() ? t.num_ranks() : h.levels.back().size;
  const int nodes = t.num_ranks() / gpus;
  std::vector<int> node0;
  for (int r = 0; r < gpus; ++r)
    node0.push_back(r);
  NcclRingGraph graph;
  graph.nodes = nodes;
  if (gpus == 1) {
    graph.rings.assign(size_t(std::max(1, h.nics_per_node)), {RankId(0)});
    graph.intra_gbps = g.nccl_intra_speeds.front();
  } else {
    const double widest = *std::max_element(link_gbps.begin(), link_gbps.end());
    // The search runs on node 0 alone: its links and the relations over them.
    const std::optional<Topology> node = nodes > 1 ? first_node(t, gpus) : std::nullopt;
    const Topology &searched = node ? *node : t;
    const std::vector<double> searched_gbps = node ? nccl_link_gbps(*node, g) : link_gbps;
    if (node && node->relations().empty() && only_sockets(*node)) {
      auto chains = search_chains(*node, searched_gbps, g.nccl_intra_speeds,
                                  std::max(1, h.nics_per_node), widest);
      if (chains) {
        graph.rings = std::move(chains->channels);
        graph.intra_gbps = chains->gbps;
        graph.chains = true;
        graph.type_intra = chains->type;
        return across_nodes(std::move(graph), g, h, gpus, nodes);
      }
    }
    auto found = search(searched, searched_gbps, g.nccl_intra_speeds, node0, widest, host);
    if (!found)
      return std::nullopt;
    for (const auto &ring : found->channels)
      graph.rings.push_back(ranks_of(searched, ring));
    graph.intra_gbps = found->gbps;
    graph.type_intra = found->type;
  }
  graph.inter_gbps = graph.intra_gbps;
  if (nodes == 1)
    return graph;
  return across_nodes(std::move(graph), g, h, gpus, nodes);
}

} // namespace syncoll::nccl
