#include "compose/search.h"

#include "lowering/compile.h"
#include "simulator/nccl_run.h"
#include "simulator/program_sim.h"

#include <fmt/format.h>

namespace syncoll::compose {

std::vector<Hierarchy> candidates(int nodes, int gpus, int nics) {
  std::vector<Hierarchy> out;
  const int ranks = nodes * gpus;
  std::vector<std::vector<int>> shapes{{ranks}};
  if (nodes > 1 && gpus > 1)
    shapes.push_back({nodes, gpus});
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
          out.push_back({factors, s, r, pipeline});
  }
  return out;
}

Expected<Tried> time_plan(const Composition &composition, const CollectiveSpec &collective,
                          const Hierarchy &h, const simulator::SystemModel &system, int64_t bytes) {
  Tried t{h, std::nullopt, ""};
  SYNCOLL_TRY(f, factorize(composition, collective, h, system.topology));
  SYNCOLL_TRY(lowered, lowering::lower(f.program));
  if (!lowered.verified) {
    for (const verifier::Verdict &v : lowered.verified.error().verdicts)
      if (v.kind != verifier::VerdictKind::Holds && t.verdict.empty())
        t.verdict = fmt::format("{}: {}", verifier::property_name(v.property), v.summary);
    return t;
  }
  simulator::ProgramSimOptions o;
  o.size_bytes = bytes;
  o.model = system.interpreted();
  SYNCOLL_TRY(sim, simulator::simulate_program(lowered.program, system.topology, o));
  if (sim.deadlocked) {
    t.verdict = "the simulator deadlocked on a verified program (a bug: please report)";
    return t;
  }
  t.verdict = "verified";
  t.us = double(sim.result.completion) / 1e6;
  return t;
}

Expected<Search> search(const Composition &composition, const CollectiveSpec &collective,
                        const simulator::SystemModel &system, int64_t bytes) {
  Search s;
  const int nics = system.preset ? system.preset->nics_per_node : 1;
  for (const Hierarchy &h : candidates(system.nodes, system.gpus_per_node, nics)) {
    auto t = time_plan(composition, collective, h, system, bytes);
    if (!t) // a plan the machine cannot carry (a link it lacks, channels): not a candidate
      s.tried.push_back({h, std::nullopt, t.error().to_string()});
    else
      s.tried.push_back(std::move(*t));
    const Tried &last = s.tried.back();
    if (last.us && (!s.best || *last.us < *s.tried[*s.best].us))
      s.best = s.tried.size() - 1;
  }
  if (collective.kind() != CollectiveKind::Custom) {
    auto machine = simulator::nccl_machine(system);
    if (machine) {
      auto nccl = simulator::simulate_nccl(collective.kind(), bytes, system, *machine);
      if (nccl) {
        s.nccl_us = double(nccl->result.completion) / 1e6;
        s.nccl_info = nccl->info;
      } else {
        s.nccl_info = nccl.error().to_string();
      }
    }
  }
  return s;
}

} // namespace syncoll::compose
