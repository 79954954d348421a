#include "synth/symmetry.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace syncoll::synth {
namespace {

using RankPairs = std::vector<std::pair<int, int>>;

struct ChunkClass {
  std::vector<int> pre, post;
  bool reduced = false;
  auto operator<=>(const ChunkClass &) const = default;
};

class SymmetrySearch {
public:
  SymmetrySearch(const Topology &t, const CollectiveSpec &c, std::int64_t budget)
      : t_(t), c_(c), P_(t.num_ranks()), budget_(budget), cap_(size_t(P_) * size_t(P_), 0),
        invariant_(size_t(P_)) {
    for (const Link &l : t.links()) {
      cap_[size_t(l.src.value()) * size_t(P_) + size_t(l.dst.value())] = l.capacity;
      invariant_[l.src.index()].first.push_back(l.capacity);
      invariant_[l.dst.index()].second.push_back(l.capacity);
    }
    for (auto &[out, in] : invariant_) {
      std::sort(out.begin(), out.end());
      std::sort(in.begin(), in.end());
    }
    // A rank's role in the collective is kept too (a root goes to a root): count the chunks
    // it starts and ends with, as two entries after a separator.
    std::vector<int> starts(size_t(P_), 0), ends(size_t(P_), 0);
    for (int ch = 0; ch < c.num_chunks(); ++ch) {
      for (const ChunkPlace &p : c.chunk(ChunkId(ch)).pre)
        ++starts[p.rank.index()];
      for (const ChunkPlace &p : c.chunk(ChunkId(ch)).post)
        ++ends[p.rank.index()];
    }
    for (int n = 0; n < P_; ++n)
      invariant_[size_t(n)].second.insert(invariant_[size_t(n)].second.end(),
                                          {-1, starts[size_t(n)], ends[size_t(n)]});
    for (const BandwidthRelation &r : t.relations())
      relations_.insert({r.capacity, pairs_of(r, nullptr)});
    for (int ch = 0; ch < c.num_chunks(); ++ch) {
      const ChunkSpec &spec = c.chunk(ChunkId(ch));
      ChunkClass k;
      for (const ChunkPlace &p : spec.pre)
        k.pre.push_back(p.rank.value());
      for (const ChunkPlace &p : spec.post)
        k.post.push_back(p.rank.value());
      k.reduced = spec.reduced;
      normalize(k);
      classes_[k].push_back(ch);
    }
  }

  SymmetryGroup run() {
    SymmetryGroup group;
    for (int i = 0; i < P_; ++i) {
      std::uint64_t orbit = 1;
      for (int j = 0; j < P_; ++j) {
        if (j <= i)
          continue; // ranks 0..i-1 are fixed, and i -> i is the identity's
        image_.assign(size_t(P_), -1);
        used_.assign(size_t(P_), false);
        bool ok = true;
        for (int k = 0; k < i && ok; ++k)
          ok = assign(k, k);
        if (ok && assign(i, j) && extend(i + 1)) {
          group.generators.push_back(found_);
          ++orbit;
        }
        if (budget_ < 0)
          group.complete = false;
      }
      group.order = orbit > 0 && group.order > (std::uint64_t(1) << 63) / orbit
                        ? std::uint64_t(1) << 63
                        : group.order * orbit;
    }
    return group;
  }

private:
  static void normalize(ChunkClass &k) {
    std::sort(k.pre.begin(), k.pre.end());
    k.pre.erase(std::unique(k.pre.begin(), k.pre.end()), k.pre.end());
    std::sort(k.post.begin(), k.post.end());
    k.post.erase(std::unique(k.post.begin(), k.post.end()), k.post.end());
  }

  RankPairs pairs_of(const BandwidthRelation &r, const std::vector<int> *image) const {
    RankPairs pairs;
    for (LinkId l : r.links) {
      const Link &link = t_.link(l);
      int a = link.src.value(), b = link.dst.value();
      if (image) {
        a = (*image)[size_t(a)];
        b = (*image)[size_t(b)];
      }
      pairs.emplace_back(a, b);
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
  }

  int cap(int a, int b) const { return cap_[size_t(a) * size_t(P_) + size_t(b)]; }

  // Rank n goes to rank m, if that keeps every link between assigned ranks.
  bool assign(int n, int m) {
    if (used_[size_t(m)] || invariant_[size_t(n)] != invariant_[size_t(m)])
      return false;
    for (int k = 0; k < P_; ++k) {
      const int km = image_[size_t(k)];
      if (km < 0)
        continue;
      if (cap(k, n) != cap(km, m) || cap(n, k) != cap(m, km))
        return false;
    }
    if (cap(n, n) != cap(m, m))
      return false;
    image_[size_t(n)] = m;
    used_[size_t(m)] = true;
    return true;
  }
  void unassign(int n) {
    used_[size_t(image_[size_t(n)])] = false;
    image_[size_t(n)] = -1;
  }

  bool extend(int n) {
    if (--budget_ < 0)
      return false;
    if (n == P_)
      return complete_symmetry();
    for (int m = 0; m < P_; ++m) {
      if (!assign(n, m))
        continue;
      if (extend(n + 1)) {
        unassign(n);
        return true;
      }
      unassign(n);
      if (budget_ < 0)
        return false;
    }
    return false;
  }

  // The links are kept; the relations and the collective must be too.
  bool complete_symmetry() {
    for (const BandwidthRelation &r : t_.relations())
      if (!relations_.contains({r.capacity, pairs_of(r, &image_)}))
        return false;
    found_.rank_image = image_;
    found_.chunk_image.assign(size_t(c_.num_chunks()), -1);
    for (const auto &[k, chunks] : classes_) {
      ChunkClass mapped = k;
      for (int &n : mapped.pre)
        n = image_[size_t(n)];
      for (int &n : mapped.post)
        n = image_[size_t(n)];
      normalize(mapped);
      auto to = classes_.find(mapped);
      if (to == classes_.end() || to->second.size() != chunks.size())
        return false;
      for (size_t i = 0; i < chunks.size(); ++i)
        found_.chunk_image[size_t(chunks[i])] = to->second[i];
    }
    return true;
  }

  const Topology &t_;
  const CollectiveSpec &c_;
  int P_;
  std::int64_t budget_;
  std::vector<int> cap_;
  std::vector<std::pair<std::vector<int>, std::vector<int>>>
      invariant_; ///< out, in capacities; roles
  std::set<std::pair<int, RankPairs>> relations_;
  std::map<ChunkClass, std::vector<int>> classes_;
  std::vector<int> image_;
  std::vector<bool> used_;
  InstanceSymmetry found_;
};

} // namespace

SymmetryGroup instance_symmetries(const Topology &topology, const CollectiveSpec &collective,
                                  std::int64_t node_budget) {
  return SymmetrySearch(topology, collective, node_budget).run();
}

} // namespace syncoll::synth
