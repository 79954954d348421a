// Transfers, lanes and paired connections (lanes.h).
#include "lowering/detail/lanes.h"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>
#include <unordered_map>

namespace syncoll::lowering::detail {

Expected<std::vector<Transfer>> transfers_of(const Algorithm &a, const Topology &t,
                                             const CollectiveSpec &c, std::vector<int> &per_step) {
  std::vector<Transfer> out;
  out.reserve(a.num_sends());
  per_step.clear();
  for (int s = 0; s < a.num_steps(); ++s) {
    for (const Send &x : a.steps[size_t(s)].sends) {
      const int src = x.src.value(), dst = x.dst.value(), chunk = x.chunk.value();
      if (src < 0 || src >= t.num_ranks() || dst < 0 || dst >= t.num_ranks())
        return fail({}, fmt::format("step {}: a send between ranks {} and {}; the topology has {}",
                                    s + 1, src, dst, t.num_ranks()));
      if (chunk < 0 || chunk >= c.num_chunks())
        return fail({}, fmt::format("step {}: chunk {} does not exist", s + 1, chunk));
      const std::optional<LinkId> link = t.find_link(x.src, x.dst);
      if (!link)
        return fail({}, fmt::format("step {}: no link from rank {} to rank {}", s + 1, src, dst));
      out.push_back({chunk, src, dst, x.op == SendOp::Reduce, int(link->index()), 0});
    }
    per_step.push_back(int(out.size()));
  }
  return out;
}

std::vector<int> initial_lanes(const Topology &t, const std::vector<Transfer> &transfers,
                               const std::vector<int> &per_step, int budget, int most,
                               int resident) {
  const size_t L = t.links().size();
  std::vector<int> total(L, 0), in_step(L, 0), busiest(L, 0), lanes(L, 0);
  size_t begin = 0;
  for (int end : per_step) {
    for (size_t i = begin; i < size_t(end); ++i)
      busiest[size_t(transfers[i].link)] =
          std::max(busiest[size_t(transfers[i].link)], ++in_step[size_t(transfers[i].link)]);
    for (size_t i = begin; i < size_t(end); ++i)
      in_step[size_t(transfers[i].link)] = 0;
    for (size_t i = begin; i < size_t(end); ++i)
      ++total[size_t(transfers[i].link)];
    begin = size_t(end);
  }
  std::vector<int> needed(L, 0);
  std::vector<int> per_rank(size_t(t.num_ranks()), 0);
  std::vector<std::vector<int>> touching(size_t(t.num_ranks()));
  for (size_t l = 0; l < L; ++l) {
    if (total[l] == 0)
      continue;
    needed[l] = std::clamp((total[l] + budget - 1) / budget, 1, most);
    lanes[l] = std::clamp(std::min(t.links()[l].capacity, busiest[l]), needed[l], most);
    for (RankId end : {t.links()[l].src, t.links()[l].dst}) {
      per_rank[end.index()] += lanes[l];
      touching[end.index()].push_back(int(l));
    }
  }
  for (size_t r = 0; r < per_rank.size(); ++r)
    while (per_rank[r] > resident) {
      int widest = -1;
      for (int l : touching[r])
        if (lanes[size_t(l)] > needed[size_t(l)] &&
            (widest < 0 || lanes[size_t(l)] > lanes[size_t(widest)]))
          widest = l;
      if (widest < 0)
        break;
      --lanes[size_t(widest)];
      --per_rank[t.links()[size_t(widest)].src.index()];
      --per_rank[t.links()[size_t(widest)].dst.index()];
    }
  return lanes;
}

void assign_lanes(std::vector<Transfer> &transfers, const std::vector<int> &lanes,
                  std::vector<int64_t> &sent) {
  sent.assign(lanes.size(), 0);
  for (Transfer &x : transfers)
    x.lane = int(sent[size_t(x.link)]++ % lanes[size_t(x.link)]);
}

std::vector<int> pair_connections(const Topology &t, int chunks,
                                  const std::vector<Transfer> &transfers,
                                  const std::vector<int> &per_step, const std::vector<int> &lanes,
                                  int budget) {
  const int G = chunks;
  const size_t L = t.links().size();
  std::vector<int> total(L, 0), in_step(L, 0), busiest(L, 0);
  std::vector<int32_t> arrived_on(size_t(t.num_ranks()) * size_t(G), -1);
  std::unordered_map<int64_t, int> forwarded; // (receiving link, sending link) -> transfers
  size_t begin = 0;
  for (int end : per_step) {
    for (size_t i = begin; i < size_t(end); ++i) {
      const Transfer &x = transfers[i];
      const size_t l = size_t(x.link);
      ++total[l];
      busiest[l] = std::max(busiest[l], ++in_step[l]);
      if (const int32_t from = arrived_on[size_t(x.src) * size_t(G) + size_t(x.chunk)]; from >= 0)
        ++forwarded[int64_t(from) * int64_t(L) + x.link];
    }
    for (size_t i = begin; i < size_t(end); ++i) {
      in_step[size_t(transfers[i].link)] = 0;
      arrived_on[size_t(transfers[i].dst) * size_t(G) + size_t(transfers[i].chunk)] =
          transfers[i].link;
    }
    begin = size_t(end);
  }
  struct Pair {
    int weight;
    int in, out;
  };
  std::vector<Pair> pairs;
  for (const auto &[key, weight] : forwarded) {
    const int in = int(key / int64_t(L)), out = int(key % int64_t(L));
    const int k = lanes[size_t(in)];
    const bool fits = k == lanes[size_t(out)] && busiest[size_t(in)] <= k &&
                      busiest[size_t(out)] <= k &&
                      (total[size_t(in)] + k - 1) / k + (total[size_t(out)] + k - 1) / k <= budget;
    if (fits)
      pairs.push_back({weight, in, out});
  }
  std::sort(pairs.begin(), pairs.end(), [](const Pair &x, const Pair &y) {
    return std::tie(y.weight, x.in, x.out) < std::tie(x.weight, y.in, y.out);
  });
  std::vector<int> sent_on(L, -1);
  std::vector<bool> out_taken(L, false);
  for (const Pair &p : pairs)
    if (sent_on[size_t(p.in)] < 0 && !out_taken[size_t(p.out)]) {
      sent_on[size_t(p.in)] = p.out;
      out_taken[size_t(p.out)] = true;
    }
  return sent_on;
}

} // namespace syncoll::lowering::detail
