// A node read from NCCL's (or RCCL's) topology dump as the system `--system node.xml` runs:
// the calibrated preset whose node it is, or a node of its own with its generation's constants.
#include "model/runtime_constants.h"
#include "nccl/search.h"
#include "nccl/topo_xml.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

namespace syncoll::nccl {
namespace {

// The network a node of its own is on, by its fastest NICs' kind and line rate: EFA devices
// (rdmap...) on EFA, Mellanox HCAs (mlx5_...) on InfiniBand of that rate, any other port on
// RoCE; none where the dump lists no NIC.
std::optional<Fabric> fabric_of_nics(const std::vector<XmlNic> &nics) {
  if (nics.empty())
    return std::nullopt;
  const auto fastest = std::max_element(
      nics.begin(), nics.end(), [](const XmlNic &a, const XmlNic &b) { return a.gbps < b.gbps; });
  const double gbits = fastest->gbps * 8;
  if (fastest->name.starts_with("rdmap"))
    return gbits <= 100 ? Fabric::EfaV1 : gbits <= 200 ? Fabric::EfaV3 : Fabric::EfaV4;
  if (fastest->name.starts_with("mlx"))
    return gbits <= 100   ? Fabric::InfinibandEdr
           : gbits <= 200 ? Fabric::InfinibandHdr
           : gbits <= 400 ? Fabric::InfinibandNdr
                          : Fabric::InfinibandXdr;
  return Fabric::Roce;
}

// NCCL's CPU kind of a host: x86 AMD where any of its sockets is, Arm where none is x86, else
// Intel.
HostCpu host_cpu_of(const std::vector<XmlCpu> &cpus) {
  const auto amd = [](const XmlCpu &c) { return c.arch == "x86_64" && c.vendor == "AuthenticAMD"; };
  if (std::any_of(cpus.begin(), cpus.end(), amd))
    return HostCpu::Amd;
  const auto x86 = [](const XmlCpu &c) { return c.arch == "x86_64"; };
  return std::any_of(cpus.begin(), cpus.end(), x86) ? HostCpu::Intel : HostCpu::Arm;
}

} // namespace

Expected<DumpedSystem> system_of_dump(const XmlMachine &machine, const std::string &file) {
  DumpedSystem out;
  const SystemPreset *node = machine.includes_pcie ? nullptr : preset_of_node(*machine.topology);
  if (node) {
    out.preset = *node;
    const bool efa = !machine.nics.empty() &&
                     std::all_of(machine.nics.begin(), machine.nics.end(),
                                 [](const XmlNic &n) { return n.name.starts_with("rdmap"); });
    if (efa)
      for (const SystemPreset &s : all_system_presets())
        if (s.node_topology == node->node_topology &&
            fabric_traits(s.fabric).name.starts_with("efa")) {
          out.preset = s;
          break;
        }
  } else {
    std::set<std::string> kinds;
    for (const XmlGpu &g : machine.gpus)
      kinds.insert(kind_of(g));
    if (kinds.size() != 1)
      return fail({file, 1, 1}, fmt::format("its GPUs are of {} kinds ({}); a system's are of one",
                                            kinds.size(), fmt::join(kinds, ", ")));
    const XmlGpu &gpu = machine.gpus.front();
    const std::optional<GpuGeneration> known = generation_of(gpu);
    if (!known && is_amd(gpu))
      return fail({file, 1, 1},
                  fmt::format("its GPUs are {}, which no generation row has (gfx90a, gfx942 and "
                              "gfx950 do); simulate it as one node with -t {}",
                              kind_of(gpu), file));
    // An NVIDIA GPU without a row of its own (sm 86, 89: PCIe cards) runs with Ampere's
    // constants, as a plain topology's search does (nccl_generation_for), but without LL128,
    // which NCCL enables on sm 70, 80, 90, 100 and 120 alone.
    const GpuGeneration generation = known.value_or(GpuGeneration::Ampere);
    const auto same =
        std::find_if(all_system_presets().begin(), all_system_presets().end(),
                     [&](const SystemPreset &s) { return s.generation == generation; });
    if (same == all_system_presets().end())
      return fail({file, 1, 1},
                  fmt::format("its GPUs are {}, which no calibrated machine has (syncoll topo "
                              "list); simulate it as one node with -t {}",
                              generation_traits(generation).name, file));
    const std::string_view row = generation_traits(generation).name;
    out.label = known ? fmt::format("{} GPUs {}", machine.gpus.size(), row)
                      : fmt::format("{} GPUs of {} with {}'s constants (no row of its own)",
                                    machine.gpus.size(), kind_of(gpu), row);
    out.preset = *same;
    const auto &ll128 = kNcclLl128ComputeCapabilities;
    out.preset.ll128_by_default =
        is_amd(gpu) ? same->ll128_by_default
                    : std::find(std::begin(ll128), std::end(ll128), gpu.sm) != std::end(ll128);
    if (const auto fabric = fabric_of_nics(machine.nics))
      out.preset.fabric = *fabric;
    out.name = std::make_shared<const std::string>(machine.topology->name());
    out.preset.name = *out.name;
    out.preset.description = written_by_rccl(machine) ? "a node read from RCCL's topology dump"
                                                      : "a node read from NCCL's topology dump";
    out.preset.node_topology = {};
    out.preset.gpus_per_node = machine.topology->num_ranks();
    out.preset.nics_per_node = std::min(out.preset.nics_per_node, out.preset.gpus_per_node);
    // The dump's PCIe switches and sockets carry what the preset's host paths stood for.
    out.preset.host_path_gbps = 0;
    out.preset.socket_links = 0;
    out.preset.source = "its links from the dump; launch and fabric of the generation's first "
                        "calibrated preset";
    out.node = *machine.topology;
  }
  // The host's CPUs as the dump lists them (NCCL reads its tuning's CPU rows from the same).
  if (!machine.cpus.empty())
    out.preset.host_cpu = host_cpu_of(machine.cpus);
  double fastest = 0;
  for (const XmlNic &n : machine.nics)
    fastest = std::max(fastest, n.gbps);
  if (fastest > 0) {
    out.preset.nic_path = nccl_nic_path(machine);
    out.gpu_direct = std::all_of(machine.nics.begin(), machine.nics.end(), [&](const XmlNic &n) {
      return n.gbps != fastest || n.gpu_direct;
    });
    out.preset.nic_gbps = fastest;
    out.preset.nics_per_node =
        int(std::count_if(machine.nics.begin(), machine.nics.end(),
                          [&](const XmlNic &n) { return n.gbps == fastest; }));
  }
  return out;
}

} // namespace syncoll::nccl
