#include "model/algorithm.h"

#include "model/invariant.h"
#include "model/json_document.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace syncoll {

int Algorithm::total_rounds() const {
  int r = 0;
  for (const auto &s : steps)
    r += s.rounds;
  return r;
}

size_t Algorithm::num_sends() const {
  size_t n = 0;
  for (const auto &s : steps)
    n += s.sends.size();
  return n;
}

Expected<Algorithm> algorithm_from_json(const JsonView &root) {
  SYNCOLL_CHECK(root.only_keys(
      {"format", "name", "collective", "ranks", "chunk_factor", "root", "topology", "steps"}));
  if (auto format = root.optional_member("format")) {
    SYNCOLL_TRY(f, format->as_string());
    if (f != "syncoll-algorithm")
      return format->error(fmt::format("expected format 'syncoll-algorithm', found '{}'", f));
  }
  Algorithm a;
  if (auto n = root.optional_member("name")) {
    SYNCOLL_TRY(name, n->as_string());
    a.name = name;
  }
  if (auto c = root.optional_member("collective")) {
    SYNCOLL_TRY(coll, c->as_string());
    a.target.collective = coll;
  }
  if (auto r = root.optional_member("ranks")) {
    SYNCOLL_TRY(ranks, r->as_int(1, 1 << 16));
    a.target.ranks = static_cast<int>(ranks);
  }
  if (auto cf = root.optional_member("chunk_factor")) {
    SYNCOLL_TRY(v, cf->as_int(1, 1 << 20));
    a.target.chunk_factor = static_cast<int>(v);
  }
  if (auto rv = root.optional_member("root")) {
    SYNCOLL_TRY(v, rv->as_int(0, 1 << 16));
    a.target.root = static_cast<int>(v);
  }
  if (auto t = root.optional_member("topology")) {
    SYNCOLL_TRY(topo, t->as_string());
    a.target.topology = topo;
  }
  SYNCOLL_TRY(steps_v, root.member("steps"));
  SYNCOLL_TRY(steps, steps_v.elements());
  for (const auto &sv : steps) {
    SYNCOLL_CHECK(sv.only_keys({"rounds", "sends"}));
    AlgorithmStep step;
    if (auto r = sv.optional_member("rounds")) {
      SYNCOLL_TRY(rounds, r->as_int(1, 1 << 20));
      step.rounds = static_cast<int>(rounds);
    }
    SYNCOLL_TRY(sends_v, sv.member("sends"));
    SYNCOLL_TRY(sends, sends_v.elements());
    for (const auto &send_v : sends) {
      SYNCOLL_TRY(fields, send_v.elements());
      if (fields.size() != 3 && fields.size() != 4)
        return send_v.error(fmt::format("expected a send as [chunk, src, dst] or [chunk, src, "
                                        "dst, \"copy\"|\"reduce\"], found {} elements",
                                        fields.size()));
      SYNCOLL_TRY(chunk, fields[0].as_int(0, INT32_MAX));
      SYNCOLL_TRY(src, fields[1].as_int(0, INT32_MAX));
      SYNCOLL_TRY(dst, fields[2].as_int(0, INT32_MAX));
      Send s{ChunkId(static_cast<int32_t>(chunk)), RankId(static_cast<int32_t>(src)),
             RankId(static_cast<int32_t>(dst)), SendOp::Copy};
      if (fields.size() == 4) {
        SYNCOLL_TRY(op, fields[3].as_string());
        if (op == "reduce")
          s.op = SendOp::Reduce;
        else if (op != "copy")
          return fields[3].error(fmt::format("unknown send operation '{}' (expected copy or "
                                             "reduce)",
                                             op));
      }
      if (s.src == s.dst)
        return send_v.error(fmt::format("send of chunk {} from rank {} to itself", chunk, src));
      step.sends.push_back(s);
    }
    a.steps.push_back(std::move(step));
  }
  return a;
}

Expected<Algorithm> read_algorithm_file(const std::string &path) {
  SYNCOLL_TRY(doc, JsonDocument::read_file(path));
  return algorithm_from_json(doc.root());
}

nlohmann::ordered_json algorithm_to_json(const Algorithm &a) {
  nlohmann::ordered_json j;
  j["format"] = "syncoll-algorithm";
  j["name"] = a.name;
  j["collective"] = a.target.collective;
  j["ranks"] = a.target.ranks;
  j["chunk_factor"] = a.target.chunk_factor;
  if (a.target.root)
    j["root"] = *a.target.root;
  j["topology"] = a.target.topology;
  auto steps = nlohmann::ordered_json::array();
  for (const auto &s : a.steps) {
    nlohmann::ordered_json sj;
    sj["rounds"] = s.rounds;
    auto sends = nlohmann::ordered_json::array();
    for (const auto &send : s.sends) {
      auto e =
          nlohmann::ordered_json::array({send.chunk.value(), send.src.value(), send.dst.value()});
      if (send.op == SendOp::Reduce)
        e.push_back("reduce");
      sends.push_back(std::move(e));
    }
    sj["sends"] = std::move(sends);
    steps.push_back(std::move(sj));
  }
  j["steps"] = std::move(steps);
  return j;
}

namespace {

using Value = std::vector<Contribution>; // sorted multiset; empty = the rank lacks the chunk

std::string describe(const Value &v) {
  if (v.empty())
    return "nothing";
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i)
    out += fmt::format("{}r{}", i ? ", " : "", v[i].rank.value());
  return out + "}";
}

} // namespace

AlgorithmCheck check_algorithm(const Algorithm &algorithm, const Topology &topology,
                               const CollectiveSpec &collective) {
  AlgorithmCheck result;
  auto violate = [&](AlgorithmViolation::Kind kind, std::optional<int> step, std::string msg) {
    result.violations.push_back({kind, step, std::move(msg)});
  };
  const int P = collective.num_ranks();
  const int G = collective.num_chunks();
  if (topology.num_ranks() != P) {
    violate(AlgorithmViolation::Kind::OutOfRange, std::nullopt,
            fmt::format("topology '{}' has {} ranks but collective '{}' has {}", topology.name(),
                        topology.num_ranks(), collective.name(), P));
    return result;
  }

  // state[c * P + r]: what rank r holds of chunk c.
  std::vector<Value> state(size_t(G) * P);
  auto at = [&](ChunkId c, RankId r) -> Value & { return state[c.index() * P + r.index()]; };
  for (int c = 0; c < G; ++c)
    for (const auto &p : collective.chunk(ChunkId(c)).pre)
      at(ChunkId(c), p.rank) = {collective.initial_value(ChunkId(c), p.rank)};

  for (int s = 0; s < algorithm.num_steps(); ++s) {
    const AlgorithmStep &step = algorithm.steps[size_t(s)];
    const int shown = s + 1;
    std::vector<int> link_load(topology.links().size(), 0);
    // Writes of this step, applied after every send has read the old state.
    std::map<std::pair<int, int>, std::vector<const Send *>> writes;
    for (const Send &send : step.sends) {
      if (send.chunk.value() >= G || send.src.value() >= P || send.dst.value() >= P) {
        violate(AlgorithmViolation::Kind::OutOfRange, s,
                fmt::format("step {}: send of chunk {} from rank {} to rank {} is out of range "
                            "({} chunks, {} ranks)",
                            shown, send.chunk.value(), send.src.value(), send.dst.value(), G, P));
        continue;
      }
      auto link = topology.find_link(send.src, send.dst);
      if (!link)
        violate(AlgorithmViolation::Kind::MissingLink, s,
                fmt::format("step {}: chunk {} sent {}->{}, but topology '{}' has no link {}->{}",
                            shown, send.chunk.value(), send.src.value(), send.dst.value(),
                            topology.name(), send.src.value(), send.dst.value()));
      else
        ++link_load[link->index()];
      if (at(send.chunk, send.src).empty())
        violate(AlgorithmViolation::Kind::SourceLacksChunk, s,
                fmt::format("step {}: chunk {} sent {}->{}, but rank {} does not hold chunk {} "
                            "when step {} starts",
                            shown, send.chunk.value(), send.src.value(), send.dst.value(),
                            send.src.value(), send.chunk.value(), shown));
      if (send.op == SendOp::Reduce && !collective.chunk(send.chunk).reduced)
        violate(AlgorithmViolation::Kind::ReduceNotCombining, s,
                fmt::format("step {}: chunk {} reduced {}->{}, but collective '{}' does not "
                            "reduce chunk {}",
                            shown, send.chunk.value(), send.src.value(), send.dst.value(),
                            collective.name(), send.chunk.value()));
      writes[{send.chunk.value(), send.dst.value()}].push_back(&send);
    }
    for (size_t l = 0; l < link_load.size(); ++l) {
      const Link &link = topology.links()[l];
      if (link_load[l] > link.capacity * step.rounds)
        violate(AlgorithmViolation::Kind::LinkBandwidth, s,
                fmt::format("step {}: link {}->{} carries {} chunks, more than its capacity {} x "
                            "{} rounds",
                            shown, link.src.value(), link.dst.value(), link_load[l], link.capacity,
                            step.rounds));
    }
    for (const auto &rel : topology.relations()) {
      int load = 0;
      for (LinkId id : rel.links)
        load += link_load[id.index()];
      if (load > rel.capacity * step.rounds)
        violate(AlgorithmViolation::Kind::RelationBandwidth, s,
                fmt::format("step {}: bandwidth relation '{}' carries {} chunks, more than its "
                            "capacity {} x {} rounds",
                            shown, rel.name, load, rel.capacity, step.rounds));
    }
    // Apply: a copy replaces the destination's value, reductions add to it.
    std::vector<std::pair<std::pair<int, int>, Value>> updates;
    for (const auto &[key, sends] : writes) {
      ChunkId c(key.first);
      RankId dst(key.second);
      size_t copies = 0;
      for (const Send *send : sends)
        copies += send->op == SendOp::Copy;
      if (copies > 0 && sends.size() > 1 && collective.chunk(c).reduced) {
        violate(AlgorithmViolation::Kind::ConflictingWrites, s,
                fmt::format("step {}: rank {} receives chunk {} {} times in one step and at "
                            "least one is a copy; the result would depend on their order",
                            shown, dst.value(), c.value(), sends.size()));
        continue;
      }
      Value next = copies > 0 ? Value{} : at(c, dst);
      for (const Send *send : sends) {
        const Value &v = at(send->chunk, send->src);
        if (send->op == SendOp::Copy)
          next = v; // for non-reduced chunks every holder has the same single value
        else
          next.insert(next.end(), v.begin(), v.end());
      }
      std::sort(next.begin(), next.end());
      updates.push_back({key, std::move(next)});
    }
    for (auto &[key, value] : updates)
      at(ChunkId(key.first), RankId(key.second)) = std::move(value);
  }

  for (int c = 0; c < G; ++c) {
    const Value expected = collective.expected_value(ChunkId(c));
    for (const auto &p : collective.chunk(ChunkId(c)).post) {
      const Value &found = at(ChunkId(c), p.rank);
      if (found == expected)
        continue;
      std::string what = found.empty() ? "never receives it"
                                       : fmt::format("ends with contributions {} instead of {}",
                                                     describe(found), describe(expected));
      if (!collective.chunk(ChunkId(c)).reduced && !found.empty())
        what =
            fmt::format("ends with chunk {}'s value from rank {}", c, found.front().rank.value());
      violate(AlgorithmViolation::Kind::Postcondition, std::nullopt,
              fmt::format("postcondition: rank {} must hold chunk {} (output slot {}) after {} "
                          "steps but {}",
                          p.rank.value(), c, p.slot, algorithm.num_steps(), what));
    }
  }
  return result;
}

} // namespace syncoll
