// `syncoll demo [--out DIR]`: the whole pipeline on the embedded DGX-1 model. It synthesizes
// the Allgather Pareto frontier, then lowers and verifies every point. Each point runs on the
// calibrated DGX-1 system under the MSCCL executor's costs, against NCCL's own choice of
// algorithm, protocol and channels per size, from 1 KiB to 1 GiB. The XMLs, a CSV, the drawings
// and a speedup-versus-size plot go into DIR, and a short table is printed.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/algorithm.h"
#include "model/collective.h"
#include "model/hardware.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "nccl/algorithms.h"
#include "nccl/run.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"
#include "synth/synthesize.h"
#include "verifier/verify.h"
#include "viz/charts.h"
#include "viz/dot.h"
#include "viz/render.h"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>

namespace syncoll::cli {
namespace {

// A program the demo times: NCCL's choice (one program, the tuner's protocol per size), or a
// frontier point lowered once per protocol, each its own verified program and XML.
struct Entry {
  std::string name;
  std::string file_stem; ///< the XMLs: STEM_<protocol>.xml
  std::map<Protocol, verifier::VerifiedProgram> programs;
  std::vector<double> us;              ///< per size, the fastest protocol's
  std::vector<Protocol> protocol_used; ///< per size
};

constexpr Protocol kDemoProtocols[] = {Protocol::LL, Protocol::LL128, Protocol::Simple};

Expected<void> save(const std::filesystem::path &dir, const std::string &file,
                    const std::string &content) {
  return write_output((dir / file).string(), content);
}

Expected<void> save_drawing(viz::Renderer &renderer, const std::filesystem::path &dir,
                            const std::string &stem, const std::string &dot) {
  SYNCOLL_CHECK(save(dir, stem + ".dot", dot));
  SYNCOLL_TRY(svg, renderer.render(dot, viz::ImageFormat::Svg));
  return save(dir, stem + ".svg", svg);
}

Expected<int> run_demo(const std::filesystem::path &dir) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto progress = [&](const std::string &what) {
    fmt::print(stderr, "[{:5.1f} s] {}\n",
               std::chrono::duration<double>(Clock::now() - start).count(), what);
  };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return fail({dir.string(), 0, 0}, "cannot create the output folder: " + ec.message());
  const Topology t = dgx1();
  viz::Renderer renderer;
  SYNCOLL_CHECK(save_drawing(renderer, dir, "topology", viz::topology_dot(t)));

  progress("synthesizing the DGX-1 Allgather Pareto frontier (SAT backend)");
  synth::Target target;
  target.kind = CollectiveKind::Allgather;
  synth::ParetoOptions po;
  SYNCOLL_TRY(pareto, synth::pareto(t, target, po));
  fmt::print(
      "Pareto frontier: {} points from {} instances ({} proven infeasible)\n",
      pareto.frontier.size(), pareto.attempts.size(),
      std::count_if(pareto.attempts.begin(), pareto.attempts.end(),
                    [](const synth::Attempt &a) { return a.verdict == synth::Verdict::Unsat; }));

  // NCCL as it runs on a DGX-1: the rings its search finds, and per size the algorithm,
  // protocol and channels its tuning model picks.
  SYNCOLL_TRY(system, simulator::make_system_model(*find_system_preset("dgx1")));
  SYNCOLL_TRY(machine, nccl::nccl_machine(system));
  std::vector<Entry> entries;
  const auto rings = machine.ring.channel_rings(machine.ring.runtime_channels());
  SYNCOLL_TRY(nccl, nccl::nccl_ring_program(CollectiveKind::Allgather, rings, Protocol::Simple));
  auto ring_checked = verifier::certify(nccl, {});
  if (!ring_checked) {
    fmt::print("{}", ring_checked.error().to_text());
    return 1;
  }
  SYNCOLL_CHECK(
      save(dir, "nccl_ring_allgather.xml", program_to_mscclir_xml(ring_checked->program())));
  std::map<Protocol, verifier::VerifiedProgram> nccl_programs;
  nccl_programs.emplace(Protocol::Simple, std::move(*ring_checked));
  entries.push_back({"NCCL (its choice)", "nccl_ring_allgather", std::move(nccl_programs), {}, {}});
  for (const synth::ParetoPoint &point : pareto.frontier) {
    const std::string name =
        fmt::format("allgather_c{}_s{}_r{}", point.chunks, point.sr.steps, point.sr.rounds);
    progress(fmt::format("lowering (GC3 passes) and verifying {} in LL, LL128 and Simple", name));
    SYNCOLL_TRY(spec, target.collective(t.num_ranks(), point.chunks));
    Entry entry{fmt::format("C{} S{} R{}{}", point.chunks, point.sr.steps, point.sr.rounds,
                            point.latency_optimal     ? " (latency-opt)"
                            : point.bandwidth_optimal ? " (bandwidth-opt)"
                                                      : ""),
                name,
                {},
                {},
                {}};
    for (Protocol protocol : kDemoProtocols) {
      // Through the GC3 passes (`syncoll lower --passes gc3`): on 8 GPUs their receives fused
      // with the sends that forward them save a step's overhead at latency-bound sizes, where
      // a thread block per connection is 5-13% slower on the calibrated DGX-1.
      lowering::DslOptions options;
      options.protocol = protocol;
      SYNCOLL_TRY(dsl, lowering::algorithm_to_dsl(point.algorithm, t, spec, options));
      SYNCOLL_TRY(lowered, lowering::lower(dsl));
      if (!lowered.verified) {
        fmt::print("{} ({}) fails verification:\n{}", name, protocol_traits(protocol).name,
                   lowered.verified.error().to_text());
        return 1;
      }
      entry.programs.emplace(protocol, std::move(*lowered.verified));
    }
    SYNCOLL_CHECK(save(dir, name + ".json", to_canonical_json(algorithm_to_json(point.algorithm))));
    SYNCOLL_CHECK(
        save_drawing(renderer, dir, name + "_algorithm", viz::algorithm_dot(point.algorithm)));
    entries.push_back(std::move(entry));
  }

  std::vector<int64_t> sizes;
  for (int64_t s = 1024; s <= (int64_t(1) << 30); s *= 2)
    sizes.push_back(s);
  progress(fmt::format("simulating NCCL's choice and {} programs at {} sizes, 1 KiB to 1 GiB, "
                       "on the calibrated DGX-1 system",
                       entries.size() - 1, sizes.size()));
  std::vector<std::string> choices;
  for (int64_t size : sizes) {
    SYNCOLL_TRY(run, nccl::simulate_nccl(CollectiveKind::Allgather, size, system, machine));
    entries[0].us.push_back(double(run.result.completion) / 1e6);
    entries[0].protocol_used.push_back(run.choice.protocol);
    choices.push_back(run.info);
  }
  // A synthesized program runs under the MSCCL executor's per-step cost, as `syncoll simulate
  // XML --system dgx1` runs the XML of that protocol, in the protocol that is fastest at the size
  // (MSCCL registers programs per size range and protocol).
  const simulator::CostModel executor = system.interpreted();
  const Topology programs_run_on = system.program_topology();
  std::set<std::pair<size_t, Protocol>> reported;
  for (size_t k = 1; k < entries.size(); ++k) {
    Entry &e = entries[k];
    for (int64_t size : sizes) {
      std::optional<std::pair<double, Protocol>> fastest;
      for (const auto &[protocol, program] : e.programs) {
        simulator::ProgramSimOptions o;
        o.size_bytes = size;
        o.model = executor;
        SYNCOLL_TRY(sim, simulator::simulate_program(program.program(), programs_run_on, o));
        if (sim.deadlocked)
          return fail({}, fmt::format("{} deadlocked in simulation at {} bytes", e.name, size));
        const double us = double(sim.result.completion) / 1e6;
        if (!fastest || us < fastest->first)
          fastest = {us, protocol};
      }
      e.us.push_back(fastest->first);
      e.protocol_used.push_back(fastest->second);
      reported.emplace(k, fastest->second);
    }
  }
  // One XML per protocol a row reports: the very programs timed.
  for (const auto &[k, protocol] : reported)
    SYNCOLL_CHECK(
        save(dir, fmt::format("{}_{}.xml", entries[k].file_stem, protocol_traits(protocol).name),
             lowering::write_deployment_xml(entries[k].programs.at(protocol))));
  std::string csv = "size_bytes,program,protocol,time_us,algbw_gbps,speedup_vs_nccl\n";
  std::vector<viz::Series> series;
  for (size_t k = 0; k < entries.size(); ++k) {
    viz::Series s{entries[k].name, {}};
    for (size_t i = 0; i < sizes.size(); ++i) {
      const double speedup = entries[0].us[i] / entries[k].us[i];
      csv += fmt::format("{},{},{},{:.3f},{:.2f},{:.3f}\n", sizes[i], entries[k].name,
                         protocol_traits(entries[k].protocol_used[i]).name, entries[k].us[i],
                         double(sizes[i]) / (entries[k].us[i] * 1e3), speedup);
      s.values.push_back(speedup);
    }
    series.push_back(std::move(s));
  }
  SYNCOLL_CHECK(save(dir, "allgather_dgx1.csv", csv));
  SYNCOLL_CHECK(
      save(dir, "speedup.svg",
           viz::speedup_svg(sizes, series, "DGX-1 Allgather: speedup over NCCL's own choice",
                            "speedup (NCCL time / time)")));
  // The latency-optimal program drawn, and its timeline at 1 KiB.
  if (entries.size() > 1) {
    SYNCOLL_CHECK(save_drawing(renderer, dir, "latency_optimal_program",
                               viz::program_dot(entries[1].programs.at(Protocol::LL).program())));
    simulator::ProgramSimOptions o;
    o.size_bytes = 1024;
    o.trace = true;
    o.model = executor;
    SYNCOLL_TRY(sim, simulator::simulate_program(
                         entries[1].programs.at(entries[1].protocol_used[0]).program(),
                         programs_run_on, o));
    SYNCOLL_CHECK(save(dir, "latency_optimal_timeline.svg",
                       viz::timeline_svg(sim.result, entries[1].name + " at 1 KiB")));
  }

  fmt::print("\n{:>9}", "size");
  for (const Entry &e : entries)
    fmt::print(" {:>26}", e.name);
  fmt::print("\n");
  for (size_t i = 0; i < sizes.size(); i += 5) {
    fmt::print("{:>9}", format_size(sizes[i]));
    for (const Entry &e : entries)
      fmt::print(" {:>9.2f} us {:<6} {:>5.2f}x", e.us[i], protocol_traits(e.protocol_used[i]).name,
                 entries[0].us[i] / e.us[i]);
    fmt::print("\n");
  }
  const bool ahead = entries.size() > 1 && entries[1].us[0] < entries[0].us[0];
  const std::string_view latency_protocol =
      entries.size() > 1 ? protocol_traits(entries[1].protocol_used[0]).name : "-";
  fmt::print("\nNCCL's choice: {}\n               {}\n", choices.front(), choices.back());
  fmt::print("latency-optimal Allgather at 1 KiB: {:.2f} us in {} ({}_{}.xml) vs NCCL's choice "
             "{:.2f} us ({})\n",
             entries.size() > 1 ? entries[1].us[0] : 0.0, latency_protocol,
             entries.size() > 1 ? entries[1].file_stem : "-", latency_protocol, entries[0].us[0],
             ahead ? "ahead" : "NOT ahead");
  fmt::print("wrote the XMLs, allgather_dgx1.csv, speedup.svg and the drawings to {} in {:.1f} s\n",
             dir.string(), std::chrono::duration<double>(Clock::now() - start).count());
  return ahead ? 0 : 1;
}

} // namespace

void add_demo_command(CLI::App &app, RunResult &result) {
  auto dir = std::make_shared<std::string>("syncoll-demo");
  CLI::App *demo = app.add_subcommand(
      "demo", "synthesize, lower, verify, simulate and draw the DGX-1 Allgather frontier");
  demo->add_option("-o,--output", *dir, "output folder")
      ->capture_default_str()
      ->check(writable_folder());
  add_renamed_option(*demo, "--out", "--output", *dir);
  demo->callback([&result, dir] {
    auto code = run_demo(*dir);
    if (!code) {
      print_diagnostics(code.error());
      result.exit_code = kBadInput;
      return;
    }
    result.exit_code = *code == 0 ? kSuccess : kCheckFailed;
  });
}

} // namespace syncoll::cli
