#include "study/points.h"

#include "model/hardware.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "nccl/version.h"

#include <fmt/format.h>

namespace syncoll::study {
namespace {

// The calibrated rows a machine's results come from: a recalibrated syncoll misses the cache
// instead of reusing results of the old constants.
std::string calibration_key(const SystemPreset &p) {
  const GenerationTraits &g = generation_traits(p.generation);
  std::string key = fmt::format(
      "preset={},{},{},{},{},{},{},{},tuner={},host_cpu={},ll128={}", p.name, p.node_topology,
      p.gpus_per_node, p.nics_per_node, p.nic_gbps, p.launch_us, p.host_path_gbps, p.socket_links,
      static_cast<int>(p.platform_tuner), static_cast<int>(p.host_cpu), p.ll128_by_default);
  const FabricTraits &f = fabric_traits(p.fabric);
  key += fmt::format(";fabric={},{},{},{},{},{},simple_only={},proxy={}", f.name,
                     f.nic_payload_share, f.message_latency_us, f.host_cost_us, f.connection_gbps,
                     f.ll128_connection_share, f.simple_protocol_only, f.proxy_message_us);
  key += fmt::format(";generation={},{},{},{},{},{},{},{},{},{},{},{}", g.name, g.nvlink_line_gbps,
                     g.nccl_nvlink_gbps, fmt::join(g.nvlink_payload_share, "/"),
                     fmt::join(g.nvlink_hop_us, "/"), fmt::join(g.thread_block_gbps, "/"),
                     g.nvls_payload_share, g.nvls_latency_us, g.nvls_step_kib, g.executor_step_us,
                     g.nccl_ll_max_gbps, fmt::join(g.nccl_tree_channel_gbps, "/"));
  key += fmt::format(
      ";nvls_tree={};tree_hop={};tree_ll128={};nvls_channels={}",
      fmt::join(g.nccl_nvls_tree_channel_gbps, "/"), fmt::join(g.nccl_tree_hop_us, "/"),
      fmt::join(g.nccl_tree_ll128_channel_gbps, "/"), fmt::join(g.nccl_nvls_channels, "/"));
  return key;
}

std::string variant_kind_key(const Variant &v) {
  switch (v.kind) {
  case VariantKind::Nccl:
    // The release, the channel rule beside NVLS and NVLS tree's pipeline chunk are the model's
    // code, not a calibrated row: any of them changing must miss the cache too.
    return fmt::format("nccl algorithm={} collnet={} release={} beside_nvls={} nvls_tree_chunk={}",
                       v.algorithm ? std::string(nccl::nccl_algorithm_name(*v.algorithm)) : "auto",
                       v.collnet, nccl::nccl_version_name(nccl::kNewestNcclVersion),
                       kNcclRingChannelsBesideNvls, kNcclNvlsTreeChunkBytes);
  case VariantKind::Composed:
    return v.plan ? fmt::format("compose stripes={} ring_nodes={} pipeline={}", v.plan->stripes,
                                v.plan->ring_nodes, v.plan->pipeline)
                  : "compose search";
  case VariantKind::Program:
    return fmt::format("program {:016x}", fnv1a(v.program_text));
  case VariantKind::Dsl:
    return fmt::format("dsl {} instances={}", v.example, v.instances);
  case VariantKind::Synth:
    return fmt::format("synth pareto time_limit_s={}", v.time_limit_s);
  }
  SYNCOLL_UNREACHABLE("variant kind");
}

std::string variant_key(const Variant &v) {
  return fmt::format("{} protocol={}", variant_kind_key(v),
                     v.protocol ? std::string(protocol_name(*v.protocol)) : "own");
}

} // namespace

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Plan plan_points(const Study &study) {
  Plan plan;
  for (size_t m = 0; m < study.machines.size(); ++m) {
    const Machine &machine = study.machines[m];
    std::string machine_key =
        fmt::format("system={};topology={};nodes={};gpus={};nics={};nic_gbps={};nvlink_scale={};"
                    "ranks={};dims={};shape={};intra={};oversubscription={};link_gbps={};"
                    "link_alpha_us={};link_multiplicity={}",
                    machine.system, machine.topology, machine.nodes, machine.gpus, machine.nics,
                    machine.nic_gbps, machine.nvlink_scale, machine.ranks, machine.dims,
                    machine.shape, machine.intra, machine.oversubscription, machine.link_gbps,
                    machine.link_alpha_us, machine.link_multiplicity);
    if (!machine.system.empty())
      machine_key += ";" + calibration_key(*find_system_preset(machine.system));
    for (CollectiveKind collective : study.collectives)
      for (size_t v = 0; v < study.variants.size(); ++v) {
        Group group{m, collective, v, {}};
        for (int64_t size : study.sizes) {
          Point p{m, collective, v, size, {}, 0};
          // The leading version changes whenever the simulator times the same point differently
          // (4: an executor step pays its cost after the flag it depends on), so a cache filled
          // by an older syncoll is recomputed rather than reused.
          p.key =
              fmt::format("syncoll-study-4;{};collective={};size={};variant={}", machine_key,
                          collective_kind_name(collective), size, variant_key(study.variants[v]));
          p.hash = fnv1a(p.key);
          group.points.push_back(plan.points.size());
          plan.points.push_back(std::move(p));
        }
        plan.groups.push_back(std::move(group));
      }
  }
  return plan;
}

std::vector<size_t> shard_groups(const Plan &plan, int index, int count) {
  std::vector<size_t> out;
  for (size_t g = size_t(index); g < plan.groups.size(); g += size_t(count))
    out.push_back(g);
  return out;
}

} // namespace syncoll::study
