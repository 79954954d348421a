#include "nccl/topo_xml.h"

#include "model/detail/xml_reader.h"
#include "model/runtime_constants.h"
#include "model/topology_library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

namespace syncoll::nccl {
namespace {

// A CPU socket's switch vertex in the machine's topology.
std::string socket_vertex_name(const XmlCpu &cpu) {
  return fmt::format("cpu{}", cpu.numa);
}

using detail::XmlReader;

constexpr int64_t kNvSwitchClass = 0x068000; // an NVLink's tclass when its far end is NVSwitch
// The speed NCCL gives a NIC that reports none, 0 or -1 (some NICs, a VM's virtual functions),
// Mb/s: 10 Gb/s.
constexpr int64_t kNcclUnreportedNicMbps = 10000;

// A `<pci>` element: a bridge, a GPU's or a NIC's function, or another device.
struct PciNode {
  std::string busid;
  int parent = -1; ///< index of the enclosing <pci>, -1 under the CPU
  int cpu = 0;
  double gbps = 0; ///< its link to the parent, per direction
  int gpu = -1;    ///< index into the GPUs read, when it holds one
  int64_t pci_class = 0;
  /// vendor, device, subsystem vendor and subsystem device, 16 bits each (NCCL's pci.device)
  uint64_t device_id = 0;
  pugi::xml_node where;
};

// A Broadcom PEX switch in base mode, Gen4 (PEX88000) or Gen5 (PEX89000), by NCCL's masks: it
// shows itself as two levels of switch that sustain full bandwidth between all ports, and NCCL
// fuses the lower level into the upper (ncclTopoFlattenBcmSwitches).
bool is_broadcom_pex(uint64_t device_id) {
  const uint64_t family = device_id & ~uint64_t(0xfff);
  return family == 0x1000c0101000a000 || family == 0x1000c03010000000;
}

// A GPU function's PCI class: a display controller (0x03xxxx: VGA 0x0300, 3D 0x0302), or a
// processing accelerator (0x12xxxx), as AMD's MI300X and MI355X functions are.
bool is_gpu_class(int64_t pci_class) {
  return (pci_class >> 16) == 0x03 || (pci_class >> 16) == 0x12;
}

// A link between GPUs: NCCL's <nvlink> or RCCL's <xgmi>, which NCCL's search treats alike.
struct RawNvlink {
  std::string_view element; ///< "nvlink" or "xgmi"
  std::string target;
  int count = 0;
  int64_t tclass = 0;
  pugi::xml_node where;
};

struct RawGpu {
  XmlGpu gpu;
  std::optional<int> rank;
  int pci = -1;
  std::vector<RawNvlink> nvlinks;
  pugi::xml_node where;
};

struct RawNic {
  XmlNic nic;
  int pci = -1; ///< its enclosing <pci>, -1 directly under the CPU
  int cpu = 0;
};

// NCCL's PCIe rates per lane by the link_speed text's GT/s (topo.cc: width x code / 80 GB/s),
// and its default where the text is missing or unknown (a virtual function writes "Unknown").
double pcie_gbps(std::string_view speed, std::string_view width) {
  double code = 60;
  const double gts = std::strtod(std::string(speed).c_str(), nullptr);
  if (gts >= 63)
    code = 480;
  else if (gts >= 31)
    code = 240;
  else if (gts >= 15)
    code = 120;
  else if (gts >= 7.9)
    code = 60;
  else if (gts >= 4.9)
    code = 30;
  else if (gts >= 2.4)
    code = 15;
  int lanes = std::atoi(std::string(width).c_str());
  if (lanes <= 0)
    lanes = 16;
  return lanes * code / 80.0;
}

int64_t hex_value(std::string_view text) {
  return std::strtoll(std::string(text).c_str(), nullptr, 16);
}

class TopoReader {
public:
  TopoReader(std::string_view text, const std::string &file) : x_(text, file, "NCCL's topology") {}

  Expected<void> read(const pugi::xml_node &system) {
    for (const pugi::xml_node &cpu : system.children("cpu"))
      SYNCOLL_CHECK(read_cpu(cpu));
    if (gpus_.empty())
      return no_gpu(system);
    return {};
  }

  std::vector<XmlCpu> cpus_;
  std::vector<PciNode> pcis_;
  std::vector<RawGpu> gpus_;
  std::vector<RawNic> nics_;
  XmlReader x_;

private:
  std::set<std::string> busids_;

  // A file without a <gpu>: where it lists GPU functions, it is one NCCL_TOPO_FILE completes
  // from the GPUs it detects (their NVLinks among them), which syncoll has no machine to do.
  Expected<void> no_gpu(const pugi::xml_node &system) const {
    const auto is_gpu_function = [](const PciNode &p) { return is_gpu_class(p.pci_class); };
    const auto first = std::find_if(pcis_.begin(), pcis_.end(), is_gpu_function);
    if (first == pcis_.end())
      return fail(x_.at(system), "the topology holds no <gpu>");
    const auto functions = std::count_if(pcis_.begin(), pcis_.end(), is_gpu_function);
    return fail(x_.at(first->where),
                fmt::format("the topology holds no <gpu>: its {} GPU function(s) (class {:#08x} "
                            "at {}, ...) are PCI placement only, which NCCL_TOPO_FILE completes "
                            "with the GPUs NCCL detects; give the file NCCL_TOPO_DUMP_FILE "
                            "writes on the machine",
                            functions, first->pci_class, first->busid));
  }

  Expected<void> read_cpu(const pugi::xml_node &cpu) {
    SYNCOLL_TRY(numa, x_.int_attr(cpu, "numaid", -1, 1 << 20));
    if (std::any_of(cpus_.begin(), cpus_.end(), [&](const XmlCpu &c) { return c.numa == numa; }))
      return fail(x_.at(cpu, "numaid"), fmt::format("a second <cpu> with numaid {}", numa));
    XmlCpu c;
    c.numa = int(numa);
    c.arch = cpu.attribute("arch").value();
    c.vendor = cpu.attribute("vendor").value();
    int64_t family = 0, model = 0;
    if (cpu.attribute("familyid")) {
      SYNCOLL_TRY(f, x_.int_attr(cpu, "familyid", 0, 1 << 20));
      family = f;
    }
    if (cpu.attribute("modelid")) {
      SYNCOLL_TRY(m, x_.int_attr(cpu, "modelid", 0, 1 << 20));
      model = m;
    }
    c.interconnect = cpu_interconnect(c.arch, c.vendor, int(family), int(model));
    cpus_.push_back(std::move(c));
    return read_children(cpu, int(cpus_.size()) - 1, -1);
  }

  Expected<void> read_children(const pugi::xml_node &node, int cpu, int parent_pci) {
    for (const pugi::xml_node &child : node.children()) {
      const std::string_view name = child.name();
      if (name == "pci")
        SYNCOLL_CHECK(read_pci(child, cpu, parent_pci));
      else if (name == "nic")
        SYNCOLL_CHECK(read_nic(child, cpu, parent_pci));
      else if (name == "gpu")
        SYNCOLL_CHECK(read_gpu(child, cpu, parent_pci));
    }
    return {};
  }

  Expected<void> read_pci(const pugi::xml_node &pci, int cpu, int parent) {
    SYNCOLL_TRY(busid, x_.string_attr(pci, "busid"));
    if (busid.empty())
      return fail(x_.at(pci, "busid"), "attribute 'busid' is empty");
    if (!busids_.insert(busid).second)
      return fail(x_.at(pci, "busid"), fmt::format("a second <pci> with busid {}", busid));
    PciNode p;
    p.busid = busid;
    p.parent = parent;
    p.cpu = cpu;
    p.gbps = pcie_gbps(pci.attribute("link_speed").value(), pci.attribute("link_width").value());
    p.pci_class = hex_value(pci.attribute("class").value());
    for (const char *id : {"vendor", "device", "subsystem_vendor", "subsystem_device"})
      p.device_id = p.device_id << 16 | (uint64_t(hex_value(pci.attribute(id).value())) & 0xffff);
    p.where = pci;
    pcis_.push_back(std::move(p));
    return read_children(pci, cpu, int(pcis_.size()) - 1);
  }

  Expected<void> read_gpu(const pugi::xml_node &gpu, int cpu, int pci) {
    if (pci < 0)
      return fail(x_.at(gpu), "<gpu> must sit inside its <pci> function");
    if (pcis_[size_t(pci)].gpu >= 0)
      return fail(x_.at(gpu),
                  fmt::format("PCI function {} holds a second <gpu>", pcis_[size_t(pci)].busid));
    RawGpu g;
    g.where = gpu;
    g.pci = pci;
    SYNCOLL_TRY(dev, x_.int_attr(gpu, "dev", 0, 1 << 20));
    SYNCOLL_TRY(sm, x_.int_attr(gpu, "sm", 10, 1000));
    g.gpu.dev = int(dev);
    g.gpu.sm = int(sm);
    g.gpu.gcn = gpu.attribute("gcn").value();
    g.gpu.busid = pcis_[size_t(pci)].busid;
    g.gpu.cpu = cpu;
    g.gpu.pcie_gbps = pcis_[size_t(pci)].gbps;
    if (gpu.attribute("gdr")) {
      SYNCOLL_TRY(gdr, x_.flag_attr(gpu, "gdr"));
      g.gpu.gdr = gdr;
    }
    if (gpu.attribute("rank")) {
      SYNCOLL_TRY(rank, x_.int_attr(gpu, "rank", 0, 1 << 20));
      g.rank = int(rank);
    }
    for (const pugi::xml_node &link : gpu.children()) {
      const std::string_view name = link.name();
      if (name == "nvlink" || name == "xgmi") {
        RawNvlink l;
        l.element = name == "nvlink" ? "NVLink" : "xGMI link";
        l.where = link;
        SYNCOLL_TRY(target, x_.string_attr(link, "target"));
        SYNCOLL_TRY(count, x_.int_attr(link, "count", 1, 64));
        l.target = target;
        l.count = int(count);
        l.tclass = hex_value(link.attribute("tclass").value());
        g.nvlinks.push_back(std::move(l));
      } else if (name == "c2c") {
        SYNCOLL_TRY(bw, x_.int_attr(link, "bw", 1, int64_t(1) << 30));
        SYNCOLL_TRY(count, x_.int_attr(link, "count", 1, 64));
        g.gpu.c2c_gbps += double(bw) * double(count) / 1000.0; // bw in MB/s per link
      }
    }
    pcis_[size_t(pci)].gpu = int(gpus_.size());
    gpus_.push_back(std::move(g));
    return {};
  }

  Expected<void> read_nic(const pugi::xml_node &nic, int cpu, int pci) {
    for (const pugi::xml_node &net : nic.children("net")) {
      RawNic n;
      n.cpu = cpu;
      n.pci = pci;
      SYNCOLL_TRY(dev, x_.int_attr(net, "dev", 0, 1 << 20));
      int64_t mbps = kNcclUnreportedNicMbps;
      if (net.attribute("speed")) {
        SYNCOLL_TRY(speed, x_.int_attr(net, "speed", -1, int64_t(1) << 40));
        if (speed > 0)
          mbps = speed;
      }
      n.nic.dev = int(dev);
      n.nic.gbps = double(mbps) / 8000.0; // Mb/s
      n.nic.name = net.attribute("name").value();
      if (net.attribute("port")) {
        SYNCOLL_TRY(port, x_.int_attr(net, "port", 0, 1 << 20));
        n.nic.port = int(port);
      }
      if (net.attribute("gdr")) {
        SYNCOLL_TRY(gdr, x_.flag_attr(net, "gdr"));
        n.nic.gdr = gdr;
      }
      nics_.push_back(std::move(n));
    }
    return {};
  }
};

// The ranks: by the `rank` attribute where every GPU has one, else by `dev`; each once.
Expected<std::vector<int>> rank_order(const TopoReader &r) {
  const bool ranked = std::all_of(r.gpus_.begin(), r.gpus_.end(),
                                  [](const RawGpu &g) { return g.rank.has_value(); });
  std::vector<int> order(r.gpus_.size());
  std::map<int, int> seen;
  for (size_t i = 0; i < r.gpus_.size(); ++i) {
    const RawGpu &g = r.gpus_[i];
    const int key = ranked ? *g.rank : g.gpu.dev;
    if (auto [at, fresh] = seen.emplace(key, int(i)); !fresh)
      return fail(r.x_.at(g.where, ranked ? "rank" : "dev"),
                  fmt::format("a second GPU with {} {}", ranked ? "rank" : "dev", key));
  }
  if (ranked && (seen.begin()->first != 0 || seen.rbegin()->first != int(seen.size()) - 1))
    return fail(r.x_.at(r.gpus_[size_t(seen.rbegin()->second)].where, "rank"),
                fmt::format("the GPUs' ranks must be 0 to {}", seen.size() - 1));
  size_t next = 0;
  for (const auto &[key, index] : seen)
    order[next++] = index;
  return order; // order[rank] = index into r.gpus_
}

class MachineBuilder {
public:
  MachineBuilder(const TopoReader &r, std::vector<int> order, std::string name)
      : r_(r), order_(std::move(order)), name_(std::move(name)) {
    for (size_t rank = 0; rank < order_.size(); ++rank)
      rank_of_gpu_[size_t(order_[rank])] = int(rank);
  }

  Expected<XmlMachine> build() {
    XmlMachine m;
    m.cpus = r_.cpus_;
    for (int index : order_)
      m.gpus.push_back(r_.gpus_[size_t(index)].gpu);
    SYNCOLL_CHECK(read_nvlinks(m));
    SYNCOLL_TRY(rate, nvlink_rate(m));
    const int n = int(order_.size());
    const bool behind_nvswitch = std::all_of(m.gpus.begin(), m.gpus.end(), [&](const XmlGpu &g) {
      return g.nvswitch_nvlinks > 0 && g.nvswitch_nvlinks == m.gpus.front().nvswitch_nvlinks;
    });
    if (n >= 2 && behind_nvswitch && direct_.empty()) {
      SYNCOLL_TRY(t, nvswitch_node(name_, n, m.gpus.front().nvswitch_nvlinks, rate));
      m.topology = std::move(t);
    } else {
      TopologyDraft d;
      d.name = name_;
      d.num_ranks = n;
      m.includes_pcie = !nvlink_joins_every_pair(m);
      add_nvlinks(m, rate, d);
      if (m.includes_pcie)
        add_pcie(m, d);
      SYNCOLL_TRY(t, Topology::create(std::move(d)));
      m.topology = std::move(t);
    }
    add_nics(m);
    return m;
  }

private:
  const TopoReader &r_;
  std::vector<int> order_;
  std::string name_;
  std::map<size_t, int> rank_of_gpu_;
  std::map<std::pair<int, int>, int> direct_; ///< (rank, rank) -> NVLinks, as the source lists them

  Expected<void> read_nvlinks(XmlMachine &m) {
    std::map<std::string, int> rank_of_busid;
    for (size_t rank = 0; rank < m.gpus.size(); ++rank)
      rank_of_busid[m.gpus[rank].busid] = int(rank);
    for (size_t rank = 0; rank < order_.size(); ++rank) {
      const RawGpu &g = r_.gpus_[size_t(order_[rank])];
      for (const RawNvlink &l : g.nvlinks) {
        if (l.tclass == kNvSwitchClass) {
          m.gpus[rank].nvswitch_nvlinks += l.count;
          continue;
        }
        auto peer = rank_of_busid.find(l.target);
        if (peer == rank_of_busid.end()) {
          if ((l.tclass >> 16) == 0x06)
            continue; // to the CPU (POWER9's NVLink): host traffic, not a GPU's peer
          return fail(r_.x_.at(l.where, "target"),
                      fmt::format("{} target {} is not a GPU of this file (nor an NVSwitch, "
                                  "tclass 0x068000)",
                                  l.element, l.target));
        }
        if (peer->second == int(rank)) {
          m.gpus[rank].self_nvlinks += l.count;
          continue;
        }
        direct_[{int(rank), peer->second}] += l.count;
        m.gpus[rank].direct_nvlinks += l.count;
      }
    }
    return {};
  }

  // One NVLink's (xGMI link's) line rate for the machine's GPUs; 0 where no GPU has either.
  Expected<double> nvlink_rate(XmlMachine &m) {
    std::set<std::optional<GpuGeneration>> generations;
    for (const XmlGpu &g : m.gpus)
      generations.insert(generation_of(g));
    if (generations.size() == 1)
      m.generation = *generations.begin();
    for (size_t rank = 0; rank < m.gpus.size(); ++rank) {
      const XmlGpu &g = m.gpus[rank];
      if (g.direct_nvlinks + g.nvswitch_nvlinks == 0)
        continue;
      const char *kind = is_amd(g) ? "gcn" : "sm";
      const auto generation = generation_of(g);
      if (!generation)
        return fail(r_.x_.at(r_.gpus_[size_t(order_[rank])].where, kind),
                    is_amd(g)
                        ? fmt::format("GPU {} has xGMI links, and syncoll knows no xGMI rate for "
                                      "it (gfx90a, gfx942 and gfx950 have one)",
                                      kind_of(g))
                        : fmt::format("GPU of sm {} has NVLinks, and syncoll knows no NVLink rate "
                                      "for it (sm 70, 80, 90 and 100 have one)",
                                      g.sm));
      if (!m.generation)
        return fail(r_.x_.at(r_.gpus_[size_t(order_[rank])].where, kind),
                    "GPUs of different generations joined by NVLink or xGMI");
      return generation_traits(*generation).nvlink_line_gbps;
    }
    return 0.0;
  }

  bool nvlink_joins_every_pair(const XmlMachine &m) const {
    for (size_t a = 0; a < m.gpus.size(); ++a)
      for (size_t b = 0; b < m.gpus.size(); ++b)
        if (a != b && !direct_.count({int(a), int(b)}) &&
            !(m.gpus[a].nvswitch_nvlinks > 0 && m.gpus[b].nvswitch_nvlinks > 0))
          return false;
    return true;
  }

  // Vertex numbers of switches: after the ranks, in the order they are named.
  int vertex(TopologyDraft &d, const std::string &name) {
    auto at = std::find(d.switches.begin(), d.switches.end(), name);
    if (at != d.switches.end())
      return d.num_ranks + int(at - d.switches.begin());
    d.switches.push_back(name);
    return d.num_ranks + int(d.switches.size()) - 1;
  }

  static void both(TopologyDraft &d, int a, int b, int capacity, Nanoseconds alpha, double gbps) {
    d.links.push_back({RankId(a), RankId(b), capacity, alpha, BytesPerNs{gbps}});
    d.links.push_back({RankId(b), RankId(a), capacity, alpha, BytesPerNs{gbps}});
  }

  void add_nvlinks(const XmlMachine &m, double rate, TopologyDraft &d) {
    const Nanoseconds hop{protocol_traits(Protocol::LL).nccl_ring_nvlink_hop_us * 1000};
    for (const auto &[pair, count] : direct_)
      d.links.push_back(
          {RankId(pair.first), RankId(pair.second), count, hop, BytesPerNs{count * rate}});
    for (size_t rank = 0; rank < m.gpus.size(); ++rank)
      if (const int count = m.gpus[rank].nvswitch_nvlinks; count > 0)
        both(d, int(rank), vertex(d, "nvswitch"), count, Nanoseconds{hop.count / 2}, count * rate);
  }

  // The PCIe tree above the GPUs, the sockets joined pairwise. A GPU's own PCIe link costs NCCL's
  // PCIe hop; the rest of the path adds bandwidth limits, not latency.
  void add_pcie(const XmlMachine &m, TopologyDraft &d) {
    const Nanoseconds hop{protocol_traits(Protocol::LL).nccl_ring_pci_hop_us * 1000};
    std::set<int> needed; // <pci> elements above some GPU
    for (const RawGpu &g : r_.gpus_)
      for (int p = r_.pcis_[size_t(g.pci)].parent; p >= 0; p = r_.pcis_[size_t(p)].parent)
        needed.insert(p);
    auto name_of = [&](int pci) -> int {
      const PciNode &p = r_.pcis_[size_t(pci)];
      if (p.gpu >= 0)
        return rank_of_gpu_.at(size_t(p.gpu));
      return vertex(d, "pci " + p.busid);
    };
    auto parent_of = [&](const PciNode &p) {
      return p.parent >= 0 ? name_of(p.parent)
                           : vertex(d, socket_vertex_name(m.cpus[size_t(p.cpu)]));
    };
    for (size_t rank = 0; rank < m.gpus.size(); ++rank) {
      const PciNode &p = r_.pcis_[size_t(r_.gpus_[size_t(order_[rank])].pci)];
      both(d, int(rank), parent_of(p), 1, hop, p.gbps);
    }
    for (int pci : needed)
      both(d, name_of(pci), parent_of(r_.pcis_[size_t(pci)]), 1, Nanoseconds{0},
           r_.pcis_[size_t(pci)].gbps);
    for (size_t a = 0; a < m.cpus.size(); ++a)
      for (size_t b = a + 1; b < m.cpus.size(); ++b)
        both(d, vertex(d, socket_vertex_name(m.cpus[a])), vertex(d, socket_vertex_name(m.cpus[b])),
             1, Nanoseconds{0}, std::min(m.cpus[a].interconnect.gbps, m.cpus[b].interconnect.gbps));
  }

  // The PCIe switch a bridge belongs to: its parent where both are one Broadcom PEX switch.
  int switch_of(int pci) const {
    const PciNode &p = r_.pcis_[size_t(pci)];
    if (p.parent >= 0) {
      const PciNode &up = r_.pcis_[size_t(p.parent)];
      if (is_broadcom_pex(up.device_id) && up.device_id == p.device_id)
        return p.parent;
    }
    return pci;
  }

  // The switches above a device, nearest first; `pci` is its function, or the bridge a <nic>
  // sits in directly (-1: directly in its <cpu>).
  std::vector<int> switches_above(int pci) const {
    std::vector<int> out;
    int p = pci;
    if (p >= 0 && (r_.pcis_[size_t(p)].pci_class >> 8) != 0x0604) // a function, not a bridge
      p = r_.pcis_[size_t(p)].parent;
    for (; p >= 0; p = r_.pcis_[size_t(p)].parent)
      if (const int s = switch_of(p); out.empty() || out.back() != s)
        out.push_back(s);
    return out;
  }

  // NCCL's path type from a GPU to a NIC, and how many switches above the socket they share.
  std::pair<NcclPathType, int> path(const RawGpu &g, const RawNic &n) const {
    if (g.gpu.cpu != n.cpu)
      return {NcclPathType::Sys, 0};
    const std::vector<int> gpu_up = switches_above(g.pci), nic_up = switches_above(n.pci);
    for (size_t i = 0; i < gpu_up.size(); ++i)
      if (auto j = std::find(nic_up.begin(), nic_up.end(), gpu_up[i]); j != nic_up.end())
        return {i == 0 && j == nic_up.begin() ? NcclPathType::Pix : NcclPathType::Pxb,
                int(gpu_up.size() - i)};
    return {g.gpu.c2c_gbps > 0 ? NcclPathType::P2c : NcclPathType::Phb, 0};
  }

  // Each NIC's nearest GPUs, by path type and then by the deepest switch they share.
  void add_nics(XmlMachine &m) {
    for (const RawNic &raw : r_.nics_) {
      XmlNic nic = raw.nic;
      std::pair<NcclPathType, int> best{NcclPathType::Sys, -1};
      for (size_t rank = 0; rank < m.gpus.size(); ++rank) {
        const auto [type, shared] = path(r_.gpus_[size_t(order_[rank])], raw);
        if (type < best.first || (type == best.first && shared > best.second)) {
          best = {type, shared};
          nic.nearest_ranks.clear();
        }
        if (best == std::pair{type, shared})
          nic.nearest_ranks.push_back(int(rank));
      }
      nic.path = best.first;
      const bool gdr_path = nic.path <= NcclPathType::Pxb || nic.path == NcclPathType::P2c;
      nic.gpu_direct = nic.gdr && gdr_path && !nic.nearest_ranks.empty() &&
                       std::all_of(nic.nearest_ranks.begin(), nic.nearest_ranks.end(),
                                   [&](int rank) { return m.gpus[size_t(rank)].gdr; });
      m.nics.push_back(std::move(nic));
    }
  }
};

} // namespace

bool is_amd(const XmlGpu &gpu) {
  return !gpu.gcn.empty();
}

bool written_by_rccl(const XmlMachine &machine) {
  return std::any_of(machine.gpus.begin(), machine.gpus.end(), is_amd);
}

NcclPathType nccl_nic_path(const XmlMachine &machine) {
  double fastest = 0;
  for (const XmlNic &n : machine.nics)
    fastest = std::max(fastest, n.gbps);
  NcclPathType widest = NcclPathType::Pix;
  for (const XmlNic &n : machine.nics)
    if (n.gbps == fastest)
      widest = std::max(widest, n.path);
  return widest;
}

std::optional<GpuGeneration> generation_of(const XmlGpu &gpu) {
  return is_amd(gpu) ? generation_of_gcn(gpu.gcn) : generation_of_sm(gpu.sm);
}

std::string kind_of(const XmlGpu &gpu) {
  if (!is_amd(gpu))
    return fmt::format("sm {}", gpu.sm);
  // Older RCCL releases write the architecture as a number (910 for gfx90a), not as its name.
  return gpu.gcn.starts_with("gfx") ? gpu.gcn : fmt::format("gcn {}", gpu.gcn);
}

Expected<XmlMachine> read_nccl_topology_xml(std::string_view text, const std::string &file,
                                            std::string name) {
  pugi::xml_document doc;
  SYNCOLL_CHECK(detail::parse_xml(doc, text, file));
  const pugi::xml_node system = doc.document_element();
  if (!system)
    return fail({file, 1, 1}, "no <system> element");
  TopoReader reader(text, file);
  if (std::string_view(system.name()) != "system")
    return fail(reader.x_.at(system),
                fmt::format("root element is <{}>, expected NCCL's <system>", system.name()));
  SYNCOLL_CHECK(reader.read(system));
  SYNCOLL_TRY(order, rank_order(reader));
  auto machine = MachineBuilder(reader, std::move(order), std::move(name)).build();
  // The machine's own checks (Topology::create) locate nothing: the file as a whole is at fault.
  if (!machine && machine.error().items().front().location.line == 0)
    return fail(reader.x_.at(system), machine.error().items().front().message);
  return machine;
}

Expected<XmlMachine> read_nccl_topology_file(const std::string &path) {
  SYNCOLL_TRY(text, read_text_file(path));
  return read_nccl_topology_xml(text, path, std::filesystem::path(path).stem().string());
}

bool names_nccl_topology_file(std::string_view spec) {
  return spec.size() > 4 && spec.substr(spec.size() - 4) == ".xml";
}

NcclSearchHost nccl_search_host(const XmlMachine &machine) {
  NcclSearchHost host;
  host.generation = machine.generation;
  if (!machine.includes_pcie)
    return host;
  const std::vector<std::string> &switches = machine.topology->switches();
  for (const XmlCpu &cpu : machine.cpus) {
    if (cpu.arch != "x86_64" || cpu.vendor != "AuthenticAMD")
      continue;
    const auto at = std::find(switches.begin(), switches.end(), socket_vertex_name(cpu));
    if (at != switches.end())
      host.amd_sockets.push_back(
          RankId(machine.topology->num_ranks() + int(at - switches.begin())));
  }
  return host;
}

} // namespace syncoll::nccl
