#include "nccl/steps.h"

#include "model/text.h"
#include "nccl/algorithms.h"
#include "simulator/network.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <string>

namespace syncoll::nccl {

Expected<NcclRingSteps> NcclRingSteps::create(CollectiveKind kind,
                                              std::vector<std::vector<RankId>> rings) {
  if (kind != CollectiveKind::Allreduce && kind != CollectiveKind::Allgather &&
      kind != CollectiveKind::ReduceScatter)
    return fail({}, fmt::format("the streamed NCCL ring runs allreduce, allgather and "
                                "reducescatter, not {}",
                                collective_kind_name(kind)));
  if (rings.empty())
    return fail({}, "a ring schedule needs at least one channel");
  for (const auto &ring : rings)
    if (ring.size() != rings.front().size() || ring.size() < 2)
      return fail({}, "every channel's ring must have the same ranks, at least 2");
  return NcclRingSteps(kind, std::move(rings));
}

int NcclRingSteps::num_steps() const {
  return nccl_ring_steps(kind_, static_cast<int>(rings_.front().size()));
}

void NcclRingSteps::sends(int step, std::vector<Send> &out) const {
  out.clear();
  const int n = static_cast<int>(rings_.front().size());
  // Reduce-scatter steps first (Allreduce, ReduceScatter), then allgather steps.
  const bool reducing = kind_ == CollectiveKind::ReduceScatter ||
                        (kind_ == CollectiveKind::Allreduce && step < n - 1);
  const int s = reducing || kind_ == CollectiveKind::Allgather ? step : step - (n - 1);
  for (size_t c = 0; c < rings_.size(); ++c) {
    const std::vector<RankId> &ring = rings_[c];
    for (int i = 0; i < n; ++i) {
      const int chunk = (((reducing ? i - s : i + 1 - s) % n) + n) % n;
      out.push_back({ChunkId(static_cast<int32_t>(c) * n + chunk), ring[size_t(i)],
                     ring[size_t((i + 1) % n)], reducing ? SendOp::Reduce : SendOp::Copy});
    }
  }
}

int64_t NcclRingSteps::chunk_bytes(int64_t size_bytes) const {
  const int64_t parts = int64_t(rings_.size()) * int64_t(rings_.front().size());
  return std::max<int64_t>(1, size_bytes / parts);
}

void AlltoallSteps::sends(int, std::vector<Send> &out) const {
  out.clear();
  for (int r = 0; r < ranks_; ++r)
    for (int k = 1; k < ranks_; ++k) {
      const int to = (r + k) % ranks_;
      out.push_back({ChunkId(to), RankId(r), RankId(to), SendOp::Copy});
    }
}

int64_t AlltoallSteps::chunk_bytes(int64_t size_bytes) const {
  return std::max<int64_t>(1, size_bytes / ranks_);
}

Expected<NcclTreeSteps> NcclTreeSteps::create(std::vector<std::vector<int>> parents,
                                              int pipeline_chunks) {
  if (parents.empty())
    return fail({}, "a tree schedule needs at least one channel");
  if (pipeline_chunks < 1)
    return fail({}, fmt::format("pipeline chunks must be at least 1, got {}", pipeline_chunks));
  std::vector<Tree> trees;
  const size_t ranks = parents.front().size();
  for (std::vector<int> &parent : parents) {
    const int n = static_cast<int>(parent.size());
    if (parent.size() != ranks || n < 2)
      return fail({}, "every channel's tree must have the same ranks, at least 2");
    Tree t;
    t.children.resize(size_t(n));
    int root = -1;
    for (int v = 0; v < n; ++v) {
      if (parent[size_t(v)] == -1) {
        if (root >= 0)
          return fail({}, fmt::format("ranks {} and {} are both roots", root, v));
        root = v;
      } else if (parent[size_t(v)] < 0 || parent[size_t(v)] >= n || parent[size_t(v)] == v) {
        return fail({}, fmt::format("rank {} has parent {}", v, parent[size_t(v)]));
      } else {
        t.children[size_t(parent[size_t(v)])].push_back(v);
      }
    }
    if (root < 0)
      return fail({}, "a tree needs a root (parent -1)");
    // Depths from the root down, breadth first; a rank never reached is on a cycle.
    std::vector<int> depth(size_t(n), -1), order{root};
    depth[size_t(root)] = 0;
    for (size_t i = 0; i < order.size(); ++i)
      for (int child : t.children[size_t(order[i])]) {
        depth[size_t(child)] = depth[size_t(order[i])] + 1;
        order.push_back(child);
      }
    if (order.size() != size_t(n))
      return fail({}, "the parents form a cycle, not one tree");
    // Heights from the leaves up, in reverse breadth-first order.
    std::vector<int> height(size_t(n), 0);
    for (size_t i = order.size(); i-- > 1;) {
      const int v = order[i];
      height[size_t(parent[size_t(v)])] =
          std::max(height[size_t(parent[size_t(v)])], height[size_t(v)] + 1);
    }
    t.height = height[size_t(root)];
    t.height_of = std::move(height);
    t.depth_of = std::move(depth);
    t.parent = std::move(parent);
    trees.push_back(std::move(t));
  }
  return NcclTreeSteps(std::move(trees), pipeline_chunks);
}

int NcclTreeSteps::num_steps() const {
  int height = 0;
  for (const Tree &t : trees_)
    height = std::max(height, t.height);
  return chunks_ + 2 * height - 1;
}

void NcclTreeSteps::sends(int step, std::vector<Send> &out) const {
  out.clear();
  // Rank by rank, every channel of a rank together, so that a step's sends touch the links (and
  // their ports) one rank at a time.
  const size_t ranks = trees_.front().parent.size();
  for (size_t v = 0; v < ranks; ++v)
    for (size_t c = 0; c < trees_.size(); ++c) {
      const Tree &t = trees_[c];
      auto chunk = [&](int j) { return ChunkId(static_cast<int32_t>(c) * chunks_ + j); };
      const int up = step - t.height_of[v];
      if (t.parent[v] >= 0 && up >= 0 && up < chunks_)
        out.push_back(
            {chunk(up), RankId(static_cast<int32_t>(v)), RankId(t.parent[v]), SendOp::Reduce});
      const int down = step - t.height - t.depth_of[v];
      if (down >= 0 && down < chunks_)
        for (int child : t.children[v])
          out.push_back(
              {chunk(down), RankId(static_cast<int32_t>(v)), RankId(child), SendOp::Copy});
    }
}

bool NcclTreeSteps::repeats_previous(int step) const {
  // Every rank sends up and down in steps 2H - 1 .. chunks - 1 of a tree of height H.
  for (const Tree &t : trees_)
    if (step - 1 < 2 * t.height - 1 || step > chunks_ - 1)
      return false;
  return true;
}

int64_t NcclTreeSteps::chunk_bytes(int64_t size_bytes) const {
  return std::max<int64_t>(1, size_bytes / (int64_t(trees_.size()) * chunks_));
}

namespace {

// What the streamed ring leaves out of the thread-block program under `model`, or nothing.
std::optional<std::string> left_out_costs(const simulator::CostModel &model, Protocol protocol) {
  const size_t p = simulator::CostModel::index(protocol);
  if (model.message_latency[p] > 0)
    return "a per-message latency";
  if (model.thread_block_gbps[p] > 0)
    return "a thread block's copy bandwidth";
  if (model.connection_gbps > 0)
    return "a network connection's rate";
  if (model.proxy_message_cost > 0)
    return "a network proxy's cost per message";
  if (model.memory_gbps > 0)
    return "the memory bandwidth of reductions";
  if (model.launch > 0 || model.step_overhead > 0)
    return "a launch or per-step overhead";
  if (!model.start_skew.empty())
    return "ranks starting at different times";
  return std::nullopt;
}

// Two sends of `sends` on one link or one relation, as "link a->b" or "relation R", or nothing.
std::optional<std::string> shared_resource(const std::vector<Send> &sends, const Topology &topology,
                                           simulator::Network &network) {
  std::vector<int> per_link(topology.links().size(), 0);
  for (const Send &send : sends)
    for (LinkId link : network.route(send.src, send.dst))
      if (++per_link[link.index()] > 1) {
        const Link &l = topology.link(link);
        return fmt::format("link {}->{}", l.src.value(), l.dst.value());
      }
  for (const BandwidthRelation &relation : topology.relations()) {
    int sends_over = 0;
    for (LinkId link : relation.links)
      sends_over += per_link[link.index()];
    if (sends_over > relation.capacity)
      return fmt::format("relation {}", relation.name);
  }
  return std::nullopt;
}

// Two sends of `sends` whose routes differ in latency or bandwidth, as "a->b and c->d", or
// nothing. Lockstep makes every step as slow as its slowest send, where NCCL's ranks wait only
// for their predecessor: the two agree only when every send takes the same time.
std::optional<std::string> unlike_routes(const std::vector<Send> &sends, const Topology &topology,
                                         simulator::Network &network) {
  auto shape = [&](const Send &send) {
    std::vector<std::pair<Nanoseconds, BytesPerNs>> hops;
    for (LinkId link : network.route(send.src, send.dst))
      hops.emplace_back(topology.link(link).alpha, topology.link(link).bandwidth);
    return hops;
  };
  const auto first = shape(sends.front());
  for (const Send &send : sends)
    if (shape(send) != first)
      return fmt::format("{}->{} and {}->{}", sends.front().src.value(), sends.front().dst.value(),
                         send.src.value(), send.dst.value());
  return std::nullopt;
}

} // namespace

Expected<simulator::SimulationResult>
simulate_streamed_ring(const NcclRingSteps &ring, const Topology &topology, int64_t size_bytes,
                       const simulator::CostModel &model, Protocol protocol) {
  if (auto cost = left_out_costs(model, protocol))
    return fail({}, fmt::format("--streamed leaves out {}, which this cost model charges; drop "
                                "--streamed to run NCCL's thread-block program",
                                *cost));
  const int64_t chunk = ring.chunk_bytes(size_bytes);
  const int64_t piece = model.iteration_bytes[simulator::CostModel::index(protocol)];
  if (chunk > piece)
    return fail({}, fmt::format("--streamed moves a chunk as one message; at {} a chunk is {}, "
                                "which NCCL pipelines in pieces of {}: drop --streamed, or give "
                                "sizes up to {} or more --channels",
                                format_size(size_bytes), format_size(chunk), format_size(piece),
                                format_size(piece * (size_bytes / chunk))));
  simulator::Network network(topology, model.efficiency[simulator::CostModel::index(protocol)]);
  std::vector<Send> sends;
  ring.sends(0, sends); // every step sends between the same ranks
  for (const Send &send : sends)
    if (network.route(send.src, send.dst).empty())
      return fail({},
                  fmt::format("rank {} cannot reach rank {}", send.src.value(), send.dst.value()));
  if (auto shared = shared_resource(sends, topology, network))
    return fail({}, fmt::format("--streamed runs channels in lockstep; two sends of a step "
                                "share {}, where NCCL's channels fall out of step: give fewer "
                                "--channels or drop --streamed",
                                *shared));
  if (auto unlike = unlike_routes(sends, topology, network))
    return fail({}, fmt::format("--streamed runs a step at the pace of its slowest send, where "
                                "NCCL's ranks wait only for their predecessor; the ring's hops "
                                "{} differ in latency or bandwidth: drop --streamed",
                                *unlike));
  return simulator::simulate_steps(ring, topology, chunk,
                                   model.efficiency[simulator::CostModel::index(protocol)],
                                   model.switching);
}

} // namespace syncoll::nccl
