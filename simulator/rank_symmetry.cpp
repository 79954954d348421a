#include "simulator/rank_symmetry.h"

#include "model/invariant.h"
#include "simulator/routes.h"

#include <algorithm>
#include <fmt/format.h>

namespace syncoll::simulator {
namespace {

// The fields of a step that take time: which operation, how many chunks, what it waits for and
// whether others wait for it. Buffers and offsets only say where the data goes.
bool same_timing(const Instruction &a, const Instruction &b) {
  return a.op == b.op && a.count == b.count && a.has_dep == b.has_dep &&
         a.dependency.has_value() == b.dependency.has_value() &&
         (!a.dependency ||
          (a.dependency->tb == b.dependency->tb && a.dependency->step == b.dependency->step));
}

// Whether two step lists time alike, walking their runs side by side (the runs of two ranks may
// break at different steps, where their offsets wrap around differently).
bool same_timing(const StepList &x, const StepList &y) {
  if (x.size() != y.size())
    return false;
  const std::span<const StepRun> rx = x.runs(), ry = y.runs();
  size_t i = 0, j = 0;
  int at_x = 0, at_y = 0;
  while (i < rx.size() && j < ry.size()) {
    const StepRun &a = rx[i], &b = ry[j];
    const Instruction ia = a.at(at_x), ib = b.at(at_y);
    if (!same_timing(ia, ib))
      return false;
    const int length = std::min(a.length - at_x, b.length - at_y);
    if (length > 1 && ia.dependency && a.dependency_stride != b.dependency_stride)
      return false;
    if ((at_x += length) == a.length)
      ++i, at_x = 0;
    if ((at_y += length) == b.length)
      ++j, at_y = 0;
  }
  return true;
}

class ShiftCheck {
public:
  ShiftCheck(const Program &p, const Topology &t, const CostModel &m, int k)
      : p_(p), t_(t), m_(m), k_(k), n_(p.num_ranks()) {}

  RankId image(RankId v) const { return t_.is_switch(v) ? v : RankId((v.value() + k_) % n_); }

  bool start_times_alike() const {
    const auto skew = [&](int r) {
      return size_t(r) < m_.start_skew.size() ? m_.start_skew[size_t(r)] : Picoseconds(0);
    };
    for (int r = k_; r < n_; ++r)
      if (skew(r) != skew(r - k_))
        return false;
    return true;
  }

  bool program_alike() const {
    for (int r = k_; r < n_; ++r) {
      const RankProgram &from = p_.rank(RankId(r - k_)), &to = p_.rank(RankId(r));
      if (from.thread_blocks.size() != to.thread_blocks.size())
        return false;
      for (size_t b = 0; b < from.thread_blocks.size(); ++b) {
        const ThreadBlock &x = from.thread_blocks[b], &y = to.thread_blocks[b];
        const auto peer_alike = [&](const std::optional<RankId> &a,
                                    const std::optional<RankId> &c) {
          return a.has_value() == c.has_value() && (!a || image(*a) == *c);
        };
        if (x.channel != y.channel || !peer_alike(x.send_peer, y.send_peer) ||
            !peer_alike(x.recv_peer, y.recv_peer) || !same_timing(x.steps, y.steps))
          return false;
      }
    }
    return true;
  }

  // Each link's image under the shift, alike in every cost; false when one has none.
  bool links_alike(std::vector<LinkId> &image_of) const {
    image_of.clear();
    for (const Link &l : t_.links()) {
      const auto to = t_.find_link(image(l.src), image(l.dst));
      if (!to)
        return false;
      const Link &m = t_.link(*to);
      if (m.capacity != l.capacity || m.alpha != l.alpha || m.bandwidth != l.bandwidth)
        return false;
      image_of.push_back(*to);
    }
    return true;
  }

private:
  const Program &p_;
  const Topology &t_;
  const CostModel &m_;
  int k_, n_;
};

// The orbits of the links under the shift, numbered from the lowest link id, whose link stands
// for its orbit in the quotient; none when an orbit has fewer than n / k members (a link the shift
// keeps in place, which every rank would share).
struct LinkOrbits {
  std::vector<int32_t> orbit;         ///< per link
  std::vector<LinkId> representative; ///< per orbit
};

std::optional<LinkOrbits> link_orbits(const std::vector<LinkId> &image_of, int members) {
  LinkOrbits o;
  o.orbit.assign(image_of.size(), -1);
  for (size_t l = 0; l < image_of.size(); ++l) {
    if (o.orbit[l] >= 0)
      continue;
    int count = 0;
    size_t m = l;
    do {
      o.orbit[m] = int32_t(o.representative.size());
      m = image_of[m].index();
      ++count;
    } while (m != l);
    if (count != members)
      return std::nullopt;
    o.representative.push_back(LinkId(int32_t(l)));
  }
  return o;
}

// One relation of each orbit of the relations; none unless each maps onto a relation alike and
// holds links of different orbits.
std::optional<std::vector<size_t>> relation_representatives(const Topology &topology,
                                                            const std::vector<LinkId> &image_of,
                                                            const LinkOrbits &links) {
  const auto &relations = topology.relations();
  std::map<std::vector<LinkId>, size_t> relation_by_links;
  for (size_t r = 0; r < relations.size(); ++r)
    relation_by_links.emplace(relations[r].links, r);
  std::vector<size_t> image(relations.size());
  for (size_t r = 0; r < relations.size(); ++r) {
    std::vector<int32_t> orbits;
    std::vector<LinkId> moved;
    for (LinkId l : relations[r].links) {
      orbits.push_back(links.orbit[l.index()]);
      moved.push_back(image_of[l.index()]);
    }
    std::sort(orbits.begin(), orbits.end());
    std::sort(moved.begin(), moved.end());
    const auto to = relation_by_links.find(moved);
    if (std::adjacent_find(orbits.begin(), orbits.end()) != orbits.end() ||
        to == relation_by_links.end() || relations[to->second].capacity != relations[r].capacity ||
        relations[to->second].sharing != relations[r].sharing)
      return std::nullopt;
    image[r] = to->second;
  }
  std::vector<bool> seen(relations.size(), false);
  std::vector<size_t> representatives;
  for (size_t r = 0; r < relations.size(); ++r) {
    if (seen[r])
      continue;
    for (size_t m = r; !seen[m]; m = image[m])
      seen[m] = true;
    representatives.push_back(r);
  }
  return representatives;
}

// The quotient machine: every vertex, the representative links and relations (a relation's links
// by their orbits' representatives).
Topology quotient_machine(const Topology &topology, const LinkOrbits &links,
                          const std::vector<size_t> &relations) {
  TopologyDraft draft;
  draft.name = topology.name();
  draft.num_ranks = topology.num_ranks();
  draft.switches = topology.switches();
  draft.hierarchy = topology.hierarchy();
  for (LinkId l : links.representative)
    draft.links.push_back(topology.link(l));
  for (size_t r : relations) {
    const BandwidthRelation &rel = topology.relations()[r];
    TopologyDraft::Relation q{rel.name, {}, rel.capacity, rel.sharing};
    for (LinkId l : rel.links) {
      const Link &rep = topology.link(links.representative[size_t(links.orbit[l.index()])]);
      q.links.emplace_back(rep.src, rep.dst);
    }
    draft.relations.push_back(std::move(q));
  }
  auto quotient = Topology::create(std::move(draft));
  SYNCOLL_INVARIANT(quotient.has_value(), "the quotient of a valid topology is valid");
  return std::move(*quotient);
}

} // namespace

std::optional<RankSymmetry> RankSymmetry::find(const Program &program, const Topology &topology,
                                               const CostModel &model) {
  const int n = program.num_ranks();
  if (n != topology.num_ranks() || n < 2)
    return std::nullopt;
  std::vector<int> shifts{1};
  if (topology.ranks_per_node() > 1)
    shifts.push_back(topology.ranks_per_node());
  for (int k : shifts) {
    if (k >= n || n % k != 0)
      continue;
    const ShiftCheck check(program, topology, model, k);
    if (!check.start_times_alike() || !check.program_alike())
      continue;
    std::vector<LinkId> image_of;
    if (!check.links_alike(image_of))
      continue;
    const auto links = link_orbits(image_of, n / k);
    if (!links)
      continue;
    const auto relations = relation_representatives(topology, image_of, *links);
    if (!relations)
      continue;
    RankSymmetry s;
    s.shift_ = k;
    s.ranks_ = n;
    s.quotient_ = quotient_machine(topology, *links, *relations);
    for (size_t l = 0; l < image_of.size(); ++l) {
      const Link &rep = topology.link(links->representative[size_t(links->orbit[l])]);
      s.link_of_.push_back(*s.quotient_->find_link(rep.src, rep.dst));
    }
    if (s.take_routes(program, topology, model))
      return s;
  }
  return std::nullopt;
}

bool RankSymmetry::take_routes(const Program &program, const Topology &topology,
                               const CostModel &model) {
  std::vector<bool> fair(topology.links().size(), false);
  for (const BandwidthRelation &rel : topology.relations())
    if (rel.sharing == RelationSharing::Fair)
      for (LinkId l : rel.links)
        fair[l.index()] = true;
  Routes routes(topology);
  // Every connection's route is its canonical connection's, moved, over one booked link (the
  // fluid engine's rates follow the order in which it meets hops that start in one picosecond,
  // an order over every rank: in a run over every rank of NCCL's Alltoall on four nodes the first
  // node's links are busy half as long as the others'), and capped as it is: across nodes where
  // it is (so is its proxy's queue).
  const auto alike = [&](RankId src, RankId dst) {
    const std::span<const LinkId> full = routes.route(src, dst);
    const auto key = canonical(src, dst);
    if ((model.connection_gbps > 0 || model.proxy_message_cost > 0) &&
        crosses_nodes(topology, src, dst) != crosses_nodes(topology, key.first, key.second))
      return false;
    auto it = routes_.find({key.first.value(), key.second.value()});
    if (it == routes_.end()) {
      const std::span<const LinkId> route = routes.route(key.first, key.second);
      if (route.size() != 1 || fair[route.front().index()])
        return false;
      it = routes_
               .emplace(std::make_pair(key.first.value(), key.second.value()),
                        link_of_[route.front().index()])
               .first;
    }
    return full.size() == 1 && link_of_[full.front().index()] == it->second;
  };
  for (const RankProgram &rp : program.ranks())
    for (const ThreadBlock &tb : rp.thread_blocks)
      if ((tb.send_peer && !alike(rp.rank, *tb.send_peer)) ||
          (tb.recv_peer && !alike(*tb.recv_peer, rp.rank)))
        return false;
  return true;
}

std::pair<RankId, RankId> RankSymmetry::canonical(RankId src, RankId dst) const {
  const int down = src.value() - src.value() % shift_;
  return {RankId(src.value() - down), RankId((dst.value() - down + ranks_) % ranks_)};
}

std::span<const LinkId> RankSymmetry::route(RankId src, RankId dst) const {
  const auto it = routes_.find({src.value(), dst.value()});
  SYNCOLL_INVARIANT(it != routes_.end(), "a route asked of a connection the program lacks");
  return {&it->second, 1};
}

std::vector<TraceSpan> RankSymmetry::spread(std::vector<TraceSpan> spans, const Topology &machine,
                                            int link_thread) const {
  const size_t simulated = spans.size();
  const auto moved = [&](RankId v, int times) {
    return machine.is_switch(v) ? v : RankId((v.value() + times * shift_) % ranks_);
  };
  for (int times = 1; times < ranks_ / shift_; ++times)
    for (size_t i = 0; i < simulated; ++i) {
      TraceSpan span = spans[i];
      span.process = moved(RankId(span.process), times).value();
      if (span.thread >= link_thread) {
        const Link &l = machine.link(LinkId(span.thread - link_thread));
        const RankId src = moved(l.src, times), dst = moved(l.dst, times);
        const auto image = machine.find_link(src, dst);
        SYNCOLL_INVARIANT(image.has_value(), "a link without an image under the symmetry");
        span.thread = link_thread + image->value();
        span.thread_name = fmt::format("link {}->{}", src.value(), dst.value());
      }
      spans.push_back(std::move(span));
    }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const TraceSpan &a, const TraceSpan &b) { return a.start < b.start; });
  return spans;
}

} // namespace syncoll::simulator
