#include "compose/search.h"

#include "lowering/compile.h"
#include "nccl/run.h"
#include "simulator/program_sim.h"

#include <fmt/format.h>

namespace syncoll::compose {

std::vector<Hierarchy> candidates(int nodes, int gpus, int nics) {
  std::vector<Hierarchy> out;
  const int ranks = nodes * gpus;
  std::vector<std::vector<int>> shapes{{ranks}};
  if (nodes > 1 && gpus > 1)
    shapes.push_back({nodes, gpus});
  // Inside the node a binary tree of GPU pairs: a rank combines or forwards to one peer per level
  // instead of to every GPU of its node in turn (HiCCL's {2, 2, 4}-like hierarchies).
  if (nodes > 1 && gpus >= 8 && gpus % 4 == 0)
    shapes.push_back({nodes, 2, 2, gpus / 4});
  for (const std::vector<int> &factors : shapes) {
    const int top = ranks / factors[0];
    std::vector<int> stripes{1};
    for (int s = 2; s <= std::min(top, std::max(1, nics)); s *= 2)
      if (top % s == 0)
        stripes.push_back(s);
    std::vector<int> rings{1};
    if (factors[0] > 2)
      rings.push_back(factors[0]);
    for (int s : stripes)
      for (int r : rings)
        for (int pipeline : {1, 2, 4})
          out.push_back({factors, s, r, pipeline, {}});
  }
  return out;
}

namespace {

// One plan lowered and verified: its program, or the first property that failed.
struct Lowered {
  std::optional<Program> program;
  std::optional<Topology> topology; ///< the machine as the plan uses it
  std::string verdict;
};

Lowered lower_plan(const Composition &composition, const CollectiveSpec &collective,
                   const Hierarchy &h, const simulator::SystemModel &system) {
  auto f = factorize(composition, collective, h, system.topology);
  if (!f) // a plan the machine cannot carry (a link it lacks): not a candidate
    return {std::nullopt, std::nullopt, f.error().items().front().message};
  auto lowered = lowering::lower(f->program);
  if (!lowered)
    return {std::nullopt, std::nullopt, lowered.error().items().front().message};
  if (!lowered->verified) {
    for (const verifier::Verdict &v : lowered->verified.error().verdicts)
      if (v.kind != verifier::VerdictKind::Holds)
        return {std::nullopt, std::nullopt,
                fmt::format("{}: {}", verifier::property_name(v.property), v.summary)};
  }
  // A plan fans in and out over many peers at once: its ports are shared as the hardware
  // shares them (as NCCL's point-to-point runs are).
  return {std::move(lowered->program), simulator::with_fair_ports(f->topology), "verified"};
}

} // namespace

Expected<std::vector<Search>>
search(const Composition &composition, const CollectiveSpec &collective,
       const simulator::SystemModel &system, const std::vector<int64_t> &sizes,
       const std::vector<Hierarchy> &plans, std::optional<Protocol> protocol) {
  std::vector<Search> out(sizes.size());
  size_t primitives = 0;
  for (const auto &epoch : composition.epochs())
    primitives += epoch.size();
  for (const Hierarchy &h : plans) {
    const size_t parts = primitives * size_t(h.stripes * h.pipeline);
    const Lowered lowered =
        h.stripes * h.pipeline > 1 && parts > kMostParts
            ? Lowered{std::nullopt, std::nullopt,
                      fmt::format("not tried: {} parts (more than {}) take minutes to lower and "
                                  "verify",
                                  parts, kMostParts)}
            : lower_plan(composition, collective, h, system);
    for (size_t i = 0; i < sizes.size(); ++i) {
      Tried t{h, std::nullopt, lowered.verdict};
      if (lowered.program) {
        simulator::ProgramSimOptions o;
        o.size_bytes = sizes[i];
        o.model = system.interpreted();
        o.protocol = protocol;
        SYNCOLL_TRY(sim, simulator::simulate_program(*lowered.program, *lowered.topology, o));
        if (sim.deadlocked)
          t.verdict = "the simulator deadlocked on a verified program (a bug: please report)";
        else
          t.us = double(sim.result.completion) / 1e6;
      }
      Search &s = out[i];
      s.tried.push_back(std::move(t));
      if (s.tried.back().us && (!s.best || *s.tried.back().us < *s.tried[*s.best].us))
        s.best = s.tried.size() - 1;
    }
  }
  if (collective.kind() == CollectiveKind::Custom)
    return out;
  SYNCOLL_TRY(machine, nccl::nccl_machine(system));
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto nccl = nccl::simulate_nccl(collective.kind(), sizes[i], system, machine);
    if (nccl) {
      out[i].nccl_us = double(nccl->result.completion) / 1e6;
      out[i].nccl_info = nccl->info;
    } else {
      out[i].nccl_info = nccl.error().to_string();
    }
  }
  return out;
}

} // namespace syncoll::compose
