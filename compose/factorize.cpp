#include "compose/factorize.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>

namespace syncoll::compose {
namespace {

using lowering::Buffer;
using lowering::ChunkRef;
using lowering::DslProgram;

// Ranks in one group of each level (the outermost first).
std::vector<int> group_sizes(const Hierarchy &h, int ranks) {
  std::vector<int> out;
  for (int f : h.factors)
    out.push_back(ranks /= f);
  return out;
}

// The outermost level at which two ranks are in different groups (-1: the same rank).
int crossing_level(const std::vector<int> &group_size, int a, int b) {
  for (size_t l = 0; l < group_size.size(); ++l)
    if (a / group_size[l] != b / group_size[l])
      return int(l);
  return -1;
}

// One rank's place in one part's tree. The root appears once as the root and may appear again
// as a relay below a stripe holder; the two are separate nodes with separate storage.
struct Node {
  int rank = 0;
  int parent = -1;
  int depth = 0;
  int level = -1;      ///< hierarchy level of the hop from the parent
  bool member = false; ///< a receiver (multicast) or contributor (reduction) at this node
};

class TreeBuilder {
public:
  TreeBuilder(const Hierarchy &h, int ranks) : h_(h), group_size_(group_sizes(h, ranks)) {}

  // The tree of part `stripe` from `root` to `members`.
  std::vector<Node> build(int root, std::set<int> members, int stripe) const {
    std::vector<Node> nodes{{root, -1, 0, -1, members.erase(root) > 0}};
    int holder = 0;
    const int top = group_size_[0];
    if (h_.stripes > 1) {
      const int base = root / top * top;
      const int h = base + (root % top + stripe * (top / h_.stripes)) % top;
      if (h != root) {
        nodes.push_back({h, 0, 1, crossing(root, h), members.erase(h) > 0});
        holder = 1;
      }
    }
    top_level(nodes, holder, members);
    return nodes;
  }

private:
  const Hierarchy &h_;
  std::vector<int> group_size_; ///< group_size_[l]: ranks in one group of level l

  int crossing(int a, int b) const { return crossing_level(group_size_, a, b); }

  // Across the outermost level: the groups with members, in ring order from the holder's, cut
  // into `ring_nodes` segments; segment leaders form a chain, the rest of a segment hangs off its
  // leader.
  void top_level(std::vector<Node> &nodes, int holder, std::set<int> members) const {
    const int size = group_size_[0], groups = h_.factors[0];
    const int hr = nodes[size_t(holder)].rank, home = hr / size;
    std::map<int, std::set<int>> by_group;
    for (int m : members)
      by_group[m / size].insert(m);
    std::vector<int> order{home};
    for (int k = 1; k < groups; ++k)
      if (by_group.count((home + k) % groups))
        order.push_back((home + k) % groups);
    const int segments = std::min<int>(h_.ring_nodes, int(order.size()));
    std::vector<int> group_node(order.size(), -1);
    group_node[0] = holder;
    int leader = holder;
    for (int s = 0; s < segments; ++s) {
      const size_t lo = order.size() * size_t(s) / size_t(segments);
      const size_t hi = order.size() * size_t(s + 1) / size_t(segments);
      for (size_t i = lo; i < hi; ++i) {
        if (i == 0)
          continue;
        const int rep = order[i] * size + hr % size;
        const int parent = i == lo ? leader : group_node[lo];
        nodes.push_back({rep, parent, nodes[size_t(parent)].depth + 1,
                         crossing(nodes[size_t(parent)].rank, rep),
                         by_group[order[i]].erase(rep) > 0});
        group_node[i] = int(nodes.size()) - 1;
      }
      leader = group_node[lo];
    }
    for (size_t i = 0; i < order.size(); ++i)
      within(nodes, group_node[i], 1, by_group[order[i]]);
  }

  // Inside a group of level `level - 1`: one representative per subgroup with members, at the
  // holder's position, fed by the holder; then each subgroup alike.
  void within(std::vector<Node> &nodes, int holder, int level, std::set<int> members) const {
    if (members.empty() || level >= int(group_size_.size()))
      return;
    const int size = group_size_[size_t(level)];
    const int hr = nodes[size_t(holder)].rank;
    std::map<int, std::set<int>> by_sub;
    for (int m : members)
      by_sub[m / size].insert(m);
    for (auto &[sub, in_sub] : by_sub) {
      if (sub == hr / size) {
        in_sub.erase(hr);
        within(nodes, holder, level + 1, in_sub);
        continue;
      }
      const int rep = sub * size + hr % size;
      nodes.push_back(
          {rep, holder, nodes[size_t(holder)].depth + 1, crossing(hr, rep), in_sub.erase(rep) > 0});
      within(nodes, int(nodes.size()) - 1, level + 1, in_sub);
    }
  }
};

// Channels a lane cycles through by stage. Two would keep a relay's receive and forward apart;
// more keep hops of nearby stages that share a connection on channels of their own, so that the
// scheduler never has to order one connection's messages differently on its two sides.
constexpr int kStageChannels = 4;

// Hops one connection's thread block may carry before stripes spread over lanes (the executor
// holds 64 steps in a thread block; fused and local steps take a few more).
constexpr int kStepsPerConnection = 56;

// The wavefront: every DSL operation with the step it is emitted at, run in step order.
struct Pending {
  int time;
  int sequence;
  std::function<Expected<void>()> emit;
};

class Emitter {
public:
  explicit Emitter(DslProgram &program) : p_(program) {}

  std::vector<Hop> hops;
  int steps = 0;
  /// Stages of earlier epochs: stages are numbered across epochs, so that the value an epoch
  /// ends with is not forwarded on the channel it arrived on.
  int channel_base = 0;
  int lane = 0;

  // One part of a primitive: `prim`'s slices are the part's chunks.
  // `depth`: the deepest tree of the epoch. Every reduction of the epoch ends at that stage, so
  // that what the epoch leaves is forwarded by the next on the other channel of the pair.
  void add(const Primitive &prim, int start, const std::vector<Node> &tree, int depth) {
    const int count = prim.source.count;
    if (prim.kind == PrimitiveKind::Multicast)
      multicast(prim, tree, start, prim.source.offset, prim.target.offset, count);
    else
      reduction(prim, tree, start, prim.source.offset, prim.target.offset, count, depth);
  }

  Expected<void> run() {
    std::stable_sort(pending_.begin(), pending_.end(), [](const Pending &a, const Pending &b) {
      return std::tie(a.time, a.sequence) < std::tie(b.time, b.sequence);
    });
    for (Pending &op : pending_)
      SYNCOLL_CHECK(op.emit());
    return {};
  }

  int finish_time() const { return last_time_; }

private:
  DslProgram &p_;
  std::vector<Pending> pending_;
  std::map<int, int> relay_next_; ///< next free chunk of each rank's relay scratch
  int last_time_ = 0;

  void schedule(int time, int from, int to, int level, int stage, bool reduces,
                std::function<Expected<void>()> emit) {
    pending_.push_back({time, int(pending_.size()), std::move(emit)});
    hops.push_back({reduces, from, to, level, stage, time,
                    from == to ? -1 : on_channel(stage).channel.value_or(-1)});
    last_time_ = std::max(last_time_, time);
    steps = std::max(steps, time + 1);
  }

  // Consecutive stages go on different channels (kStageChannels per lane, cycled): a relay's
  // receive and its forward then stay in thread blocks of their own, because the fusion pass
  // joins a receive and a send only on one channel. A thread block that both forwards and sends
  // its own parts on one connection holds the FIFO while it waits, and a ring of them deadlocks
  // (the verifier finds the cycle). Stripes may also spread over lanes, so that no connection's
  // thread block carries every part (the executor holds at most 64 steps in one).
  lowering::CopyOptions on_channel(int stage) const {
    lowering::CopyOptions o;
    o.channel = lane * kStageChannels + (channel_base + stage) % kStageChannels;
    return o;
  }

  // Local copies take turns over kLocalLanes thread blocks of their own (a thread block copies
  // at a bounded rate, and the parts of a stripe's copies are independent), a new set of them
  // every kLocalSteps copies each (the executor holds at most 64 steps in a thread block).
  static constexpr int kLocalLanes = 8, kLocalSteps = 48;
  lowering::CopyOptions local_lane(int rank) {
    const int k = local_count_[rank]++;
    lowering::CopyOptions o;
    o.send_tb = o.recv_tb =
        100'000 + k % kLocalLanes + kLocalLanes * (k / (kLocalLanes * kLocalSteps));
    return o;
  }
  std::map<int, int> local_count_;

  // Where a node keeps the part: its receive slice when it is the target, else fresh relay
  // scratch.
  std::pair<Buffer, int> relay(int rank, int count) {
    const int at = relay_next_[rank];
    relay_next_[rank] += count;
    return {Buffer::named("relay"), at};
  }

  using Place = std::pair<Buffer, int>; ///< a buffer and its first chunk on some rank

  // `to` on rank `to_rank` := (or, reducing, (+)=) `from` on rank `from_rank`, `count` chunks.
  void transfer(int time, int from_rank, Place from, int to_rank, Place to, int count, int level,
                int stage, bool reduces, lowering::CopyOptions options) {
    schedule(time, from_rank, to_rank, level, stage, reduces,
             [this, from_rank, from, to_rank, to, count, reduces, options]() -> Expected<void> {
               SYNCOLL_TRY(src, p_.chunk(from_rank, from.first, from.second, count));
               if (!reduces) {
                 SYNCOLL_TRY(copied, p_.copy(src, to_rank, to.first, to.second, options));
                 (void)copied;
                 return {};
               }
               SYNCOLL_TRY(acc, p_.chunk(to_rank, to.first, to.second, count));
               SYNCOLL_TRY(reduced, p_.reduce(acc, src, options));
               (void)reduced;
               return {};
             });
  }

  void multicast(const Primitive &prim, const std::vector<Node> &tree, int start, int src_index,
                 int dst_index, int count) {
    // Each node's copy of the part, filled in as the tree is walked (parents come first).
    std::vector<Place> held(tree.size());
    const Buffer source =
        prim.source.buffer == BufferKind::Input ? Buffer::input() : Buffer::output();
    held[0] = {source, src_index};
    if (tree[0].member && !(prim.source.buffer == BufferKind::Output && src_index == dst_index))
      transfer(start, tree[0].rank, held[0], tree[0].rank, {Buffer::output(), dst_index}, count, -1,
               0, false, local_lane(tree[0].rank));
    for (size_t n = 1; n < tree.size(); ++n) {
      const Node &node = tree[n];
      held[n] = node.member ? Place{Buffer::output(), dst_index} : relay(node.rank, count);
      const Node &parent = tree[size_t(node.parent)];
      transfer(start + node.depth, parent.rank, held[size_t(node.parent)], node.rank, held[n],
               count, node.level, node.depth, false, on_channel(node.depth));
    }
  }

  // Values flow from the leaves to the root: a node combines its own part (when it contributes)
  // with its children's, in a relay accumulator (the receive slice at the root).
  void reduction(const Primitive &prim, const std::vector<Node> &tree, int start, int src_index,
                 int dst_index, int count, int depth) {
    std::vector<std::vector<int>> children(tree.size());
    for (size_t n = 1; n < tree.size(); ++n)
      children[size_t(tree[n].parent)].push_back(int(n));
    const Buffer source =
        prim.source.buffer == BufferKind::Input ? Buffer::input() : Buffer::output();
    // value[n]: where node n's combined value is when its parent reads it (children first).
    std::vector<Place> value(tree.size());
    std::vector<int> order(tree.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return tree[size_t(a)].depth > tree[size_t(b)].depth; });
    for (int n : order) {
      const Node &node = tree[size_t(n)];
      const int finished = start + depth - node.depth; // when node n's children are all in
      const std::vector<int> &inputs = children[size_t(n)];
      const bool root = n == 0;
      if (inputs.empty() && !root) {
        SYNCOLL_INVARIANT(node.member, "a reduction leaf that contributes nothing");
        value[size_t(n)] = {source, src_index};
        continue;
      }
      value[size_t(n)] = root ? Place{Buffer::output(), dst_index} : relay(node.rank, count);
      // The accumulator starts as the node's own part, or the first child's.
      if (node.member)
        transfer(std::max(start, finished - 1), node.rank, {source, src_index}, node.rank,
                 value[size_t(n)], count, -1, 0, false, local_lane(node.rank));
      for (int c : inputs) {
        const bool copies = !node.member && c == inputs.front();
        const Node &child = tree[size_t(c)];
        const int stage = depth - child.depth + 1;
        transfer(finished, child.rank, value[size_t(c)], node.rank, value[size_t(n)], count,
                 child.level, stage, !copies, on_channel(stage));
      }
    }
  }
};

constexpr std::pair<Transport, std::string_view> kTransportNames[] = {
    {Transport::Auto, "auto"}, {Transport::P2p, "p2p"}, {Transport::Net, "net"}};

Transport transport_at(const Hierarchy &h, int level) {
  return h.transports.empty() ? Transport::Auto : h.transports[size_t(level)];
}

// The topology less the in-node links between ranks that meet at a Net level.
Topology plan_topology(const Topology &topology, const Hierarchy &h) {
  if (std::find(h.transports.begin(), h.transports.end(), Transport::Net) == h.transports.end())
    return topology;
  const std::vector<int> sizes = group_sizes(h, topology.num_ranks());
  const int node = topology.ranks_per_node();
  auto unused = [&](RankId a, RankId b) {
    if (topology.is_switch(a) || topology.is_switch(b) || a.value() / node != b.value() / node)
      return false;
    return transport_at(h, crossing_level(sizes, a.value(), b.value())) == Transport::Net;
  };
  TopologyDraft draft = topology.to_draft();
  std::erase_if(draft.links, [&](const Link &l) { return unused(l.src, l.dst); });
  for (TopologyDraft::Relation &r : draft.relations)
    std::erase_if(r.links, [&](const auto &ends) { return unused(ends.first, ends.second); });
  std::erase_if(draft.relations, [](const TopologyDraft::Relation &r) { return r.links.empty(); });
  auto out = Topology::create(std::move(draft));
  SYNCOLL_INVARIANT(out.has_value(), "removing links made a valid topology invalid");
  return std::move(*out);
}

// Whether `hop` travels as its level's transport allows on the plan's topology.
Expected<void> check_transport(const Hop &hop, const Hierarchy &h, const Topology &plan, int node) {
  const RankId from(hop.from), to(hop.to);
  const bool same_node = hop.from / node == hop.to / node;
  const Transport t = transport_at(h, hop.level);
  const std::string_view name = transport_name(t);
  switch (t) {
  case Transport::P2p:
    if (!same_node || !plan.find_link(from, to))
      return fail({}, fmt::format("level {} uses {}, but ranks {} and {} {}", hop.level, name,
                                  hop.from, hop.to,
                                  same_node ? "have no link between them"
                                            : "are in different nodes (p2p stays inside a node)"));
    return {};
  case Transport::Net:
  case Transport::Auto:
    if (!plan.reaches(from, to))
      return fail({}, fmt::format("level {} uses {}, but rank {} cannot reach rank {}{}", hop.level,
                                  name, hop.from, hop.to,
                                  t == Transport::Net && same_node
                                      ? " through the network (they share a node, and the "
                                        "topology has no switch fabric to route them through)"
                                      : ""));
    return {};
  }
  SYNCOLL_UNREACHABLE("a transport without a case");
}

} // namespace

std::string_view transport_name(Transport transport) {
  for (const auto &[t, name] : kTransportNames)
    if (t == transport)
      return name;
  SYNCOLL_UNREACHABLE("a transport without a name");
}

std::optional<Transport> parse_transport(std::string_view name) {
  for (const auto &[t, known] : kTransportNames)
    if (known == name)
      return t;
  return std::nullopt;
}

Expected<Hierarchy> checked(Hierarchy h, int ranks) {
  if (h.factors.empty())
    h.factors = {ranks};
  int product = 1;
  for (int f : h.factors) {
    if (f < 1)
      return fail({}, fmt::format("hierarchy factor {} is not a positive group count", f));
    product *= f;
  }
  if (product != ranks)
    return fail(
        {}, fmt::format("hierarchy factors multiply to {}, not to the {} ranks", product, ranks));
  const int top = ranks / h.factors[0];
  if (h.stripes < 1 || top % h.stripes != 0)
    return fail({}, fmt::format("{} stripes do not divide the {} ranks of a top-level group",
                                h.stripes, top));
  if (h.ring_nodes < 1 || h.ring_nodes > h.factors[0])
    return fail({}, fmt::format("ring nodes {} outside 1..{} (the top-level groups)", h.ring_nodes,
                                h.factors[0]));
  if (h.pipeline < 1)
    return fail({}, fmt::format("pipeline depth {} is below 1", h.pipeline));
  if (!h.transports.empty() && h.transports.size() != h.factors.size())
    return fail({}, fmt::format("{} transports for {} levels (one per level, outermost first)",
                                h.transports.size(), h.factors.size()));
  return h;
}

Expected<Factorized> factorize(const Composition &composition, const CollectiveSpec &collective,
                               const Hierarchy &hierarchy, const Topology &topology,
                               lowering::DslOptions options) {
  const int ranks = composition.num_ranks();
  SYNCOLL_TRY(h, checked(hierarchy, ranks));
  const int parts = h.stripes * h.pipeline;
  const Composition refined = composition.refined(parts);
  SYNCOLL_TRY(computed, refined.specification(collective.name()));
  // The DSL program implements the standard collective (so it is emitted under its name) when the
  // composition computes it, else the derived specification.
  CollectiveSpec target = computed;
  if (collective.kind() != CollectiveKind::Custom) {
    std::optional<int> root;
    if (collective.root())
      root = collective.root()->value();
    SYNCOLL_TRY(standard,
                make_collective(collective.kind(), ranks, collective.chunk_factor() * parts, root));
    target = standard;
  }
  if (!same_postcondition(computed, target))
    return fail({}, fmt::format("the composition does not compute {}", collective.name()));
  Topology used = plan_topology(topology, h);
  SYNCOLL_TRY(program, DslProgram::create(collective.name(), used, target, options));

  // Every part's tree first: the deepest tree of each epoch numbers the next epoch's stages.
  const TreeBuilder builder(h, ranks);
  std::vector<std::vector<Node>> trees;
  std::vector<int> epoch_depth;
  for (const auto &epoch : refined.epochs()) {
    int deepest = 1;
    for (const Primitive &whole : epoch)
      for (int q = 0; q < parts; ++q) {
        std::set<int> members;
        for (RankId r : whole.ranks)
          members.insert(r.value());
        trees.push_back(builder.build(whole.root.value(), members, q / h.pipeline));
        for (const Node &n : trees.back())
          deepest = std::max(deepest, n.depth);
      }
    epoch_depth.push_back(deepest);
  }
  // The plan with stripes spread over `lanes` lanes of channels.
  auto plan = [&](int lanes) {
    size_t next_tree = 0;
    auto emitter = std::make_unique<Emitter>(program);
    // Per slot, the last step an earlier epoch wrote it at and touched it at.
    std::map<std::tuple<int, BufferKind, int>, int> written, touched;
    int epoch_start = 0;
    for (size_t e = 0; e < refined.epochs().size(); ++e) {
      const auto &epoch = refined.epochs()[e];
      std::map<std::tuple<int, BufferKind, int>, int> now_written, now_touched;
      for (const Primitive &whole : epoch) {
        // Part q = stripe * pipeline + piece: `count` consecutive chunks of the refined slices.
        const int count = whole.source.count / parts;
        for (int q = 0; q < parts; ++q) {
          Primitive prim = whole;
          prim.source.count = prim.target.count = count;
          prim.source.offset += q * count;
          prim.target.offset += q * count;
          const int piece = q % h.pipeline;
          const std::vector<Node> &tree = trees[next_tree++];
          emitter->lane = (q / h.pipeline) % lanes;
          // A part starts after what it reads was written and what it writes was last touched.
          int start = epoch_start + piece;
          auto after = [&](int rank, BufferKind buffer, int offset, auto &map) {
            for (int k = 0; k < count; ++k)
              if (auto it = map.find({rank, buffer, offset + q * count + k}); it != map.end())
                start = std::max(start, it->second + 1);
          };
          const std::vector<RankId> &readers =
              prim.kind == PrimitiveKind::Reduction ? prim.ranks : std::vector<RankId>{prim.root};
          const std::vector<RankId> &writers =
              prim.kind == PrimitiveKind::Multicast ? prim.ranks : std::vector<RankId>{prim.root};
          for (RankId r : readers)
            after(r.value(), prim.source.buffer, whole.source.offset, written);
          for (RankId r : writers)
            after(r.value(), prim.target.buffer, whole.target.offset, touched);
          const size_t before = emitter->hops.size();
          emitter->add(prim, start, tree, epoch_depth[e]);
          int end = start;
          for (size_t i = before; i < emitter->hops.size(); ++i)
            end = std::max(end, emitter->hops[i].time);
          for (int k = 0; k < count; ++k) {
            for (RankId r : readers)
              now_touched[{r.value(), prim.source.buffer, whole.source.offset + q * count + k}] =
                  end;
            for (RankId r : writers) {
              now_written[{r.value(), prim.target.buffer, whole.target.offset + q * count + k}] =
                  end;
              now_touched[{r.value(), prim.target.buffer, whole.target.offset + q * count + k}] =
                  end;
            }
          }
        }
      }
      for (const auto &[slot, t] : now_written)
        written[slot] = std::max(written[slot], t);
      for (const auto &[slot, t] : now_touched)
        touched[slot] = std::max(touched[slot], t);
      epoch_start = emitter->finish_time() + 1;
      emitter->channel_base += epoch_depth[e];
    }
    return emitter;
  };
  // One lane unless a connection's thread block would then hold more steps than the executor
  // does (every lane multiplies thread blocks, and resident thread blocks are the tighter budget).
  const int most_lanes = std::max(1, std::min(h.stripes, kMaxChannelIndex / kStageChannels));
  std::unique_ptr<Emitter> emitter;
  for (int lanes = 1;; lanes *= 2) {
    emitter = plan(std::min(lanes, most_lanes));
    std::map<std::tuple<int, int, int>, int> per_connection;
    int busiest = 0;
    for (const Hop &hop : emitter->hops)
      if (hop.channel >= 0)
        busiest = std::max(busiest, ++per_connection[{hop.from, hop.to, hop.channel}]);
    if (busiest <= kStepsPerConnection || lanes >= most_lanes)
      break;
  }
  const int node = used.ranks_per_node();
  for (const Hop &hop : emitter->hops)
    if (hop.from != hop.to)
      SYNCOLL_CHECK(check_transport(hop, h, used, node));
  SYNCOLL_CHECK(emitter->run());
  return Factorized{std::move(program), std::move(used), std::move(emitter->hops), emitter->steps};
}

} // namespace syncoll::compose
