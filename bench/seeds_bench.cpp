// The seeds' measured claims in simulation, one row each: the paper's speedup beside ours and
// the error. GC3 (section 7, figure 7; its "type A" cluster of 8-A100 nodes, a PCIe switch and
// two 25 GB/s HDR NICs per pair of GPUs, is Azure's ND A100 v4: the azure_nd_a100_v4 system) and
// SCCL (its DGX-1 figures, bench/sccl_figures.h). Every GC3 program is a DSL example
// (examples/programs/), lowered and verified before it is timed (the note column counts the
// configurations that do; the others are correct but break the MSCCL executor's limits);
// it is timed as `syncoll simulate program.xml --system azure_nd_a100_v4 [--nodes N]` times it
// (the MSCCL executor's interpreted costs), at its best over what GC3 tuned per size
// (instances, the ring's channels, the protocol). NCCL is the model's own choice as NCCL 2.18.1,
// the oldest release modelled (GC3 measured 2.8.4, whose algorithms on A100, ring and tree, are
// the same). HiCCL (section 6, figure 8): its composed collectives on four Perlmutter, Delta and
// Frontier GPU nodes at 256 MiB. docs/cost-model.md ("The seeds' measured claims") says why rows
// miss.
//
//   ./build/default/bench/seeds_bench [--quick]
#include "bench/quick_flag.h"
#include "bench/sccl_figures.h"
#include "compose/composition.h"
#include "compose/search.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/text.h"
#include "nccl/run.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace syncoll;

struct Row {
  std::string seed, claim, machine;
  double paper = 0;
  std::optional<double> ours; ///< none: the model cannot run it (the note says why)
  std::string note;
};

// One machine of the GC3 figures: N ND A100 v4 nodes and NCCL's model of it.
std::optional<nccl::NcclSystem> a100_nodes(int nodes) {
  auto made = nccl::nccl_system(*find_system_preset("azure_nd_a100_v4"), nodes);
  if (!made)
    return std::nullopt;
  return *std::move(made);
}

double nccl_us(const nccl::NcclSystem &m, CollectiveKind kind, int64_t size) {
  nccl::NcclRunOptions o;
  o.version = *nccl::find_nccl_version("2.18.1");
  auto run = nccl::simulate_nccl(kind, size, m.system, m.nccl, o);
  if (!run)
    std::fprintf(stderr, "seeds_bench: NCCL fails: %s\n", run.error().to_string().c_str());
  return run ? double(run->result.completion) / 1e6 : NAN;
}

// A GC3 configuration: the example, its parameters and the lowering's instances.
struct Config {
  std::string example;
  examples::ExampleParams params;
  int instances = 1;
};

// The programs of every configuration that lowers and verifies (a program that does not is not
// timed: the table holds verified programs only).
std::vector<Program> verified_programs(const std::vector<Config> &configs) {
  std::vector<Program> out;
  for (const Config &c : configs) {
    const examples::ProgramExample *e = examples::find_program_example(c.example);
    auto dsl = e->build(c.params);
    if (!dsl)
      continue;
    lowering::LowerOptions o;
    o.instances = c.instances;
    auto lowered = lowering::lower(*dsl, o);
    if (lowered && lowered->verified)
      out.push_back(lowered->program);
  }
  return out;
}

// The fastest program at `size` on the machine (NAN when none runs).
double best_us(const std::vector<Program> &programs, const nccl::NcclSystem &m, int64_t size) {
  double best = NAN;
  const Topology topology = m.system.program_topology();
  for (const Program &p : programs) {
    simulator::ProgramSimOptions o;
    o.size_bytes = size;
    o.model = m.system.interpreted();
    auto sim = simulator::simulate_program(p, topology, o);
    if (!sim || sim->deadlocked) {
      // A verified program that does not simulate is a bug: said, and left out of the best.
      std::fprintf(stderr, "seeds_bench: %s does not simulate at %s\n", p.name().c_str(),
                   format_size(size).c_str());
      continue;
    }
    best = std::isnan(best) ? double(sim->result.completion) / 1e6
                            : std::min(best, double(sim->result.completion) / 1e6);
  }
  return best;
}

std::vector<Config> tuned(const std::string &example, int ranks, int nodes,
                          std::vector<int> channels, std::vector<int> instances) {
  std::vector<Config> out;
  for (Protocol protocol : {Protocol::Simple, Protocol::LL128, Protocol::LL})
    for (int ch : channels)
      for (int inst : instances) {
        Config c{example, {}, inst};
        c.params.ranks = ranks;
        c.params.nodes = nodes;
        c.params.channels = ch;
        c.params.options.protocol = protocol;
        out.push_back(c);
      }
  return out;
}

// The largest speedup over sizes [lo, hi] of `baseline` over `ours`.
double max_speedup(const std::vector<int64_t> &sizes, int64_t lo, int64_t hi,
                   const std::function<double(int64_t)> &baseline,
                   const std::function<double(int64_t)> &ours) {
  double best = 0;
  for (int64_t s : sizes)
    if (s >= lo && s <= hi)
      best = std::max(best, baseline(s) / ours(s));
  return best;
}

std::string verified_note(const std::vector<Program> &programs, size_t configurations) {
  return std::to_string(programs.size()) + " of " + std::to_string(configurations) +
         " configurations fit the executor and verify";
}

constexpr int64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t s = lo; s <= hi; s *= 2)
    out.push_back(s);
  return out;
}

// A claim over a band of sizes: the paper's best speedup there.
struct Band {
  std::string claim;
  double paper = 0;
  int64_t lo = 0, hi = 0;
};

// A GC3 AllReduce example in its tuned configurations against NCCL's AllReduce on `m`: one row per
// band, the best speedup over the sizes in it.
void allreduce_rows(std::vector<Row> &rows, const std::string &machine, const nccl::NcclSystem &m,
                    const std::vector<Config> &configs, const std::vector<int64_t> &sizes,
                    const std::vector<Band> &bands) {
  const auto programs = verified_programs(configs);
  const std::string note = verified_note(programs, configs.size());
  auto nccl = [&](int64_t s) { return nccl_us(m, CollectiveKind::Allreduce, s); };
  auto gc3 = [&](int64_t s) { return best_us(programs, m, s); };
  for (const Band &b : bands)
    rows.push_back(
        {"GC3", b.claim, machine, b.paper, max_speedup(sizes, b.lo, b.hi, nccl, gc3), note});
}

void gc3_rows(std::vector<Row> &rows, bool quick) {
  const auto one = a100_nodes(1);
  const auto two = a100_nodes(2);
  const auto three = a100_nodes(3);
  if (!one || !two || !three)
    return;
  const std::vector<int> few = {1, 2, 4};
  // GC3 tuned the whole program's parallelization up to NCCL's 24 channels (gc3 7.1.1).
  const std::vector<int> many =
      quick ? std::vector<int>{1, 4} : std::vector<int>{1, 2, 4, 8, 16, 24};
  // Ring AllReduce on one node: GC3's ring spread over channels, with instances.
  std::fprintf(stderr, "seeds_bench: GC3 ring AllReduce...\n");
  std::vector<Band> ring = {{"ring AllReduce, best 32 KB-3 MB", 1.9, 32 * KiB, 3 * MiB}};
  if (!quick)
    ring.push_back({"ring AllReduce, above 32 MB (matches)", 1.0, 64 * MiB, 1 * GiB});
  allreduce_rows(rows, "1x8 A100", *one,
                 tuned("ring_allreduce", 8, 1, quick ? std::vector<int>{1, 2} : few, many),
                 powers_of_two(32 * KiB, quick ? 4 * MiB : 1 * GiB), ring);
  // All Pairs AllReduce on one node.
  std::fprintf(stderr, "seeds_bench: GC3 all-pairs AllReduce...\n");
  allreduce_rows(rows, "1x8 A100", *one, tuned("allpairs_allreduce", 8, 1, {1}, many),
                 powers_of_two(1 * KiB, 1 * MiB),
                 {{"All Pairs AllReduce, best 1 KB-1 MB", 1.8, 1 * KiB, 1 * MiB}});
  // Hierarchical AllReduce on two nodes.
  std::fprintf(stderr, "seeds_bench: GC3 hierarchical AllReduce...\n");
  std::vector<Band> hierarchical = {
      {"hierarchical AllReduce, best at 1 KB-1 MB", 1.4, 1 * KiB, 1 * MiB}};
  if (!quick)
    hierarchical.push_back({"hierarchical AllReduce, best above 1 GB", 1.11, 1 * GiB, 4 * GiB});
  allreduce_rows(rows, "2x8 A100", *two, tuned("hierarchical_allreduce", 16, 2, {1}, many),
                 powers_of_two(1 * KiB, quick ? 1 * MiB : 4 * GiB), hierarchical);
  // Two-step AllToAll on 16 nodes against NCCL's (the figure says 16 nodes and 256 A100s; type A
  // nodes hold 8, so 16 nodes are 128).
  if (!quick) {
    std::fprintf(stderr, "seeds_bench: GC3 two-step AllToAll on 16 nodes...\n");
    const auto sixteen = a100_nodes(16);
    // Simple, as GC3 tuned it above 512 MB (LL's flags halve its bandwidth there).
    auto configs = tuned("two_step_alltoall", 128, 16, {1}, {1});
    std::erase_if(configs,
                  [](const Config &c) { return c.params.options.protocol != Protocol::Simple; });
    const auto programs = verified_programs(configs);
    const auto sizes = powers_of_two(512 * MiB, 2 * GiB);
    if (sixteen)
      rows.push_back({"GC3", "two-step AllToAll vs NCCL, best above 512 MB", "16x8 A100", 1.2,
                      max_speedup(
                          sizes, 512 * MiB, 2 * GiB,
                          [&](int64_t s) { return nccl_us(*sixteen, CollectiveKind::Alltoall, s); },
                          [&](int64_t s) { return best_us(programs, *sixteen, s); }),
                      verified_note(programs, configs.size()) + " (1 instance, as GC3 ran it)"});
  }
  // AllToNext on three nodes against each GPU sending its whole buffer to the next.
  {
    std::fprintf(stderr, "seeds_bench: GC3 AllToNext...\n");
    const auto configs = tuned("alltonext_spread", 24, 3, {1}, many);
    const auto spread = verified_programs(configs);
    const auto direct = verified_programs(tuned("alltonext", 24, 1, {1}, many));
    const auto sizes = powers_of_two(1 * MiB, quick ? 4 * MiB : 1 * GiB);
    rows.push_back(
        {"GC3", "AllToNext vs direct send, best", "3x8 A100", 14.5,
         max_speedup(
             sizes, 1 * MiB, 1 * GiB, [&](int64_t s) { return best_us(direct, *three, s); },
             [&](int64_t s) { return best_us(spread, *three, s); }),
         verified_note(spread, configs.size()) + " (the direct send: an MSCCL-IR program too)"});
  }
}

// HiCCL (section 6, figure 8) on 4 nodes: its composed collectives (compose/, each plan lowered
// and verified by compose::search) on Perlmutter's, Delta's and Frontier's GPU nodes.
struct Composed {
  compose::Composition composition;
  CollectiveSpec collective;
};

std::optional<Composed> composed(CollectiveKind kind, int ranks) {
  const int factor = kind == CollectiveKind::Allreduce ? ranks : 1;
  // As `syncoll compose -c KIND` builds it: a rooted collective from GPU 0.
  const std::optional<int> root =
      collective_traits(kind).rooted ? std::optional<int>(0) : std::nullopt;
  auto spec = make_collective(kind, ranks, factor, root);
  auto c = compose::Composition::standard(kind, ranks, factor, root);
  if (!spec || !c)
    return std::nullopt;
  return Composed{std::move(*c), std::move(*spec)};
}

// The composed collective's best time over `plans` at `size`, and NCCL's choice beside it.
struct Timed {
  double best_us = NAN, nccl_us = NAN;
};
Timed time_plans(CollectiveKind kind, const simulator::SystemModel &system,
                 const std::vector<compose::Hierarchy> &plans, int64_t size) {
  const auto c = composed(kind, system.topology.num_ranks());
  if (!c)
    return {};
  auto searched = compose::search(c->composition, c->collective, system, {size}, plans);
  if (!searched || searched->empty() || !searched->front().best)
    return {};
  const compose::Search &s = searched->front();
  return {*s.tried[*s.best].us, s.nccl_us.value_or(NAN)};
}

compose::Hierarchy plan(int nodes, int gpus, int stripes, int ring_nodes, int pipeline) {
  compose::Hierarchy h;
  h.factors = {nodes, gpus};
  h.stripes = stripes;
  h.ring_nodes = ring_nodes;
  h.pipeline = pipeline;
  return h;
}

// One of HiCCL's machines: the system, its figures (0: the paper gives none for it) and its GPUs
// (Frontier's 8 are GCDs, two to an MI250X).
struct HicclMachine {
  const char *system;
  const char *label;
  int gpus;
  double striping, pipelining, over_vendor;
};

void hiccl_rows(std::vector<Row> &rows, bool quick) {
  constexpr int kNodes = 4;
  const int64_t size = quick ? 16 * MiB : 256 * MiB;
  const std::string label = quick ? " (quick: 16 MiB)" : "";
  const HicclMachine machines[] = {
      {"perlmutter", "Perlmutter 4x4 A100", 4, 3.62, 2.72, 1.05},
      {"delta", "Delta 4x4 A100", 4, 1.29, 0, 1.26},
      {"frontier", "Frontier 4x8 MI250X", 8, 3.94, 0, 1.55},
  };
  for (const HicclMachine &hm : machines) {
    std::fprintf(stderr, "seeds_bench: HiCCL on %s...\n", hm.system);
    auto system = simulator::make_system_model(*find_system_preset(hm.system), kNodes);
    if (!system)
      continue;
    const int gpus = hm.gpus;
    const std::string machine = hm.label;
    const int nics = system->preset->nics_per_node;
    // Striping: Broadcast and Reduce (the collectives it helps) striped over the node's GPUs
    // against not, as trees; their geometric mean.
    double product = 1;
    for (CollectiveKind kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce}) {
      const double whole = time_plans(kind, *system, {plan(kNodes, gpus, 1, 1, 1)}, size).best_us;
      const double striped =
          time_plans(kind, *system, {plan(kNodes, gpus, gpus, 1, 1)}, size).best_us;
      product *= whole / striped;
    }
    rows.push_back({"HiCCL", "multi-NIC striping, Broadcast+Reduce" + label, machine, hm.striping,
                    std::sqrt(product),
                    std::to_string(nics) + " NIC(s) per node; striped over " +
                        std::to_string(gpus) + " GPUs, a tree"});
    if (hm.pipelining > 0) {
      // Pipelining a striped ring: the best of Broadcast and Reduce.
      double best = 0;
      for (CollectiveKind kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce}) {
        const double once =
            time_plans(kind, *system, {plan(kNodes, gpus, gpus, kNodes, 1)}, size).best_us;
        std::vector<compose::Hierarchy> depths;
        for (int depth : {2, 4, 8, 16})
          depths.push_back(plan(kNodes, gpus, gpus, kNodes, depth));
        best = std::max(best, once / time_plans(kind, *system, depths, size).best_us);
      }
      rows.push_back({"HiCCL", "pipelined ring, best of Broadcast/Reduce" + label, machine,
                      hm.pipelining, best, "a striped ring of 4 nodes, 2-16 pieces against 1"});
    }
    // Against the vendor library: the geometric mean over the collectives NCCL (RCCL) runs, each
    // at HiCCL's best plan (compose --search's candidates).
    double ratio = 1;
    int counted = 0;
    for (CollectiveKind kind :
         {CollectiveKind::Allreduce, CollectiveKind::Allgather, CollectiveKind::ReduceScatter,
          CollectiveKind::Broadcast, CollectiveKind::Reduce, CollectiveKind::Alltoall}) {
      const Timed t = time_plans(kind, *system, compose::candidates(kNodes, gpus, nics), size);
      if (std::isnan(t.best_us) || std::isnan(t.nccl_us))
        continue;
      ratio *= t.nccl_us / t.best_us;
      ++counted;
    }
    rows.push_back(
        {"HiCCL",
         std::string("geomean over ") + std::string(system->generation->collective_library) + label,
         machine, hm.over_vendor, counted ? std::pow(ratio, 1.0 / counted) : NAN,
         std::to_string(counted) + " collectives (not Gather, Scatter: no NCCL model)"});
  }
}

} // namespace

int main(int argc, char **argv) {
  const bool quick = bench::quick_flag(argc, argv, "seeds_bench");
  std::vector<Row> rows;
  gc3_rows(rows, quick);
  hiccl_rows(rows, quick);
  for (const bench::ScclFigure &f : bench::sccl_figures(quick, /*print_table=*/false)) {
    rows.push_back({"SCCL", f.claim, "DGX-1 (8 V100)", f.paper, f.ours,
                    "synthesized algorithms under SCCL's lowerings (sccl_bench)"});
  }
  std::printf("%-6s %-52s %-20s %8s %8s %8s\n", "seed", "claim", "machine", "paper", "ours",
              "error");
  int outside = 0;
  for (const Row &r : rows) {
    if (!r.ours || std::isnan(*r.ours)) {
      std::printf("%-6s %-52s %-20s %7.2fx %8s %8s  %s\n", r.seed.c_str(), r.claim.c_str(),
                  r.machine.c_str(), r.paper, "-", "-", r.note.c_str());
      continue;
    }
    const double error = 100 * (*r.ours / r.paper - 1);
    outside += std::abs(error) > 15 ? 1 : 0;
    std::printf("%-6s %-52s %-20s %7.2fx %7.2fx %+7.1f%%  %s\n", r.seed.c_str(), r.claim.c_str(),
                r.machine.c_str(), r.paper, *r.ours, error, r.note.c_str());
  }
  std::printf("\nrows within 15%% of the paper: %zu of %zu\n", rows.size() - size_t(outside),
              rows.size());
  return 0;
}
