#include "simulator/nccl_run.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "simulator/baselines.h"
#include "simulator/program_sim.h"

#include <cmath>
#include <fmt/format.h>

namespace syncoll::simulator {
namespace {

// NVLS: per GPU, the bytes through its busier switch-port direction. AllReduce loads every slice
// reduced (S out) and stores its own slice multicast (S/N out, S in); ReduceScatter loads S and
// keeps S/N; AllGather stores its S/N once and receives the others' (N-1)S/N.
double nvls_port_bytes(CollectiveKind kind, double bytes, int n) {
  if (kind == CollectiveKind::Allreduce)
    return bytes * (1.0 + 1.0 / n);
  if (kind == CollectiveKind::ReduceScatter)
    return bytes;
  return bytes * (n - 1.0) / n;
}

Expected<SimulationResult> nvls_closed_form(CollectiveKind kind, int64_t bytes,
                                            const SystemModel &s) {
  const GenerationTraits &g = *s.generation;
  const int n = s.topology.num_ranks();
  const Link &port = s.topology.links().front();
  const double simple_share = g.nvlink_payload_share[CostModel::index(Protocol::Simple)];
  const double rate = port.bandwidth.value / simple_share * g.nvls_payload_share;
  const double ns = s.model.launch / 1000.0 + g.nvls_latency_us * 1000 +
                    nvls_port_bytes(kind, double(bytes), n) / rate;
  SimulationResult r;
  r.size_bytes = bytes;
  r.completion = std::llround(ns * 1000);
  r.algbw_gbps = double(bytes) / ns;
  r.busbw_gbps = r.algbw_gbps * bus_bandwidth_factor(kind, n);
  r.rank_idle.assign(size_t(n), 0);
  return r;
}

Expected<Program> nccl_program(CollectiveKind kind, const NcclEstimate &choice,
                               const SystemModel &s, const NcclMachine &m) {
  const NcclRingGraph &graph = m.ring;
  const int channels = std::min(32, choice.channels);
  if (choice.algorithm == NcclAlgorithm::Tree)
    return nccl_tree_allreduce_program(nccl_tree_parents(s.nodes, s.gpus_per_node), 4,
                                       choice.protocol, channels);
  SYNCOLL_INVARIANT(choice.algorithm == NcclAlgorithm::Ring, "a program for a ring or tree only");
  std::vector<std::vector<RankId>> rings;
  for (int c = 0; c < channels; ++c)
    rings.push_back(graph.rings[size_t(c % graph.channels())]);
  if (kind == CollectiveKind::Broadcast)
    for (auto &ring : rings)
      std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), RankId(0)), ring.end());
  return nccl_ring_program(kind, rings, choice.protocol);
}

} // namespace

Expected<NcclMachine> nccl_machine(const SystemModel &s) {
  auto ring = nccl_search_rings(s.topology, *s.generation);
  if (!ring)
    return fail({}, fmt::format("NCCL's search finds no ring on '{}'", s.topology.name()));
  NcclMachine m{std::move(*ring), {}};
  m.tuning = {s.generation, nullptr, s.topology.num_ranks(), s.nodes, s.nvls};
  return m;
}

Expected<NcclRun> simulate_nccl(CollectiveKind kind, int64_t bytes, const SystemModel &s,
                                const NcclMachine &m, const NcclRunOptions &o) {
  NcclTuningInput in = m.tuning;
  in.ring = &m.ring;
  std::optional<NcclEstimate> choice;
  for (const NcclEstimate &e : nccl_estimates(kind, double(bytes), in))
    if ((!o.algorithm || e.algorithm == *o.algorithm) &&
        (!o.protocol || e.protocol == *o.protocol) && (!choice || e.time_us < choice->time_us))
      choice = e;
  if (!choice)
    return fail({}, fmt::format("NCCL has no {}{}{} for {} on '{}'",
                                o.algorithm ? nccl_algorithm_name(*o.algorithm) : "algorithm",
                                o.protocol ? " with protocol " : "",
                                o.protocol ? protocol_traits(*o.protocol).name : "",
                                collective_kind_name(kind), s.topology.name()));
  NcclRun run{*choice, nccl_info_line(kind, double(bytes), *choice), {}, false};
  if (choice->algorithm == NcclAlgorithm::Nvls || choice->algorithm == NcclAlgorithm::Pat) {
    if (choice->algorithm == NcclAlgorithm::Pat)
      return fail({}, "PAT has no simulation yet");
    SYNCOLL_TRY(r, nvls_closed_form(kind, bytes, s));
    run.result = std::move(r);
    run.closed_form = true;
    return run;
  }
  SYNCOLL_TRY(program, nccl_program(kind, *choice, s, m));
  ProgramSimOptions po;
  // The executor's nBytes is nccl-tests' size for every collective NCCL runs as a ring or tree.
  po.size_bytes = bytes;
  po.model = s.model;
  SYNCOLL_TRY(sim, simulate_program(program, s.topology, po));
  SYNCOLL_INVARIANT(!sim.deadlocked, "an NCCL program deadlocked in the simulator");
  run.result = std::move(sim.result);
  run.result.size_bytes = bytes;
  if (run.result.completion > 0) {
    run.result.algbw_gbps = double(bytes) / (double(run.result.completion) / 1000.0);
    run.result.busbw_gbps =
        run.result.algbw_gbps * bus_bandwidth_factor(kind, s.topology.num_ranks());
  }
  return run;
}

} // namespace syncoll::simulator
