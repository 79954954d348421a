#include "model/hardware.h"

#include "model/invariant.h"
#include "model/text.h"

#include <array>
#include <iterator>
#include <string>

namespace syncoll {
namespace {

// NCCL 2.30 search.cc: the speeds its ring and tree search tries per channel, GB/s.
constexpr double kPreHopperIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr double kPreHopperInter[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                      7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
constexpr double kHopperIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kHopperInter[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                   15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
constexpr double kBlackwellIntra[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
constexpr double kBlackwellInter[] = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                      20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};

// Ampere's fitted NVLink and network columns (docs/cost-model.md, "Calibration").
constexpr struct {
  std::array<double, 3> nvlink_payload_share{0.80, 0.351, 0.44};
  std::array<double, 3> nvlink_hop_us{20.14, 0.63, 5.39};
  std::array<double, 3> thread_block_gbps{28.14, 19.0, 21.5};
} kAmpereFit;

// AMD's copy columns, measured on no single AMD node in the data: NCCL's own per-protocol
// figures for the shares and hops (as Volta's), Hopper's thread-block rate.
constexpr struct {
  std::array<double, 3> nvlink_payload_share{0.80, 0.40, 0.75};
  std::array<double, 3> nvlink_hop_us{3.4, 0.6, 1.9};
  std::array<double, 3> thread_block_gbps{75.6, 68.0, 75.6};
} kCdnaCarried;

// An AMD generation's row: what differs between them is the xGMI link (its line rate and RCCL's
// graph bandwidth for it); the rest is RCCL's and the carried columns.
constexpr GenerationTraits rccl_row(GpuGeneration generation, std::string_view name,
                                    double xgmi_line_gbps, double rccl_graph_gbps) {
  return {.generation = generation,
          .name = name,
          .collective_library = "RCCL",
          .nvlink_line_gbps = xgmi_line_gbps,
          .nccl_nvlink_gbps = rccl_graph_gbps,
          .nccl_intra_speeds = kPreHopperIntra,
          .nccl_inter_speeds = kPreHopperInter,
          .nccl_ll_max_gbps = 87.7,
          .nccl_ring_ll128_channel_gbps = 20,
          .nccl_tree_channel_gbps = {24.0, 23.6, 17.8},
          .nccl_tree_ll128_channel_gbps = {20, 20, 20},
          .nccl_nvls_efficiency = 0,
          .nccl_nvls_channels = {0, 0},
          .nccl_nvls_tree_channel_gbps = {0, 0},
          .nvlink_payload_share = kCdnaCarried.nvlink_payload_share,
          .nvlink_hop_us = kCdnaCarried.nvlink_hop_us,
          .nccl_tree_hop_us = kCdnaCarried.nvlink_hop_us,
          .thread_block_gbps = kCdnaCarried.thread_block_gbps,
          .nvls_payload_share = 0,
          .nvls_latency_us = 0,
          .nvls_step_kib = 0,
          .executor_step_us = 0.9,
          .copy_engine_gain = 1.10};
}

// The calibrated columns (from nvlink_payload_share on) are fitted by
// `bench/fidelity_bench --fit` (docs/cost-model.md, "Calibration").
const GenerationTraits kGenerations[] = {
    {.generation = GpuGeneration::Volta,
     .name = "Volta (V100)",
     .collective_library = "NCCL",
     .nvlink_line_gbps = 25,
     .nccl_nvlink_gbps = 20,
     .nccl_intra_speeds = kPreHopperIntra,
     .nccl_inter_speeds = kPreHopperInter,
     .nccl_ll_max_gbps = 39.0,
     .nccl_ring_ll128_channel_gbps = 20,
     .nccl_tree_channel_gbps = {26.5, 18.5, 10.0},
     .nccl_tree_ll128_channel_gbps = {20, 20, 20},
     .nccl_nvls_efficiency = 0,
     .nccl_nvls_channels = {0, 0},
     .nccl_nvls_tree_channel_gbps = {0, 0},
     // Volta has no nccl-tests measurements in the set: its row is NCCL's own figures (20 of 25
     // GB/s per NVLink, its per-hop latencies per protocol), checked against the SCCL paper's
     // DGX-1 speedups by bench/sccl_bench and never fitted to them. Ampere's fitted Simple hop
     // stands in for what the model lacks at 4-128 MiB on A100 and is not carried over.
     .nvlink_payload_share = {0.80, 0.40, 0.75},
     .nvlink_hop_us = {3.4, 0.6, 1.9},
     .nccl_tree_hop_us = {3.4, 0.6, 1.9},
     .thread_block_gbps = kAmpereFit.thread_block_gbps,
     .nvls_payload_share = 0,
     .nvls_latency_us = 0,
     .nvls_step_kib = 0,
     .executor_step_us = 0.9,
     .copy_engine_gain = 1.10},
    {.generation = GpuGeneration::Ampere,
     .name = "Ampere (A100)",
     .collective_library = "NCCL",
     .nvlink_line_gbps = 25,
     .nccl_nvlink_gbps = 20,
     .nccl_intra_speeds = kPreHopperIntra,
     .nccl_inter_speeds = kPreHopperInter,
     .nccl_ll_max_gbps = 87.7,
     .nccl_ring_ll128_channel_gbps = 20,
     .nccl_tree_channel_gbps = {24.0, 23.6, 17.8},
     .nccl_tree_ll128_channel_gbps = {20, 20, 20},
     .nccl_nvls_efficiency = 0,
     .nccl_nvls_channels = {0, 0},
     .nccl_nvls_tree_channel_gbps = {0, 0},
     .nvlink_payload_share = kAmpereFit.nvlink_payload_share,
     .nvlink_hop_us = kAmpereFit.nvlink_hop_us,
     // NCCL's tree hops (Simple and LL128 NCCL's own, LL the ring's): the fitted Simple and LL128
     // hops stand in for a ring's steps at 4-128 MiB, which a tree's short chain does not pay.
     // The A100 pair on RoCE runs its LL128 tree at 512 KiB-4 MiB at 1.9 (20.6% -> 14.5% for the
     // set); the p4de pair, which pulled the other way, runs Simple only (aws-ofi-nccl).
     .nccl_tree_hop_us = {3.4, 0.63, 1.9},
     .thread_block_gbps = kAmpereFit.thread_block_gbps,
     .nvls_payload_share = 0,
     .nvls_latency_us = 0,
     .nvls_step_kib = 0,
     .executor_step_us = 0.9,
     .copy_engine_gain = 1.10},
    {.generation = GpuGeneration::Hopper,
     .name = "Hopper (H100, H200)",
     .collective_library = "NCCL",
     .nvlink_line_gbps = 25,
     .nccl_nvlink_gbps = 20.6,
     .nccl_intra_speeds = kHopperIntra,
     .nccl_inter_speeds = kHopperInter,
     .nccl_ll_max_gbps = 141.0,
     .nccl_ring_ll128_channel_gbps = 36.7,
     .nccl_tree_channel_gbps = {38.7, 41.4, 36.0},
     .nccl_tree_ll128_channel_gbps = {36.7, 36.7, 29.0},
     .nccl_nvls_efficiency = 0.85,
     .nccl_nvls_channels = {16, 16},
     .nccl_nvls_tree_channel_gbps = {57.7, 45.5},
     .nvlink_payload_share = {0.82, 0.295, 0.77},
     // LL128's hop: one node's sets run NVLS and LL, never an LL128 ring; it is fitted on a
     // forced ring of 2 nodes (NT309-AION-H100x2N-RING at 1-16 MiB, 30 hops in series), where
     // NCCL's 1.9 us left it 25% fast. Trees of 2-8 nodes keep 1.9.
     .nvlink_hop_us = {3.4, 0.475, 3.6},
     .nccl_tree_hop_us = {3.4, 0.475, 1.9},
     .thread_block_gbps = {75.6, 68.0, 75.6},
     .nvls_payload_share = 0.665,
     .nvls_latency_us = 8.91,
     .nvls_step_kib = 884,
     .executor_step_us = 0.9,
     .copy_engine_gain = 1.10},
    {.generation = GpuGeneration::Blackwell,
     .name = "Blackwell (B200)",
     .collective_library = "NCCL",
     .nvlink_line_gbps = 50,
     .nccl_nvlink_gbps = 40.1,
     .nccl_intra_speeds = kBlackwellIntra,
     .nccl_inter_speeds = kBlackwellInter,
     .nccl_ll_max_gbps = 282.0,
     .nccl_ring_ll128_channel_gbps = 40,
     .nccl_tree_channel_gbps = {70.0, 42.8, 24.0},
     .nccl_tree_ll128_channel_gbps = {55.6, 31.67, 20.0},
     .nccl_nvls_efficiency = 0.74,
     .nccl_nvls_channels = {24, 32},
     .nccl_nvls_tree_channel_gbps = {96.0, 80.0},
     .nvlink_payload_share = {0.80, 0.40, 0.75},
     // LL128's hop: fitted on 64 nodes' forced rings at 16-32 MiB (511 and 1,022 hops in
     // series, TOG-B200-64N-0416), where NCCL's 1.9 us left them 43% fast; their trees at 1-8
     // MiB keep 1.9.
     .nvlink_hop_us = {6.43, 0.6, 4.5},
     .nccl_tree_hop_us = {6.43, 0.6, 1.9},
     // Hopper's: the single-node sets hardly tell 31 from 76 GB/s (STAS-GPUCOUNT 1.9% against
     // 3.3%), and at 31 a tree's chain of relays on 4 p6-b200 nodes added 258 us from 8 to 16
     // MiB where they measure 42 (153 at 76).
     .thread_block_gbps = {75.6, 75.6, 75.6},
     .nvls_payload_share = 0.6,
     .nvls_latency_us = 5.18,
     .nvls_step_kib = 531,
     .executor_step_us = 0.9,
     .copy_engine_gain = 1.10},
    // AMD's rows: the xGMI link's rate from AMD's data sheets, RCCL's graph bandwidth per link
    // from its topo.h, its search's speeds and tuning caps NCCL's pre-Hopper ones (RCCL builds
    // NCCL's search for HIP without the SM90 tables), the copy columns carried (kCdnaCarried);
    // CDNA4's checked on two MI355X nodes (docs/cost-model.md, "AMD"). CDNA2's (MI250X, whose
    // package holds two GPUs, GCDs, each its own device) has no measurement in the data at all.
    rccl_row(GpuGeneration::Cdna2, "CDNA2 (MI250X)", 50, 36),
    rccl_row(GpuGeneration::Cdna3, "CDNA3 (MI300X)", 64, 48),
    rccl_row(GpuGeneration::Cdna4, "CDNA4 (MI355X)", 76.8, 48),
};
static_assert(std::size(kGenerations) == size_t(GpuGeneration::Cdna4) + 1,
              "one row per generation");

// EFA's cost per message beyond its latency (the SRD stack, aws-ofi-nccl's proxy), two
// generations of its software apart. A p4de pair under nccl-tests' own floor takes 161-165 us at
// 8 B-1 KiB: a Simple tree (aws-ofi-nccl sets NCCL_PROTO=simple on p4de) of one chunk a channel,
// two messages across the network on its critical path (up and down), 48 us each beyond the NIC's
// latency; every message also holds its GPU's proxy thread for 11 us, in series (fitted on the
// same pair's 256 KiB-64 MiB, where a GPU's channels' chunks queue at its proxy). A p6-b200 pair
// of today's stack takes 51-57 us at 8-256 B: 17 us a message, carried to p5 and p5en, whose EFA
// runs the same software, with 3 us a message at the proxy (p5's AlltoAll and AllReduce sets).
constexpr double kEfaV1HostCostUs = 48.0;
constexpr double kEfaV1ProxyUs = 11.0;
constexpr double kEfaHostCostUs = 17.0;
constexpr double kEfaProxyUs = 3.0;

// The fabrics. Line rates are the NICs' (the system rows carry them); the latencies, shares and
// connection rates are fitted by `bench/fidelity_bench --fit` where measurements exist
// (docs/cost-model.md, "The fabric") and carried from the nearest fitted row where not.
const FabricTraits kFabrics[] = {
    {Fabric::InfinibandEdr, "ib_edr", "InfiniBand EDR, 100 Gb/s per port (ConnectX-4/5)", 0.926,
     2.0, 5.12, 12.5, 0.66, false, 0, "",
     "InfiniBand Trade Association roadmap; shares and latencies as ib_hdr; SHARP v1 on EDR "
     "switches reduces small messages only, NCCL's CollNet plugin needs HDR or newer"},
    {Fabric::InfinibandHdr, "ib_hdr", "InfiniBand HDR, 200 Gb/s per port (ConnectX-6)", 0.926, 2.0,
     5.12, 25, 0.66, false, 0, "SHARPv2 (Quantum)",
     "ConnectX-6 product brief; fitted with the A100 generation on 2 NDv4 nodes (MSCCLPP-NDV4)"},
    {Fabric::InfinibandNdr, "ib_ndr", "InfiniBand NDR, 400 Gb/s per port (ConnectX-7)", 0.98, 2.0,
     13.0, 20.3, 0.66, false, 0, "SHARPv3 (Quantum-2)",
     "ConnectX-7 product brief; fitted on an H100 cluster of 2-8 nodes (16 channels plateau at "
     "321 GB/s, 24 at 392; the per-message cost on its trees of NCCL's chunks, 13 us) and a "
     "64-node B200 forced ring; the LL128 share on that ring's "
     "plateau at 2-4 GiB and the H100 pair's forced ring at 64-128 MiB"},
    {Fabric::InfinibandXdr, "ib_xdr", "InfiniBand XDR, 800 Gb/s per port (ConnectX-8)", 0.98, 2.0,
     13.0, 20.3, 0.66, false, 0, "SHARPv4 (Quantum-X800)",
     "ConnectX-8 SuperNIC product brief; shares and latencies as ib_ndr (no measurement)"},
    {Fabric::Roce, "roce", "RoCE v2 over 100-400 Gb/s Ethernet (ConnectX, lossless fabric)", 0.95,
     2.0, 8.0, 25, 0.66, false, 0, "",
     "fitted on 2 A100 nodes of 16 x 100 Gb/s RoCE (OCI BM.GPU4.8, 8 B to 4 KiB)"},
    {Fabric::EfaV1, "efa_v1", "AWS Elastic Fabric Adapter, 100 Gb/s per NIC (p4d, p4de)", 0.85, 2.0,
     kEfaV1HostCostUs, 12.5, 0.66, true, kEfaV1ProxyUs, "",
     "AWS p4d instance page; aws-ofi-nccl's platform code (NCCL_PROTO=simple on p4d and p4de); "
     "fitted on 2 p4de nodes (AWS-P4DE): the per-message cost on their 8 B-1 KiB, the proxy's "
     "cost per message on 256 KiB-64 MiB, the payload share (efa_v2's 0.85) from 256 MiB"},
    {Fabric::EfaV2, "efa_v2", "AWS EFA v2, 32 x 100 Gb/s per node (p5)", 0.85, 2.0, kEfaHostCostUs,
     20.3, 0.66, false, kEfaProxyUs, "",
     "AWS p5 instance page; the payload share fitted on 2-32 p5 nodes (SMHP-P5-EFA: at 0.95 "
     "each of its two sets, held out, asked 0.85 of the other), the rest as efa_v4; aws-ofi-nccl "
     "stripes a connection over a GPU's four devices, so it moves what one 400 Gb/s device's "
     "does; the proxy's cost per message placed on the same sets (3 us: AlltoAll 22.1% -> 19.7%)"},
    {Fabric::EfaV3, "efa_v3", "AWS EFA v3, 16 x 200 Gb/s per node (p5en)", 0.95, 2.0,
     kEfaHostCostUs, 20.3, 0.66, false, kEfaProxyUs, "",
     "AWS p5en instance page; shares and latencies as efa_v4, the connection rate as efa_v2's "
     "(a GPU's two devices striped)"},
    {Fabric::EfaV4, "efa_v4", "AWS EFA v4, 8 x 400 Gb/s per node (p6-b200)", 0.95, 2.0,
     kEfaHostCostUs, 24.0, 0.66, false, kEfaProxyUs, "",
     "AWS p6-b200 instance page; the share and the connection rate fitted on 4 p6-b200 nodes at "
     "512 MiB-16 GiB (STAS-B200x4N-PT, rings there by aws-ofi-nccl's tuner: 16 channels reach the "
     "NICs' 380 GB/s), the per-message cost on 2 p6-b200 nodes at 8-256 B (DSTACK-P6-2N)"},
    {Fabric::GcpTcpxo, "tcpxo", "GCP GPUDirect-TCPXO, 8 x 200 Gb/s per node (a3-mega)", 0.90, 5.0,
     58.0, 12.5, 0.66, false, 0, "",
     "Google Cloud A3 Mega documentation (line rate); the per-message cost placed where published "
     "2-node a3-mega logs put the smallest AllReduce (123-160 us: two messages of an LL tree), "
     "the share and connection rate estimates of a TCP offload path, no measurement here"},
    {Fabric::Slingshot11, "slingshot11",
     "HPE Slingshot-11, 200 Gb/s per NIC (Cassini; NCCL through the aws-ofi-nccl plugin)", 0.93,
     2.0, 8.0, 20.0, 0.66, false, 0, "",
     "HPE Slingshot and Cassini NIC product briefs (line rate); the share, latencies and "
     "connection rate are estimates carried from roce (an Ethernet-based RDMA NIC behind a "
     "libfabric provider), no measurement here"},
};
static_assert(std::size(kFabrics) == size_t(Fabric::Slingshot11) + 1, "one row per fabric");

const SystemPreset kSystems[] = {
    {"dgx1", "DGX-1: 8 V100 SXM2 in the NVLink2 hybrid cube-mesh, 4 EDR 100 Gb/s NICs",
     GpuGeneration::Volta, "dgx1", 8, 4, 12.5, Fabric::InfinibandEdr, 8, 6, 2,
     "NVIDIA DGX-1 system architecture whitepaper; SCCL section 5.1.1"},
    {"dgx2",
     "DGX-2: 16 V100 SXM3 behind NVSwitch (6 NVLink2 links per GPU into 12 switches), 8 EDR "
     "100 Gb/s NICs",
     GpuGeneration::Volta, "dgx2", 16, 8, 12.5, Fabric::InfinibandEdr, 8, 0, 0,
     "NVIDIA DGX-2 system user guide; GC3's second cluster"},
    {"dgx_a100",
     "DGX A100: 8 A100 SXM4, NVLink3 (12 links per GPU) + NVSwitch, 8 HDR 200 Gb/s NICs",
     GpuGeneration::Ampere, "dgx_a100", 8, 8, 25, Fabric::InfinibandHdr, 8, 0, 0,
     "NVIDIA DGX A100 system architecture", PlatformTuner::None, 0, HostCpu::Amd},
    {"dgx_h100",
     "DGX H100: 8 H100 SXM5, NVLink4 (18 links per GPU) + NVSwitch with NVLS, 8 NDR 400 Gb/s "
     "NICs",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "NVIDIA DGX H100 user guide"},
    {"dgx_h200", "DGX H200: as DGX H100, with H200 (141 GB HBM3e)", GpuGeneration::Hopper,
     "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0, "NVIDIA DGX H200 user guide"},
    {"dgx_b200", "DGX B200: 8 B200, NVLink5 (18 links of 50 GB/s per GPU) + NVSwitch",
     GpuGeneration::Blackwell, "dgx_b200", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "NVIDIA DGX B200 user guide"},
    // Machines users rent or buy, from their public specs: the node's NICs as GPU-aligned
    // rails of the node's total rate (a p5's 32 x 100 Gb/s EFA as 8 x 400), nccl-tests' floor.
    {"dgx_superpod_h100",
     "DGX SuperPOD H100: DGX H100 nodes, rail-optimized NDR 400 Gb/s InfiniBand, 8 NICs per node",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "NVIDIA DGX SuperPOD H100 reference architecture"},
    {"dgx_superpod_b200",
     "DGX SuperPOD B200: DGX B200 nodes, rail-optimized NDR 400 Gb/s InfiniBand, 8 NICs per node",
     GpuGeneration::Blackwell, "dgx_b200", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "NVIDIA DGX SuperPOD B200 reference architecture"},
    {"aws_p5",
     "AWS p5.48xlarge: 8 H100 80GB, NVSwitch, 32 x 100 Gb/s EFA v2 (8 x 400 per GPU rail)",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::EfaV2, 8, 0, 0,
     "AWS EC2 P5 instance types page", PlatformTuner::AwsP5, 0, HostCpu::Amd},
    {"aws_p5en",
     "AWS p5en.48xlarge: 8 H200 141GB, NVSwitch, 16 x 200 Gb/s EFA v3 (8 x 400 per GPU rail)",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::EfaV3, 8, 0, 0,
     "AWS EC2 P5en instance types page", PlatformTuner::AwsP5en},
    {"aws_p6_b200", "AWS p6-b200.48xlarge: 8 B200, NVSwitch, 8 x 400 Gb/s EFA v4",
     GpuGeneration::Blackwell, "dgx_b200", 8, 8, 50, Fabric::EfaV4, 8, 0, 0,
     "AWS EC2 P6-B200 instance types page", PlatformTuner::AwsP6B200},
    {"gcp_a3_mega", "GCP a3-megagpu-8g: 8 H100 80GB, NVSwitch, 8 x 200 Gb/s GPUDirect-TCPXO",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 25, Fabric::GcpTcpxo, 8, 0, 0,
     "Google Cloud GPU machine types (A3 Mega)"},
    {"gcp_a4", "GCP a4-highgpu-8g: 8 B200, NVSwitch, 8 x 400 Gb/s RoCE (ConnectX-7)",
     GpuGeneration::Blackwell, "dgx_b200", 8, 8, 50, Fabric::Roce, 8, 0, 0,
     "Google Cloud GPU machine types (A4)"},
    {"gb200_nvl72",
     "GB200 NVL72: a rack of 18 trays of 4 B200 (72 GPUs, one NVLink domain, NVLS across it), 4 "
     "CX-7 400 Gb/s NICs per tray; racks (--nodes) joined by NDR InfiniBand",
     GpuGeneration::Blackwell, "gb200_nvl72", 72, 72, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "NVIDIA GB200 NVL72 product page and DGX GB200 user guide", PlatformTuner::None, 4,
     HostCpu::Arm},
    {"gb300_nvl72",
     "GB300 NVL72: a rack of 18 trays of 4 B300 (Blackwell Ultra; 72 GPUs, one NVLink5 domain, "
     "NVLS across it), a ConnectX-8 800 Gb/s SuperNIC per GPU; racks (--nodes) joined by XDR "
     "InfiniBand",
     GpuGeneration::Blackwell, "gb200_nvl72", 72, 72, 100, Fabric::InfinibandXdr, 8, 0, 0,
     "NVIDIA GB300 NVL72 product page (NVLink5 as GB200's, 800 Gb/s per GPU); the B300 priced "
     "as the Blackwell row, no measurement",
     PlatformTuner::None, 4, HostCpu::Arm},
    {"azure_nd_mi300x_v5",
     "Azure ND MI300X v5: 8 AMD MI300X, xGMI (one link between every pair), 8 NDR 400 Gb/s "
     "NICs; RCCL",
     GpuGeneration::Cdna3, "mi300x", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "Azure ND MI300X v5 size series page; AMD Instinct MI300X data sheet"},
    {"mi355x",
     "8 AMD MI355X, xGMI (one link between every pair), 8 AMD Pensando Pollara 400 Gb/s RoCE "
     "NICs; RCCL, rccl-tests",
     GpuGeneration::Cdna4, "mi355x", 8, 8, 50, Fabric::Roce, 8, 0, 0,
     "AMD Instinct MI355X data sheet; AMD Pensando Pollara 400 AI NIC product brief",
     PlatformTuner::None, 0, HostCpu::Amd},
    {"frontier",
     "OLCF Frontier node: 4 AMD MI250X (8 GCDs, each a device), xGMI (4 links between a "
     "package's two GCDs, one to each of two other packages' GCDs), one HPE Slingshot-11 200 "
     "Gb/s NIC per MI250X; RCCL",
     GpuGeneration::Cdna2, "mi250x", 8, 4, 25, Fabric::Slingshot11, 8, 36, 0,
     "OLCF Frontier user guide (node architecture); AMD Instinct MI250X data sheet; RCCL's "
     "topology model of the node (src/graph/rome_models.cc)",
     PlatformTuner::None, 0, HostCpu::Amd},
    {"oci_bm_gpu4_8", "OCI BM.GPU4.8: 8 A100 40GB, NVSwitch, 16 x 100 Gb/s RoCE (8 x 200 per GPU)",
     GpuGeneration::Ampere, "dgx_a100", 8, 8, 25, Fabric::Roce, 8, 0, 0,
     "Oracle Cloud bare metal GPU shapes (BM.GPU4.8)", PlatformTuner::None, 0, HostCpu::Amd},
    {"perlmutter",
     "NERSC Perlmutter GPU node: 4 A100 SXM4 40GB, 4 NVLinks between every pair, 4 HPE "
     "Slingshot-11 200 Gb/s NICs (one per GPU)",
     GpuGeneration::Ampere, "hgx_a100_4", 4, 4, 25, Fabric::Slingshot11, 8, 0, 0,
     "NERSC Perlmutter architecture documentation", PlatformTuner::None, 0, HostCpu::Amd},
    {"delta",
     "NCSA Delta A100x4 node: 4 A100 SXM4 40GB, 4 NVLinks between every pair, one HPE "
     "Slingshot-11 200 Gb/s NIC",
     GpuGeneration::Ampere, "hgx_a100_4", 4, 1, 25, Fabric::Slingshot11, 8, 0, 0,
     "NCSA Delta user documentation (A100x4 nodes)", PlatformTuner::None, 0, HostCpu::Amd},
    // Machines as measured (docs/cost-model.md, "Calibration"): the same hardware rows, and
    // the host-side floor of the harness that measured them, fitted to its smallest message.
    {"azure_nd_a100_v4",
     "Azure ND A100 v4: 8 A100 80GB, NVLink3 + NVSwitch, 8 HDR 200 Gb/s NICs; nccl-tests",
     GpuGeneration::Ampere, "dgx_a100", 8, 8, 25, Fabric::InfinibandHdr, 32.5, 0, 0,
     "Azure/AI-benchmarking-guide ND_A100_v4_results.md (NCCL 2.18.5)", PlatformTuner::None, 0,
     HostCpu::Amd},
    {"ndv4_mscclpp", "Azure NDv4 as the MSCCL++ authors measured it (nccl-tests, NCCL 2.17.1)",
     GpuGeneration::Ampere, "dgx_a100", 8, 8, 25, Fabric::InfinibandHdr, 8.34, 0, 0,
     "microsoft/mscclpp performance notes", PlatformTuner::None, 0, HostCpu::Amd},
    {"azure_nd_h100_v5",
     "Azure ND H100 v5: 8 H100 80GB, NVLink4 + NVSwitch, 8 NDR 400 Gb/s NICs; nccl-tests",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 21.45, 0, 0,
     "Azure/AI-benchmarking-guide ND_H100_v5_results.md (NCCL 2.18.5)"},
    {"azure_nd_h200_v5", "Azure ND H200 v5: 8 H200 141GB, as ND H100 v5; nccl-tests",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 21, 0, 0,
     "Azure/AI-benchmarking-guide ND_H200_v5_results.md (NCCL 2.20.5)"},
    {"h200_nccl_tests", "8 H200 SXM (NV18), nccl-tests, NCCL 2.27.7", GpuGeneration::Hopper,
     "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 8, 0, 0,
     "stas00/ml-engineering network/README.md"},
    {"h200_pytorch", "8 H200 SXM (NV18), torch.distributed.all_reduce, NCCL 2.27.7",
     GpuGeneration::Hopper, "dgx_h100", 8, 8, 50, Fabric::InfinibandNdr, 31.6, 0, 0,
     "stas00/ml-engineering all-reduce-8xH200.md"},
    {"b200_nccl_tests", "8 B200 (AWS p6-b200), nccl-tests, NCCL 2.27.7", GpuGeneration::Blackwell,
     "dgx_b200", 8, 8, 50, Fabric::EfaV4, 7.92, 0, 0, "stas00/ml-engineering network/README.md",
     PlatformTuner::AwsP6B200},
    // PyTorch's benchmark times one call per size between CUDA events after a barrier: the
    // floor is its dispatch and the ranks' skew leaving the barrier across nodes, fitted as the
    // median of measured minus simulated at 512 KiB-16 MiB (189-226 us: 216), where the call is
    // latency-bound; its first three sizes, 6.3 ms down to 0.56, are the warm-up of a loop
    // timing each size once.
    {"b200x4_pytorch",
     "4 AWS p6-b200 (8 B200, 8 x 400 Gb/s EFA v4 each) under torch.distributed.all_reduce, one "
     "call timed after a barrier, NCCL 2.27.7; its launch cost is that 4-node run's floor "
     "(--nodes 4 only)",
     GpuGeneration::Blackwell, "dgx_b200", 8, 8, 50, Fabric::EfaV4, 224, 0, 0,
     "stas00/ml-engineering network/README.md (all_reduce_bench.py)", PlatformTuner::AwsP6B200, 0,
     HostCpu::Intel, true, NcclPathType::Pix, 4},
    // nccl-tests' floor like the machines users rent: the rest of its small calls is EFA's.
    {"aws_p4de", "AWS p4de.24xlarge: 8 A100 80GB, NVSwitch, 4 x 100 Gb/s EFA; nccl-tests",
     GpuGeneration::Ampere, "dgx_a100", 8, 4, 12.5, Fabric::EfaV1, 8, 0, 0,
     "aws-samples/awsome-distributed-training nccl-tests README"},
};

} // namespace

std::string_view host_cpu_name(HostCpu cpu) {
  switch (cpu) {
  case HostCpu::Intel:
    return "Intel";
  case HostCpu::Amd:
    return "AMD";
  case HostCpu::Arm:
    return "Arm";
  }
  SYNCOLL_UNREACHABLE("a host CPU without a name");
}

const GenerationTraits &generation_traits(GpuGeneration generation) {
  const GenerationTraits &row = kGenerations[static_cast<size_t>(generation)];
  SYNCOLL_INVARIANT(row.generation == generation, "the generation table is out of order");
  return row;
}

std::span<const GenerationTraits> all_generations() {
  return kGenerations;
}

std::span<const SystemPreset> all_system_presets() {
  return kSystems;
}

const FabricTraits &fabric_traits(Fabric fabric) {
  const FabricTraits &row = kFabrics[static_cast<size_t>(fabric)];
  SYNCOLL_INVARIANT(row.fabric == fabric, "the fabric table is out of order");
  return row;
}

std::span<const FabricTraits> all_fabrics() {
  return kFabrics;
}

const FabricTraits *find_fabric(std::string_view name) {
  for (const FabricTraits &f : kFabrics)
    if (name_key(f.name) == name_key(name))
      return &f;
  return nullptr;
}

const SystemPreset *find_system_preset(std::string_view name) {
  for (const SystemPreset &s : kSystems)
    if (name_key(s.name) == name_key(name))
      return &s;
  return nullptr;
}

std::optional<GpuGeneration> generation_of_sm(int sm) {
  switch (sm) {
  case 70:
    return GpuGeneration::Volta;
  case 80:
    return GpuGeneration::Ampere;
  case 90:
    return GpuGeneration::Hopper;
  case 100:
    return GpuGeneration::Blackwell;
  }
  return std::nullopt;
}

std::optional<GpuGeneration> generation_of_gcn(std::string_view gcn) {
  gcn = gcn.substr(0, gcn.find(':'));
  if (gcn.starts_with("gfx"))
    gcn.remove_prefix(3);
  // RCCL's bare number reads gfx90a's last digit 'a' as 10.
  if (gcn == "90a" || gcn == "910")
    return GpuGeneration::Cdna2;
  if (gcn == "940" || gcn == "941" || gcn == "942")
    return GpuGeneration::Cdna3;
  if (gcn == "950")
    return GpuGeneration::Cdna4;
  return std::nullopt;
}

CpuInterconnect cpu_interconnect(std::string_view arch, std::string_view vendor, int family,
                                 int model) {
  // NCCL's CPU models (topo.cc): Intel family 6, model 0x55 (85) and above Skylake's UPI, 0x8f
  // (143) Sapphire Rapids, 0xcf (207) Emerald Rapids; below 0x55 Broadwell's QPI.
  if (arch == "ppc64" || arch == "ppc64le")
    return {"POWER9 X-Bus", 32};
  if (arch == "arm64" || arch == "aarch64")
    return {"Arm socket link", 6};
  if (vendor == "AuthenticAMD")
    return {"AMD Infinity Fabric", 16};
  if (family == 6 && model == 0xcf)
    return {"Emerald Rapids UPI", 40};
  if (family == 6 && model == 0x8f)
    return {"Sapphire Rapids UPI", 22};
  if (family == 6 && model >= 0x55)
    return {"Skylake UPI", 10};
  return {"Broadwell QPI", 6};
}

} // namespace syncoll
