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

  // A connection between ranks of different nodes has the fabric's rate cap: a shift must keep
  // nodes whole.
  bool nodes_kept() const {
    const auto &levels = t_.hierarchy().levels;
    return m_.connection_gbps <= 0 || levels.size() < 2 || k_ % levels.back().size == 0;
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
    if (!check.start_times_alike() || !check.nodes_kept() || !check.program_alike())
      continue;
    std::vector<LinkId> image_of;
    if (!check.links_alike(image_of))
      continue;

    // Orbits of links: each must have all n / k members. Numbered from the lowest link id, whose
    // link stands for the orbit in the quotient.
    const size_t links = topology.links().size();
    std::vector<int32_t> orbit(links, -1);
    std::vector<LinkId> representative;
    bool free = true;
    for (size_t l = 0; l < links && free; ++l) {
      if (orbit[l] >= 0)
        continue;
      int members = 0;
      size_t m = l;
      do {
        orbit[m] = int32_t(representative.size());
        m = image_of[m].index();
        ++members;
      } while (m != l);
      representative.push_back(LinkId(int32_t(l)));
      free = members == n / k;
    }
    if (!free)
      continue;

    // Relations: each maps onto a relation alike, and holds links of different orbits.
    const auto &relations = topology.relations();
    std::map<std::vector<LinkId>, size_t> relation_by_links;
    for (size_t r = 0; r < relations.size(); ++r)
      relation_by_links.emplace(relations[r].links, r);
    std::vector<size_t> relation_image;
    std::vector<bool> fair(links, false);
    bool relations_alike = true;
    for (size_t r = 0; r < relations.size() && relations_alike; ++r) {
      std::vector<int32_t> orbits;
      std::vector<LinkId> moved;
      for (LinkId l : relations[r].links) {
        orbits.push_back(orbit[l.index()]);
        moved.push_back(image_of[l.index()]);
        fair[l.index()] = fair[l.index()] || relations[r].sharing == RelationSharing::Fair;
      }
      std::sort(orbits.begin(), orbits.end());
      std::sort(moved.begin(), moved.end());
      const auto to = relation_by_links.find(moved);
      relations_alike = std::adjacent_find(orbits.begin(), orbits.end()) == orbits.end() &&
                        to != relation_by_links.end() &&
                        relations[to->second].capacity == relations[r].capacity &&
                        relations[to->second].sharing == relations[r].sharing;
      relation_image.push_back(relations_alike ? to->second : r);
    }
    std::vector<bool> relation_seen(relations.size(), false);
    std::vector<size_t> relation_representative;
    for (size_t r = 0; r < relations.size() && relations_alike; ++r) {
      if (relation_seen[r])
        continue;
      for (size_t m = r; !relation_seen[m]; m = relation_image[m])
        relation_seen[m] = true;
      relation_representative.push_back(r);
    }
    if (!relations_alike)
      continue;

    // The quotient machine: every vertex, the representative links and relations.
    TopologyDraft draft;
    draft.name = topology.name();
    draft.num_ranks = n;
    draft.switches = topology.switches();
    draft.hierarchy = topology.hierarchy();
    for (LinkId l : representative)
      draft.links.push_back(topology.link(l));
    for (size_t r : relation_representative) {
      const BandwidthRelation &rel = relations[r];
      TopologyDraft::Relation q{rel.name, {}, rel.capacity, rel.sharing};
      for (LinkId l : rel.links) {
        const Link &rep = topology.link(representative[size_t(orbit[l.index()])]);
        q.links.emplace_back(rep.src, rep.dst);
      }
      draft.relations.push_back(std::move(q));
    }
    auto quotient = Topology::create(std::move(draft));
    SYNCOLL_INVARIANT(quotient.has_value(), "the quotient of a valid topology is valid");

    RankSymmetry s;
    s.shift_ = k;
    s.ranks_ = n;
    s.quotient_ = std::move(*quotient);
    for (size_t l = 0; l < links; ++l) {
      const Link &rep = topology.link(representative[size_t(orbit[l])]);
      s.link_of_.push_back(*s.quotient_->find_link(rep.src, rep.dst));
    }

    // Routes: every connection's route is its canonical connection's, moved; within one route
    // every hop lies in a different orbit.
    Routes routes(topology);
    bool routes_alike = true, fluid = false;
    const auto connection = [&](RankId src, RankId dst) {
      const std::span<const LinkId> full = routes.route(src, dst);
      const auto key = s.canonical(src, dst);
      auto it = s.routes_.find({key.first.value(), key.second.value()});
      if (it == s.routes_.end()) {
        std::vector<LinkId> mapped;
        for (LinkId l : routes.route(key.first, key.second)) {
          mapped.push_back(s.link_of_[l.index()]);
          fluid = fluid || fair[l.index()];
        }
        fluid = fluid || mapped.size() > 1;
        std::vector<LinkId> sorted = mapped;
        std::sort(sorted.begin(), sorted.end());
        routes_alike = routes_alike && !mapped.empty() &&
                       std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
        it = s.routes_.emplace(std::make_pair(key.first.value(), key.second.value()), mapped).first;
      }
      routes_alike = routes_alike && full.size() == it->second.size() &&
                     std::equal(full.begin(), full.end(), it->second.begin(),
                                [&](LinkId f, LinkId q) { return s.link_of_[f.index()] == q; });
    };
    for (const RankProgram &rp : program.ranks())
      for (const ThreadBlock &tb : rp.thread_blocks) {
        if (tb.send_peer)
          connection(rp.rank, *tb.send_peer);
        if (tb.recv_peer)
          connection(*tb.recv_peer, rp.rank);
        if (!routes_alike)
          break;
      }
    // The fluid engine's rates follow the order in which it meets hops that start at one
    // moment, and that order runs over every rank: in a full run of NCCL's Alltoall on four nodes
    // the first node's links are busy half as long as the others'. So only booked transfers.
    if (!routes_alike || fluid)
      continue;
    return s;
  }
  return std::nullopt;
}

std::pair<RankId, RankId> RankSymmetry::canonical(RankId src, RankId dst) const {
  const int down = src.value() - src.value() % shift_;
  return {RankId(src.value() - down), RankId((dst.value() - down + ranks_) % ranks_)};
}

std::span<const LinkId> RankSymmetry::route(RankId src, RankId dst) const {
  const auto it = routes_.find({src.value(), dst.value()});
  SYNCOLL_INVARIANT(it != routes_.end(), "a route asked of a connection the program lacks");
  return it->second;
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
