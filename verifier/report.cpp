#include "verifier/report.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace syncoll::verifier {

std::string_view property_name(Property p) {
  switch (p) {
  case Property::Structure:
    return "structure";
  case Property::Resources:
    return "resources";
  case Property::DeadlockFreedom:
    return "deadlock freedom";
  case Property::RaceFreedom:
    return "race freedom";
  case Property::Postcondition:
    return "postcondition";
  }
  SYNCOLL_UNREACHABLE("property without a name");
}

std::string_view verdict_kind_name(VerdictKind k) {
  switch (k) {
  case VerdictKind::Holds:
    return "holds";
  case VerdictKind::Violated:
    return "violated";
  case VerdictKind::Unknown:
    return "unknown";
  }
  SYNCOLL_UNREACHABLE("verdict without a name");
}

std::string describe(const StepRef &s) {
  return fmt::format("rank {} tb {} step {}{}", s.rank.value(), s.tb.value(), s.step,
                     s.iteration > 0 ? fmt::format(" (iteration {})", s.iteration) : "");
}

std::string describe(const Access &a) {
  return fmt::format("{} '{}' {} {}[{}..{})", describe(a.step), op_type_name(a.op),
                     a.writes ? "writes" : "reads", buffer_kind_name(a.buffer), a.begin, a.end);
}

bool Report::all_hold() const {
  return std::all_of(verdicts.begin(), verdicts.end(),
                     [](const Verdict &v) { return v.kind == VerdictKind::Holds; });
}

const Verdict &Report::verdict(Property p) const {
  for (const auto &v : verdicts)
    if (v.property == p)
      return v;
  SYNCOLL_UNREACHABLE("report lacks a property");
}

namespace {

std::vector<std::string> counterexample_lines(const Counterexample &ce) {
  std::vector<std::string> out;
  struct Visitor {
    std::vector<std::string> &out;
    void operator()(std::monostate) const {}
    void operator()(const std::vector<StructuralIssue> &issues) const {
      for (const auto &i : issues)
        out.push_back(fmt::format("[{}] {}", i.code, i.message));
    }
    void operator()(const DeadlockCounterexample &d) const {
      out.push_back("regime: " + d.regime);
      out.push_back(d.lost_wakeup ? "wait-for chain (ends at a thread block that finished):"
                                  : "wait-for cycle:");
      for (const auto &w : d.cycle) {
        std::string line = fmt::format("  {} {}", describe(w.waiter), w.reason);
        if (w.on_tb && !d.lost_wakeup)
          line += fmt::format(" -> waits for rank {} tb {}", w.on_rank->value(), w.on_tb->value());
        out.push_back(line);
      }
      out.push_back("execution prefix:");
      for (const auto &p : d.prefix)
        out.push_back("  " + p);
    }
    void operator()(const std::vector<RaceCounterexample> &races) const {
      for (const auto &r : races) {
        out.push_back(fmt::format("{} and {} ({})", describe(r.first), describe(r.second), r.mode));
        out.push_back("  " + r.why);
      }
    }
    void operator()(const PostconditionCounterexample &p) const {
      if (p.slots.empty())
        out.push_back(fmt::format("no output to compare ({})", p.mode));
      for (const auto &s : p.slots)
        out.push_back(fmt::format("rank {} output slot {} ({}): expected {}, found {}",
                                  s.rank.value(), s.output_slot, p.mode, s.expected, s.found));
    }
  };
  std::visit(Visitor{out}, ce);
  return out;
}

} // namespace

std::string Coverage::describe(const SplitRegime &r) const {
  const std::string what =
      r.max_chunks >= largest_step_count ? std::string("small messages (one transfer per step)")
      : r.max_chunks == 1                ? std::string("large messages (one transfer per chunk)")
                          : fmt::format("messages of up to {} chunks per transfer", r.max_chunks);
  return fmt::format("{}, from {} B", what, r.from_bytes);
}

namespace {

std::string window_text(const Coverage &c) {
  return fmt::format("{} B .. {}", c.min_bytes,
                     c.max_bytes ? fmt::format("{} B", *c.max_bytes) : std::string("no limit"));
}

} // namespace

std::string Report::to_text() const {
  std::string out;
  for (const auto &v : verdicts) {
    out += fmt::format("{:<17} {}", std::string(property_name(v.property)) + ":", v.summary);
    if (!v.decided_by.empty() && v.kind != VerdictKind::Holds)
      out += fmt::format(" [{}]", v.decided_by);
    out += "\n";
    for (const auto &line : counterexample_lines(v.counterexample))
      out += "    " + line + "\n";
  }
  out += fmt::format("{:<17} message sizes {} ({}), nchunksperloop {}\n",
                     "covers:", window_text(coverage), coverage.source, coverage.chunks_per_loop);
  if (coverage.regimes.empty())
    out += "    no size in this window runs the program (sizes run in whole chunks: multiples of "
           "nchunksperloop)\n";
  for (const SplitRegime &r : coverage.regimes)
    out += "    " + coverage.describe(r) + "\n";
  return out;
}

nlohmann::ordered_json Report::to_json() const {
  nlohmann::ordered_json j;
  j["all_hold"] = all_hold();
  auto arr = nlohmann::ordered_json::array();
  for (const auto &v : verdicts) {
    nlohmann::ordered_json vj;
    vj["property"] = std::string(property_name(v.property));
    vj["verdict"] = std::string(verdict_kind_name(v.kind));
    vj["summary"] = v.summary;
    vj["decided_by"] = v.decided_by;
    vj["counterexample"] = counterexample_lines(v.counterexample);
    arr.push_back(std::move(vj));
  }
  j["properties"] = std::move(arr);
  nlohmann::ordered_json cov;
  cov["min_bytes"] = coverage.min_bytes;
  cov["max_bytes"] = coverage.max_bytes ? nlohmann::ordered_json(*coverage.max_bytes)
                                        : nlohmann::ordered_json(nullptr);
  cov["source"] = coverage.source;
  cov["nchunksperloop"] = coverage.chunks_per_loop;
  auto regimes = nlohmann::ordered_json::array();
  for (const SplitRegime &r : coverage.regimes) {
    nlohmann::ordered_json rj;
    rj["max_chunks_per_transfer"] = r.max_chunks;
    rj["from_bytes"] = r.from_bytes;
    rj["description"] = coverage.describe(r);
    regimes.push_back(std::move(rj));
  }
  cov["regimes"] = std::move(regimes);
  j["coverage"] = std::move(cov);
  return j;
}

} // namespace syncoll::verifier
