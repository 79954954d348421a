// `syncoll topo list` and `syncoll topo show`.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "model/hardware.h"
#include "model/json_document.h"
#include "model/text.h"
#include "model/topology_json.h"
#include "nccl/topo_xml.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {
namespace {

void print_topology(const Topology &t) {
  fmt::print("topology {}: {} ranks, {}{} links, {} bandwidth relations\n", t.name(), t.num_ranks(),
             t.num_switches() > 0 ? fmt::format("{} switches, ", t.num_switches()) : "",
             t.links().size(), t.relations().size());
  const Hierarchy &h = t.hierarchy();
  if (!h.empty()) {
    std::string levels;
    for (const auto &l : h.levels)
      levels += fmt::format("{}{} {}", levels.empty() ? "" : " x ", l.size, l.name);
    fmt::print("hierarchy: {} ({} levels)", levels, h.levels.size());
    if (h.nics_per_node > 0)
      fmt::print(", {} NIC(s) per {} at {} GB/s", h.nics_per_node, h.levels.front().name,
                 format_decimal(h.nic_bandwidth.value));
    fmt::print("\n");
  }
  if (t.num_switches() > 0 && t.num_switches() <= 32) {
    std::string names;
    for (const std::string &name : t.switches())
      names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
    fmt::print("switches (vertices {} on): {}\n", t.num_ranks(), names);
  }
  if (t.num_ranks() <= 32) {
    fmt::print("link capacity (chunks per round), row = source rank:\n     ");
    for (int d = 0; d < t.num_ranks(); ++d)
      fmt::print("{:>3}", d);
    fmt::print("\n");
    for (int s = 0; s < t.num_ranks(); ++s) {
      fmt::print("{:>4} ", s);
      for (int d = 0; d < t.num_ranks(); ++d) {
        int c = t.capacity(RankId(s), RankId(d));
        fmt::print("{:>3}", s == d   ? std::string("-")
                            : c == 0 ? std::string(".")
                                     : std::to_string(c));
      }
      fmt::print("\n");
    }
  }
  // Links grouped by their cost, so a topology with two link classes prints two lines.
  std::map<std::tuple<int, double, double>, int> classes;
  for (const Link &l : t.links())
    ++classes[{l.capacity, l.alpha.count, l.bandwidth.value}];
  fmt::print("link classes:\n");
  for (const auto &[k, count] : classes)
    fmt::print("  {} links: capacity {}, alpha {} ns, bandwidth {} GB/s\n", count, std::get<0>(k),
               format_decimal(std::get<1>(k)), format_decimal(std::get<2>(k)));
  if (!t.relations().empty()) {
    fmt::print("bandwidth relations:\n");
    size_t shown = 0;
    for (const auto &r : t.relations()) {
      if (++shown > 16) {
        fmt::print("  ... and {} more (see --json)\n", t.relations().size() - 16);
        break;
      }
      fmt::print("  {}: {} links, capacity {} per round\n", r.name, r.links.size(), r.capacity);
    }
  }
}

// Whether NCCL sends through the NIC with GPUDirect RDMA, and where not, what stops it.
std::string gpu_direct_of(const nccl::XmlNic &n) {
  if (n.gpu_direct)
    return "yes";
  if (!n.gdr)
    return "no (the NIC's gdr flag)";
  if (n.nearest_ranks.empty())
    return "no (no GPU)";
  if (n.path > NcclPathType::Pxb && n.path != NcclPathType::P2c)
    return fmt::format("no (path {} is wider than NCCL_NET_GDR_LEVEL's default PXB)",
                       nccl::nccl_path_name(n.path));
  return "no (the GPUs' gdr flag)";
}

// What NCCL's (RCCL's) dump says beyond the links: sockets, GPUs and NICs, and which model the
// links are.
void print_nccl_machine(const nccl::XmlMachine &m) {
  // AMD's GPUs are joined by xGMI, NVIDIA's by NVLink.
  const bool rccl = nccl::written_by_rccl(m);
  const std::string_view links = rccl ? "xGMI" : "NVLink";
  fmt::print("{} topology: {} socket(s), {} GPU(s){}, {} NIC port(s); {}\n", rccl ? "RCCL" : "NCCL",
             m.cpus.size(), m.gpus.size(),
             m.generation ? fmt::format(" ({})", generation_traits(*m.generation).name) : "",
             m.nics.size(),
             m.includes_pcie
                 ? fmt::format("{} does not join every pair: the PCIe tree and the sockets are "
                               "links too",
                               links)
                 : fmt::format("{0} joins every pair: the topology is {0} alone", links));
  for (const nccl::XmlCpu &c : m.cpus)
    fmt::print("  cpu{}: {} {}, {} to the other sockets at {} GB/s\n", c.numa,
               c.arch.empty() ? "?" : c.arch, c.vendor.empty() ? "?" : c.vendor,
               c.interconnect.name, format_decimal(c.interconnect.gbps));
  for (size_t r = 0; r < m.gpus.size(); ++r) {
    const nccl::XmlGpu &g = m.gpus[r];
    fmt::print("  rank {}: dev {} {} {} on cpu{}, PCIe {} GB/s", r, g.dev, g.busid,
               nccl::kind_of(g), m.cpus[size_t(g.cpu)].numa, format_decimal(g.pcie_gbps));
    if (g.direct_nvlinks > 0)
      fmt::print(", {} {} to GPUs", g.direct_nvlinks, nccl::is_amd(g) ? "xGMI links" : "NVLinks");
    if (g.nvswitch_nvlinks > 0)
      fmt::print(", {} NVLinks to NVSwitch", g.nvswitch_nvlinks);
    if (g.c2c_gbps > 0)
      fmt::print(", C2C {} GB/s", format_decimal(g.c2c_gbps));
    if (g.self_nvlinks > 0)
      fmt::print(", {} NVLinks to itself (passed over, as NCCL's paths pass over them)",
                 g.self_nvlinks);
    fmt::print("\n");
  }
  for (const nccl::XmlNic &n : m.nics) {
    std::string nearest;
    for (int r : n.nearest_ranks)
      nearest += fmt::format("{}{}", nearest.empty() ? "" : " ", r);
    fmt::print("  nic {} (dev {}, port {}): {} GB/s, nearest ranks {} at {}, GPUDirect RDMA {}\n",
               n.name.empty() ? "?" : n.name, n.dev, n.port, format_decimal(n.gbps),
               nearest.empty() ? "none" : nearest, nccl::nccl_path_name(n.path), gpu_direct_of(n));
  }
}

// The lines of a fabric's row that only some fabrics have: NCCL's protocols where a network
// plugin restricts them, the proxy's cost per message where it queues.
std::string fabric_extras(const FabricTraits &f) {
  std::string out;
  if (f.simple_protocol_only)
    out += fmt::format("{:<58}protocols: Simple only (aws-ofi-nccl sets NCCL_PROTO=simple)\n", "");
  if (f.proxy_message_us > 0)
    out += fmt::format("{:<58}proxy: {:.1f} us a message, in series per GPU\n", "",
                       f.proxy_message_us);
  return out;
}

} // namespace

void add_topo_commands(CLI::App &app, RunResult &result) {
  CLI::App *topo = app.add_subcommand("topo", "list and show topologies");
  topo->require_subcommand(1);

  CLI::App *list = topo->add_subcommand(
      "list", "list the library topologies, the calibrated systems (simulate --system) and the "
              "fabrics between their nodes (--fabric)");
  list->callback([&result] {
    fmt::print("{:<16} {:<48} {}\n", "name", "parameters", "description");
    for (const auto &e : topology_library())
      fmt::print("{:<16} {:<48} {}\n", e.name, e.parameters, e.description);
    fmt::print("\n{:<18} {:<20} {}\n", "system", "generation", "description");
    // Each system with where its figures come from, on a line of its own.
    for (const SystemPreset &s : all_system_presets())
      fmt::print("{:<18} {:<20} {}\n{:<39} fabric: {}; host CPUs: {}; source: {}\n", s.name,
                 generation_traits(s.generation).name, s.description, "",
                 fabric_traits(s.fabric).name, host_cpu_name(s.host_cpu), s.source);
    fmt::print("\n{:<10} {:>7} {:>10} {:>9} {:>10} {:>6}  {}\n", "fabric", "payload", "latency us",
               "host us", "conn GB/s", "LL128", "description");
    for (const FabricTraits &f : all_fabrics())
      fmt::print("{:<10} {:>7.3f} {:>10.2f} {:>9.2f} {:>10.1f} {:>6.2f}  {}\n{:<58}in-network "
                 "reduction: {}\n{}{:<58}source: {}\n",
                 f.name, f.nic_payload_share, f.message_latency_us, f.host_cost_us,
                 f.connection_gbps, f.ll128_connection_share, f.description, "",
                 f.in_network_reduction.empty() ? "none (no --collnet)" : f.in_network_reduction,
                 fabric_extras(f), "", f.source);
    result.exit_code = kSuccess;
  });

  CLI::App *show = topo->add_subcommand(
      "show", "show a library topology, a topology file, or NCCL's topology dump (.xml)");
  auto options = std::make_shared<TopologyOptions>();
  options->add_to(*show, /*positional=*/true, /*required=*/true);
  auto json = std::make_shared<bool>(false);
  show->add_flag("--json", *json, "print the topology as JSON (docs/formats.md)");
  show->callback([&result, options, json] {
    auto t = resolve_topology(*options);
    if (!t) {
      print_diagnostics(t.error());
      result.exit_code = kBadInput;
      return;
    }
    if (*json) {
      std::cout << to_canonical_json(topology_to_json(*t));
    } else {
      if (nccl::names_nccl_topology_file(options->spec))
        print_nccl_machine(*nccl::read_nccl_topology_file(options->spec));
      print_topology(*t);
    }
    result.exit_code = kSuccess;
  });
}

} // namespace syncoll::cli
