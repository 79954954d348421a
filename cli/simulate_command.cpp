// `syncoll simulate`: an algorithm, a thread-block program or an NCCL baseline on a topology,
// for one message size or a sweep.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/algorithm.h"
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "simulator/algorithm_sim.h"
#include "simulator/baselines.h"
#include "simulator/program_sim.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {
namespace {

struct SimulateArgs {
  std::string input;
  std::string baseline;
  TopologyOptions topology;
  std::string collective;
  std::optional<int> chunk_factor;
  std::optional<int> root;
  std::string size = "1MiB";
  std::string protocol;
  std::string preset;
  std::string mode = "sync";
  std::string switching = "cut-through";
  std::string sharing;
  int channels = 1;
  std::string trace;
  std::string csv;
};

struct Row {
  int64_t size;
  simulator::SimulationResult result;
  bool deadlocked = false;
};

} // namespace

void add_simulate_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App *cmd = app.add_subcommand(
      "simulate", "time an algorithm (JSON), a thread-block program (MSCCL-IR XML) or an NCCL "
                  "baseline on a topology under the alpha-beta model (docs/cost-model.md)");
  cmd->add_option("input", args->input, "algorithm JSON or MSCCL-IR XML");
  cmd->add_option("--baseline", args->baseline,
                  "simulate NCCL's algorithm instead: nccl-ring, or nccl-tree (allreduce)")
      ->check(CLI::IsMember({"nccl-ring", "nccl-tree"}));
  args->topology.add_to(*cmd, /*positional=*/false, /*required=*/true);
  cmd->add_option("-c,--collective", args->collective,
                  "collective (default: the input's; required with --baseline)");
  cmd->add_option("-C,--chunk-factor", args->chunk_factor, "chunks per rank buffer (algorithms)");
  cmd->add_option("--root", args->root, "root rank of rooted collectives");
  cmd->add_option("-s,--size,--sizes", args->size,
                  "size as nccl-tests counts it (4096, 64KiB, 1GiB), or a sweep A..B doubling")
      ->capture_default_str();
  cmd->add_option("--protocol", args->protocol, "Simple, LL or LL128 (default: the program's)");
  cmd->add_option("--preset", args->preset, "cost model preset: nccl")
      ->check(CLI::IsMember({"nccl"}));
  cmd->add_option("--mode", args->mode, "algorithms: sync (step-synchronous) or dataflow")
      ->check(CLI::IsMember({"sync", "dataflow"}))
      ->capture_default_str();
  cmd->add_option("--switching", args->switching,
                  "how transfers cross ranks on multi-hop routes: cut-through or "
                  "store-and-forward")
      ->check(CLI::IsMember({"cut-through", "store-and-forward"}))
      ->capture_default_str();
  cmd->add_option("--sharing", args->sharing,
                  "share every bandwidth relation this way instead of as the topology says: "
                  "fifo (one transfer after another) or fair (max-min fair)")
      ->check(CLI::IsMember({"fifo", "fair"}));
  cmd->add_option("--channels", args->channels, "baseline channels")->check(CLI::Range(1, 32));
  cmd->add_option("--trace", args->trace, "write a Chrome-trace timeline (one size only)");
  cmd->add_option("--csv", args->csv, "write the sweep as CSV");
  cmd->callback([&result, args] {
    auto bad = [&](const Diagnostics &d) {
      print_diagnostics(d);
      result.exit_code = kBadInput;
    };
    auto message = [](std::string text) {
      return Diagnostics({Severity::Error, {}, std::move(text), {}});
    };
    if (args->input.empty() == args->baseline.empty())
      return bad(message("give either an input file or --baseline"));
    auto topology = resolve_topology(args->topology);
    if (!topology)
      return bad(topology.error());
    if (!args->sharing.empty()) {
      TopologyDraft draft = topology->to_draft();
      for (auto &relation : draft.relations)
        relation.sharing = args->sharing == "fair" ? RelationSharing::Fair : RelationSharing::Fifo;
      topology = Topology::create(draft);
      if (!topology)
        return bad(topology.error());
    }
    auto sizes = parse_size_range(args->size);
    if (!sizes)
      return bad(sizes.error());
    if (!args->trace.empty() && sizes->size() != 1)
      return bad(message("--trace needs a single --size"));
    std::optional<Protocol> protocol;
    if (!args->protocol.empty()) {
      protocol = parse_protocol(args->protocol);
      if (!protocol)
        return bad(message(
            fmt::format("unknown protocol '{}' (expected Simple, LL or LL128)", args->protocol)));
    }
    simulator::CostModel model =
        args->preset == "nccl" ? simulator::nccl_preset() : simulator::CostModel{};
    model.switching = args->switching == "store-and-forward" ? simulator::Switching::StoreAndForward
                                                             : simulator::Switching::CutThrough;

    std::optional<Program> program;
    std::optional<Algorithm> algorithm;
    std::string what;
    if (!args->baseline.empty()) {
      if (args->collective.empty())
        return bad(message("--baseline needs --collective"));
      auto kind = parse_collective_kind(args->collective);
      if (!kind)
        return bad(message(fmt::format("unknown collective '{}'", args->collective)));
      if (args->baseline == "nccl-tree") {
        if (*kind != CollectiveKind::Allreduce)
          return bad(message("the NCCL tree baseline is an allreduce"));
        auto parent = simulator::find_tree(*topology, RankId(0));
        if (!parent)
          return bad(message(
              fmt::format("topology '{}' has no tree over bidirectional links", topology->name())));
        auto p =
            simulator::nccl_tree_allreduce_program(*parent, 4, protocol.value_or(Protocol::Simple));
        if (!p)
          return bad(p.error());
        program = *p;
        what = "NCCL tree allreduce (4 pipelined chunks)";
      } else {
        auto ring = simulator::find_ring(*topology);
        if (!ring)
          return bad(message(
              fmt::format("topology '{}' has no ring for the NCCL baseline", topology->name())));
        auto p = simulator::nccl_ring_program(*kind, *ring, args->channels,
                                              protocol.value_or(Protocol::Simple));
        if (!p)
          return bad(p.error());
        program = *p;
        what = fmt::format("NCCL ring {} ({} channel(s))", args->collective, args->channels);
      }
    } else {
      auto text = read_text_file(args->input);
      if (!text)
        return bad(text.error());
      // A program in either form, or an algorithm JSON.
      std::optional<JsonDocument> doc;
      if (sniff_program_format(*text) == ProgramFormat::Json) {
        auto parsed = JsonDocument::parse(*text, args->input);
        if (!parsed)
          return bad(parsed.error());
        doc = std::move(*parsed);
      }
      if (!doc || is_program_json(doc->root())) {
        auto p = parse_program(*text, args->input);
        if (!p)
          return bad(p.error());
        print_diagnostics(p->warnings);
        program = p->value;
      } else {
        auto a = algorithm_from_json(doc->root());
        if (!a)
          return bad(a.error());
        algorithm = *a;
      }
      what = args->input;
    }

    std::vector<Row> rows;
    if (program) {
      for (int64_t size : *sizes) {
        simulator::ProgramSimOptions o;
        o.size_bytes = size;
        o.model = model;
        o.protocol = protocol;
        o.trace = !args->trace.empty();
        auto sim = simulator::simulate_program(*program, *topology, o);
        if (!sim)
          return bad(sim.error());
        rows.push_back({size, std::move(sim->result), sim->deadlocked});
      }
    } else {
      std::string coll = args->collective.empty() ? algorithm->target.collective : args->collective;
      auto collective = resolve_collective(
          coll, topology->num_ranks(), args->chunk_factor.value_or(algorithm->target.chunk_factor),
          args->root ? args->root : algorithm->target.root);
      if (!collective)
        return bad(collective.error());
      const double efficiency =
          model.efficiency[simulator::CostModel::index(protocol.value_or(Protocol::Simple))];
      for (int64_t size : *sizes) {
        // --size counts like nccl-tests: the output for allgather and gather.
        const int64_t input = input_bytes_for_nccl_tests_size(*collective, size);
        auto sim = simulator::simulate_algorithm(
            *algorithm, *topology, *collective, input,
            {args->mode == "dataflow" ? simulator::AlgorithmTiming::Dataflow
                                      : simulator::AlgorithmTiming::StepSynchronous,
             efficiency, !args->trace.empty(), model.switching});
        if (!sim)
          return bad(sim.error());
        rows.push_back({size, std::move(*sim), false});
      }
    }

    fmt::print("simulate {} on {} ({} ranks){}\n", what, topology->name(), topology->num_ranks(),
               args->preset.empty() ? "" : ", preset " + args->preset);
    fmt::print("{:>10} {:>14} {:>12} {:>12}\n", "size", "time (us)", "algbw GB/s", "busbw GB/s");
    bool deadlocked = false;
    std::string csv = "size_bytes,time_us,algbw_gbps,busbw_gbps,deadlocked\n";
    for (const Row &r : rows) {
      deadlocked = deadlocked || r.deadlocked;
      const double us = double(r.result.completion) / 1e6;
      if (r.deadlocked)
        fmt::print("{:>10} {:>14} {:>12} {:>12}\n", format_size(r.size), "deadlock", "-", "-");
      else
        fmt::print("{:>10} {:>14.3f} {:>12.2f} {:>12.2f}\n", format_size(r.size), us,
                   r.result.algbw_gbps, r.result.busbw_gbps);
      csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{}\n", r.size, us, r.result.algbw_gbps,
                         r.result.busbw_gbps, r.deadlocked ? 1 : 0);
    }
    if (rows.size() == 1 && !rows[0].deadlocked) {
      const auto &links = rows[0].result.links;
      std::vector<size_t> order(links.size());
      for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return links[a].utilization > links[b].utilization;
      });
      fmt::print("busiest links:");
      for (size_t i = 0; i < std::min<size_t>(4, order.size()); ++i)
        fmt::print(" {}->{} {:.0f}%", links[order[i]].src.value(), links[order[i]].dst.value(),
                   100 * links[order[i]].utilization);
      fmt::print("\n");
    }
    if (!args->csv.empty())
      if (auto w = write_output(args->csv, csv); !w)
        return bad(w.error());
    if (!args->trace.empty())
      if (auto w = write_output(args->trace,
                                to_canonical_json(simulator::to_chrome_trace(rows.front().result)));
          !w)
        return bad(w.error());
    result.exit_code = deadlocked ? kCheckFailed : kSuccess;
  });
}

} // namespace syncoll::cli
