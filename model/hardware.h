// Hardware generations and the systems built from them, in two tables.
//
// A generation row holds what is true of every machine with that GPU: the NVLink line rate, the
// constants NCCL's topology search and tuning model use for it (NCCL 2.30 src/graph/topo.h,
// search.cc, tuning.cc), and the physical quantities syncoll's simulator was calibrated to once
// against published measurements (docs/cost-model.md, "Calibration", says which and how). A
// system row is a machine as measured: a generation, the intra-node topology, NICs, and the host
// side's launch overhead. Nothing here is a correction per message size.
#pragma once

#include "model/program.h"

#include <array>
#include <optional>
#include <span>
#include <string_view>

namespace syncoll {

/// NVIDIA's generations run NCCL; AMD's CDNA generations (MI250X, MI300X, MI355X) run RCCL, NCCL's
/// port to HIP, whose search and algorithms are NCCL's and whose GPU-to-GPU links are xGMI: on
/// those rows every "NVLink" column below is the xGMI link's.
enum class GpuGeneration { Volta, Ampere, Hopper, Blackwell, Cdna2, Cdna3, Cdna4 };

struct GenerationTraits {
  GpuGeneration generation;
  std::string_view name;
  /// The collective library the generation's machines run: "NCCL" or "RCCL".
  std::string_view collective_library;
  /// One NVLink's (xGMI link's) line rate per direction, GB/s (V100, A100, H100: 25; B200: 50;
  /// MI250X: 50; MI300X: 64; MI355X: 76.8).
  double nvlink_line_gbps;
  /// NCCL's topology graph: bandwidth of one NVLink (topo.h: SM70 20, SM80 20, SM90 20.6,
  /// SM100 40.1 GB/s); RCCL's of one xGMI link (topo.h: gfx90a 36, gfx942 and gfx950 48 GB/s).
  double nccl_nvlink_gbps;
  /// The per-channel speeds NCCL's search tries, highest first (search.cc).
  std::span<const double> nccl_intra_speeds;
  std::span<const double> nccl_inter_speeds;
  /// NCCL's tuning caps (tuning.cc, as of 2.28): llMaxBw on one node, perChMaxRingLL128Bw (the
  /// same at every node count), and per node count (1, 2, 4 or more: NCCL's N1/N2/N4 columns)
  /// perChMaxTreeBw and perChMaxTreeLL128Bw.
  double nccl_ll_max_gbps;
  double nccl_ring_ll128_channel_gbps;
  std::array<double, 3> nccl_tree_channel_gbps;
  std::array<double, 3> nccl_tree_ll128_channel_gbps;
  /// NVLink SHARP efficiency in NCCL's tuning model; 0 where the generation has no NVLS.
  double nccl_nvls_efficiency;
  /// Channels an NVLS or NVLS tree call runs on (NVLS_NCHANNELS's default), inside one NVLink
  /// domain and across several: 16 and 16 on Hopper (NVLS_NCHANNELS_SM90), 24 and 32 on
  /// Blackwell (NVLS_NCHANNELS_SM100_NVL, NVLS_NCHANNELS_SM100); 0 without NVLS.
  std::array<int, 2> nccl_nvls_channels;
  /// NCCL's cap on one NVLS tree channel (tuning.cc perChMaxNVLSTreeBw), on 2 nodes and on 3 or
  /// more, GB/s; 0 without NVLS.
  std::array<double, 2> nccl_nvls_tree_channel_gbps;

  // Calibrated against docs/cost-model.md's measurements, one set per generation.
  /// Share of the NVLink line rate NCCL's copies move as payload, per protocol (Simple, LL,
  /// LL128): the wire format's overhead together with the copy loop's.
  std::array<double, 3> nvlink_payload_share;
  /// Latency of one hop of a pipelined step over NVLink beyond the wire's, per protocol, in
  /// microseconds: the flag round trip of a FIFO slot. NCCL's ring and every other program pay
  /// it; NCCL's tree pays the next column's.
  std::array<double, 3> nvlink_hop_us;
  /// The same latency in NCCL's tree kernel, per protocol, in microseconds. NCCL's own tuning
  /// model gives its tree a hop of its own (LL128: 1.25 us over NVLink against the ring's 1.9).
  /// Where both are measured apart they differ: Hopper's and Blackwell's LL128 rings of 30 to
  /// 1,022 hops in series take about twice the hop their trees of 2-64 nodes do. Elsewhere the
  /// column repeats the ring's (A100's trees pull two ways: OCI's RoCE pair wants a shorter hop,
  /// AWS's EFA pair a longer one).
  std::array<double, 3> nccl_tree_hop_us;
  /// Bandwidth one CUDA block copies at per protocol (Simple, LL, LL128), GB/s: the cap of one
  /// channel or thread block. LL and LL128 store a flag with every line and the receiver polls
  /// them, so a block moves less in them than in Simple's bulk copies.
  std::array<double, 3> thread_block_gbps;
  /// NVLS: the share of the switch port's line rate a multimem reduction or multicast sustains,
  /// its fixed latency in microseconds, and the bytes one channel moves per pipeline step (the
  /// pipeline's fill costs one step).
  double nvls_payload_share;
  double nvls_latency_us;
  double nvls_step_kib;
  /// Per instruction step of an interpreting executor (MSCCL: one primitive call, its flags and
  /// its dependency check), microseconds.
  double executor_step_us;
  /// How much faster a copy engine (cudaMemcpy's DMA) moves payload over NVLink than a kernel's
  /// Simple copies: it sends maximum-size packets where a kernel's stores send 128-byte ones.
  double copy_engine_gain;
};

/// The row of a generation; every generation has one.
[[nodiscard]] const GenerationTraits &generation_traits(GpuGeneration generation);
[[nodiscard]] std::span<const GenerationTraits> all_generations();
/// The generation of an NVIDIA GPU of compute capability `sm` (NCCL's topology dumps write it as
/// `sm="90"`): 70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell; none for the others (Turing, the
/// GeForce and workstation Amperes and Adas of 86 and 89, 120), which syncoll has no NVLink row
/// for.
[[nodiscard]] std::optional<GpuGeneration> generation_of_sm(int sm);
/// The generation of an AMD GPU by the architecture RCCL's topology dumps write as its `gcn`
/// (`gcn="gfx942"`, older releases the bare number `gcn="942"`, either with the target features
/// after a colon, "gfx942:sramecc+:xnack-"): gfx90a (the number 910) CDNA2 (MI250X, MI210),
/// gfx940-942 CDNA3 (MI300X, MI300A), gfx950 CDNA4 (MI355X); none for the others (gfx908's
/// MI100), which syncoll has no xGMI row for. RCCL's `sm` beside it is no NVIDIA compute capability
/// (gfx90a writes 90).
[[nodiscard]] std::optional<GpuGeneration> generation_of_gcn(std::string_view gcn);

/// The bandwidth between two CPU sockets per direction that NCCL's topology model gives a GPU's
/// path through host memory (topo.h: Broadwell QPI 6, Skylake and later UPI 10, Sapphire Rapids
/// 22, Emerald Rapids 40, AMD 16, POWER9 32, Arm 6 GB/s), from the `<cpu>` element's attributes
/// (arch x86_64/arm64/ppc64, vendor GenuineIntel/AuthenticAMD, familyid, modelid).
struct CpuInterconnect {
  std::string_view name; ///< "Skylake UPI"
  double gbps;
};
[[nodiscard]] CpuInterconnect cpu_interconnect(std::string_view arch, std::string_view vendor,
                                               int family, int model);

/// The network between nodes, by transport. NICs per node and their line rate are the system's;
/// what one message across the network costs and what one of NCCL's connections can move are the
/// fabric's, whatever GPU sends them.
enum class Fabric {
  InfinibandEdr,
  InfinibandHdr,
  InfinibandNdr,
  InfinibandXdr,
  Roce,
  EfaV1,
  EfaV2,
  EfaV3,
  EfaV4,
  GcpTcpxo,
  Slingshot11,
};

struct FabricTraits {
  Fabric fabric;
  std::string_view name; ///< as --fabric takes it
  std::string_view description;
  /// Share of the NIC's line rate a transfer moves as payload (headers, RDMA write framing).
  double nic_payload_share;
  /// One message across the network beyond its serialization, microseconds: NIC to NIC through
  /// the switches, and the completion's way back to the sender's proxy.
  double message_latency_us;
  /// What the host adds to every message, microseconds: NCCL's proxy thread posting the send and
  /// polling its completion (a kernel-bypass NIC keeps it small; a TCP or SRD stack does not).
  double host_cost_us;
  /// The most one NCCL connection (one channel to one peer: its proxy's pipeline of 8 slots over
  /// one queue pair) moves, GB/s; a node reaches its NICs' line rate only with enough channels.
  double connection_gbps;
  /// The share of that rate an LL128 connection moves. Forced rings across NDR on two
  /// generations plateau at 0.66 of what Simple's connections move (13.4 against 20.3 GB/s a
  /// channel), far below the wire format's 120/128; which part of NCCL's LL128 path across the
  /// network costs the rest is not pinned down. Carried to fabrics without a measurement.
  double ll128_connection_share;
  /// Whether NCCL runs only its Simple protocol over this fabric: aws-ofi-nccl sets
  /// NCCL_PROTO=simple where an EFA device cannot deliver 128-byte stores in order (p4d's and
  /// p4de's), which LL and LL128 flags rely on, unless the user set NCCL_PROTO.
  bool simple_protocol_only;
  /// What each message across the network occupies the sending GPU's proxy thread,
  /// microseconds: it posts its connections' messages one after another, so a GPU with many
  /// channels' messages in flight pays them in series (0: overlapped, part of host_cost_us).
  double proxy_message_us;
  /// The in-network reduction its switches offer NCCL's CollNet (IB SHARP through the
  /// NCCL-SHARP plugin: streaming aggregation, one flow per NIC rail), by name; empty where the
  /// switches reduce nothing. It needs ConnectX-6 and Quantum HDR switches or newer.
  std::string_view in_network_reduction;
  /// Where the figures come from: the line rate's document, and the measurements the latencies
  /// and shares were fitted to (or the row they were carried from).
  std::string_view source;
};

[[nodiscard]] const FabricTraits &fabric_traits(Fabric fabric);
[[nodiscard]] std::span<const FabricTraits> all_fabrics();
/// The fabric of that name (case-insensitive, '-' and '_' ignored); none when unknown.
[[nodiscard]] const FabricTraits *find_fabric(std::string_view name);

/// A tuner plugin a machine's images load beside NCCL, which then picks the algorithm and
/// protocol where its tables say so (nccl/platform_tuner.h): aws-ofi-nccl's region tuner on
/// AWS's p5 (and p5e), p5en and p6-b200, on by default since aws-ofi-nccl 1.16.
enum class PlatformTuner { None, AwsP5, AwsP5en, AwsP6B200 };

/// The host's CPUs where NCCL's tuning reads them (tuning.cc, from the topology's CPU nodes): an
/// x86 AMD host costs a ring's step across nodes more (getNetOverhead) and caps LL across nodes
/// at llMaxBws' AMD row; Arm hosts (Grace) tune as Intel's. nccl/tuning.h has the figures.
enum class HostCpu { Intel, Amd, Arm };
/// "Intel", "AMD", "Arm".
[[nodiscard]] std::string_view host_cpu_name(HostCpu cpu);

/// NCCL's type of a path (topo.h: PATH_LOC to PATH_SYS, in its order), nearest first. Between
/// two GPUs syncoll's topologies give five of them: a direct link or a route through an NVSwitch
/// is NVL; a route through PCIe switches alone PIX (one) or PXB (more); through one CPU socket
/// PHB, through two SYS. The others come from graph files: LOC (a GPU to itself), NVB (NVLink
/// through another GPU), C2C (a CPU's chip-to-chip link), and between a GPU and a NIC P2C (over
/// C2C to the CPU, then PCIe) and PXN (through an NVLink peer's NIC). NCCL's search tries a
/// graph on the nearest type first and widens it only while nothing is found (typeIntra).
enum class NcclPathType { Loc, Nvl, Nvb, C2c, Pix, Pxb, P2c, Pxn, Phb, Sys };

/// A machine as it was measured: which GPUs, how they are joined, and the host side.
struct SystemPreset {
  std::string_view name;
  std::string_view description;
  GpuGeneration generation;
  /// Intra-node topology in the library (dgx1, dgx_a100, dgx_h100, dgx_b200, gb200_nvl72). A
  /// node is one NVLink domain: a GB200 NVL72 rack of 18 trays is one node of 72 GPUs.
  std::string_view node_topology;
  int gpus_per_node;
  int nics_per_node;
  /// One NIC's line rate, GB/s.
  double nic_gbps;
  /// The network between nodes.
  Fabric fabric;
  /// Host-side cost of one collective call: the kernel launch and the benchmark loop around it
  /// (nccl-tests or a framework), microseconds.
  double launch_us;
  /// GPUs of one node without an NVLink between them reach each other through host memory
  /// across the CPU sockets' interconnect: one path's rate per direction (GB/s; 0: every pair
  /// is linked), and how many such links join the sockets (0: one socket). DGX-1: NCCL's
  /// Broadwell QPI figure of 6 GB/s per path, over the two QPI links of its two Xeon E5-2698 v4;
  /// Frontier: one EPYC socket, each GCD's own Infinity Fabric link to it at 36 GB/s.
  double host_path_gbps;
  int socket_links;
  /// Where the description's numbers come from.
  std::string_view source;
  PlatformTuner platform_tuner = PlatformTuner::None;
  /// GPUs of one host (a compute tray) where a node spans several (an NVL72 rack's 18 trays of
  /// 4); 0: a node is one host.
  int gpus_per_host = 0;
  HostCpu host_cpu = HostCpu::Intel;
  /// Whether NCCL enables LL128 by default on these GPUs (compute capability 7.0, 8.0, 9.0, 10.0
  /// or 12.0; not the 8.6 and 8.9 cards a dumped PCIe node may hold). It also needs every hop
  /// of the graph on NVLink (NcclRingGraph::type_intra).
  bool ll128_by_default = true;
  /// The path NCCL finds from a GPU to the NIC it sends through, the widest over the NICs
  /// (typeInter): PIX on the calibrated machines, where each NIC shares a PCIe switch with its
  /// GPUs; a topology dump's own (PHB where its NICs hang off the CPU). From Hopper on NCCL runs
  /// LL128 across nodes by default up to PXN, before it up to PXB.
  NcclPathType nic_path = NcclPathType::Pix;
  /// A machine as one run measured it across this many nodes, whose launch cost is that run's
  /// harness floor (a framework's skew leaving a barrier grows with the nodes it spans): another
  /// node count is a machine nobody measured, and is refused. 0: any.
  int measured_nodes = 0;
};

[[nodiscard]] std::span<const SystemPreset> all_system_presets();
/// The preset of that name (case-insensitive, '-' and '_' ignored); none when unknown.
[[nodiscard]] const SystemPreset *find_system_preset(std::string_view name);

} // namespace syncoll
