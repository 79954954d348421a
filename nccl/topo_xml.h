// NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes and NCCL_TOPO_FILE reads back) as a
// syncoll machine.
//
// The file is a `<system>` tree: `<cpu numaid arch vendor familyid modelid>` sockets, under them
// `<pci busid class link_speed link_width>` bridges and devices, a GPU's `<gpu dev sm rank gdr>`
// inside its PCI function with its `<nvlink target count tclass>` and `<c2c bw count>` links, and
// `<nic>` elements holding one `<net name dev speed port gdr>` per port. RCCL, NCCL's port to
// AMD's GPUs, writes the same file (RCCL_TOPO_DUMP_FILE): its `<gpu>` adds `gcn`, the GPU's
// architecture ("gfx942"), which names the generation where NCCL's `sm` would, and its links
// between GPUs are `<xgmi target count tclass>`, read as NVLinks are, at the xGMI link's rate of
// the generation's row (an MI300X platform's dump is the library's `mi300x`). Elements and
// attributes this reader does not use (NCCL adds some in most releases) are passed over; the ones
// it uses must hold what NCCL writes, or the error names the line and column.
//
// The machine's GPUs are its ranks (by their `rank` attribute, else by `dev`). Where NVLink joins
// every pair of GPUs, directly or through NVSwitch, the topology is NVLink alone: GPUs behind
// NVSwitch with the same NVLink count each become the library's NVSwitch node (so a DGX H100's
// dump and `dgx_h100` are one machine), direct NVLinks become links of count x the generation's
// per-link rate. Otherwise the PCIe tree is in it too: every CPU socket and PCIe bridge above a
// GPU is a switch vertex, each PCIe link moves its width x its speed (NCCL's rates: 8 GT/s 0.75,
// 16 GT/s 1.5, 32 GT/s 3 GB/s per lane), the sockets are joined at the inter-socket bandwidth of
// their CPU model, and a GPU's PCIe hop costs NCCL's PCIe latency. NICs are listed with their
// rate and the GPUs nearest them; they join a machine to others, not GPUs inside it.
#pragma once

#include "model/diagnostics.h"
#include "model/hardware.h"
#include "model/topology.h"
#include "nccl/search.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll::nccl {

struct XmlCpu {
  int numa = 0;
  std::string arch, vendor;
  CpuInterconnect interconnect; ///< to the other sockets
};

struct XmlGpu {
  int dev = 0;
  int sm = 0;
  std::string gcn; ///< an AMD GPU's architecture as RCCL writes it ("gfx942"); empty on NVIDIA's
  std::string busid;
  int cpu = 0;              ///< index into XmlMachine::cpus
  int direct_nvlinks = 0;   ///< NVLinks (an AMD GPU's xGMI links) to other GPUs
  int nvswitch_nvlinks = 0; ///< NVLinks to NVSwitch
  /// NVLinks whose target is the GPU's own function (Azure's NC A100 v4 file lists 12): NCCL
  /// reads them and its paths pass over them, as this reader does; they join no pair.
  int self_nvlinks = 0;
  double c2c_gbps = 0;  ///< the chip-to-chip link to its CPU (Grace), GB/s
  double pcie_gbps = 0; ///< its own PCIe link, GB/s
  bool gdr = true; ///< its `gdr` flag (GPUDirect RDMA support); a GPU without one counts as able
};

/// Whether the GPU is AMD's: RCCL's dumps name its architecture (`gcn`), NCCL's never do.
[[nodiscard]] bool is_amd(const XmlGpu &gpu);
/// A GPU's generation: by its `gcn` on AMD's (generation_of_gcn), else by its `sm`.
[[nodiscard]] std::optional<GpuGeneration> generation_of(const XmlGpu &gpu);
/// "sm 90", "gfx942", "gcn 910" (an older RCCL's number): the GPU's kind as its dump names it.
[[nodiscard]] std::string kind_of(const XmlGpu &gpu);

struct XmlNic {
  std::string name; ///< "mlx5_0"
  int dev = 0;
  double gbps = 0; ///< line rate per direction (the dump's `speed` in Mb/s)
  int port = 1;
  bool gdr = false;
  /// NCCL's path type from the nearest GPUs to this NIC, as its paths.cc classes the route: PIX
  /// through one PCIe switch (a Broadcom PEX switch's two levels fused into one, as NCCL fuses
  /// them), PXB through several, PHB through the CPU (P2C where the GPU reaches its CPU over
  /// C2C), SYS from another socket. NCCL's typeInter across nodes is at least the widest NIC's.
  NcclPathType path = NcclPathType::Sys;
  /// The GPUs at that path (under the deepest shared switch where several are PXB).
  std::vector<int> nearest_ranks;
  /// Whether NCCL sends from those GPUs through it with GPUDirect RDMA (ncclTopoCheckGdr): both
  /// gdr flags and a path no wider than NCCL_NET_GDR_LEVEL's default PXB, or P2C.
  bool gpu_direct = false;
};

struct XmlMachine {
  std::optional<Topology> topology; ///< always set by the reader
  bool includes_pcie = false;       ///< false: NVLink joins every pair, the topology is NVLink's
  std::optional<GpuGeneration> generation; ///< where every GPU has the same one
  std::vector<XmlCpu> cpus;
  std::vector<XmlGpu> gpus; ///< by rank
  std::vector<XmlNic> nics;
};

/// Whether the dump is RCCL's: some GPU of it is AMD's.
[[nodiscard]] bool written_by_rccl(const XmlMachine &machine);

/// The path across nodes that NCCL's search can do no better than on the machine (its typeInter
/// is at least this): the widest of its fastest NICs' paths to their nearest GPUs; PIX where the
/// dump lists no NIC.
[[nodiscard]] NcclPathType nccl_nic_path(const XmlMachine &machine);

/// The machine in `text` (the contents of `file`, for locations). Malformed XML, a missing or
/// ill-typed attribute, duplicate ranks, an NVLink or xGMI link to a GPU the file does not
/// hold, links on a GPU generation without a known link rate, or a file without a `<gpu>` (one for
/// NCCL_TOPO_FILE that lists the GPUs' PCI functions only, for NCCL to complete from the GPUs
/// it detects, as cloud images ship them): one located error.
[[nodiscard]] Expected<XmlMachine>
read_nccl_topology_xml(std::string_view text, const std::string &file, std::string name);
/// The same from a file; the machine is named after the file's stem.
[[nodiscard]] Expected<XmlMachine> read_nccl_topology_file(const std::string &path);

/// What NCCL's search knows of the machine beyond its links: its GPUs' generation, and its x86
/// AMD sockets, where it crosses between them (only where the topology holds the PCIe tree and
/// the sockets).
[[nodiscard]] NcclSearchHost nccl_search_host(const XmlMachine &machine);

/// A dump's machine as `--system node.xml` takes it. Where its node is a calibrated system's
/// (preset_of_node: link for link), that preset, preferring one on EFA where the dump's NICs are
/// EFA devices (named rdmap...). Any other node (a PCIe server, a workstation) runs as itself:
/// `node` holds its links, switches and sockets, and the preset, named after the dump, takes the
/// generation's constants (launch, fabric) from the first calibrated preset of the dump's GPU
/// generation (Ampere's for a GPU without a row, as a plain topology's search takes), on the
/// network its NICs say (EFA devices on EFA, mlx5 HCAs on InfiniBand of their rate, other ports
/// on RoCE). Either way with the dump's NICs where it lists any: its fastest ports, their
/// count and line rate. Fails, located, where the dump's GPUs are of several kinds or of a
/// generation no preset has.
struct DumpedSystem {
  SystemPreset preset;
  std::optional<Topology> node; ///< the dump's own node, where no preset's is
  /// For a node of its own, its GPUs and the generation row they run with ("8 GPUs of sm 89 with
  /// Ampere (A100)'s constants (no row of its own)").
  std::string label;
  /// Holds the name `preset` views for a node of its own.
  std::shared_ptr<const std::string> name;
  /// Whether NCCL sends through every NIC the system runs on with GPUDirect RDMA
  /// (XmlNic::gpu_direct); where not, it stages through host memory, which the model leaves out.
  bool gpu_direct = true;
};
[[nodiscard]] Expected<DumpedSystem> system_of_dump(const XmlMachine &machine,
                                                    const std::string &file);

/// Whether a command-line machine argument names an NCCL topology file (an existing file or a
/// name ending in ".xml").
[[nodiscard]] bool names_nccl_topology_file(std::string_view spec);

} // namespace syncoll::nccl
