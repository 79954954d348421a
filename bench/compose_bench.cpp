// Composed collectives (compose/) against NCCL's own choice in the same simulator: multinode
// DGX H100 (8 NICs per node) and AWS p4de (4 EFA NICs per node), 4 and 16 nodes of 8 GPUs by
// default and 64 with --nodes, Allreduce, Allgather, Broadcast and Alltoall from 1 MiB to 4 GiB
// (Alltoall past 4 nodes under a sharing window, docs/cost-model.md). Each composed entry is the
// fastest verified plan among HiCCL's parameters (factors nodes x GPUs, stripes 1 or one per NIC,
// a tree or a ring across nodes, pipeline depth 1 or 4), as an interpreting executor runs it.
// `--nics` sweeps the NICs per node (each at the preset's rate), 1 to 8 in the full table.
//   ./build/ci/bench/compose_bench [--quick] [--nodes 4,16,64] [--nics 1,2,4,8]
//                                  [--systems dgx_h100,aws_p4de] [--collectives allreduce,...]
#include "compose/search.h"
#include "model/collective.h"
#include "model/hardware.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <sstream>
#include <string>

using namespace syncoll;

namespace {

std::string plan_name(const compose::Hierarchy &h) {
  // Two levels (nodes x GPUs) go without saying; deeper hierarchies are named.
  const std::string levels =
      h.factors.size() > 2 ? fmt::format("{} ", fmt::join(h.factors, "x")) : "";
  return fmt::format("{}s{} r{} p{}", levels, h.stripes, h.ring_nodes, h.pipeline);
}

std::string size_name(int64_t b) {
  if (b >= int64_t(1) << 30)
    return fmt::format("{} GiB", b >> 30);
  return fmt::format("{} MiB", b >> 20);
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  std::vector<int> node_counts{4, 16};
  std::vector<int> nic_counts; // empty: each preset's own
  std::vector<std::string> chosen_systems;
  std::vector<CollectiveKind> chosen_kinds;
  auto words = [](const char *text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
      out.push_back(item);
    return out;
  };
  // Positive integers, or none when a word is not one.
  auto int_list = [&](const char *text) {
    std::vector<int> out;
    for (const std::string &word : words(text)) {
      char *end = nullptr;
      const long v = std::strtol(word.c_str(), &end, 10);
      if (word.empty() || *end != '\0' || v < 1 || v > 1 << 20)
        return std::vector<int>();
      out.push_back(int(v));
    }
    return out;
  };
  auto usage = [](const char *what) {
    std::fprintf(stderr,
                 "compose_bench: %s\nusage: compose_bench [--quick] [--nodes 4,16,64] "
                 "[--nics 1,2,4,8] [--systems dgx_h100,aws_p4de] [--collectives allreduce,...]\n",
                 what);
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
      node_counts = {2};
    } else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
      node_counts = int_list(argv[++i]);
      if (node_counts.empty())
        return usage("--nodes takes positive integers separated by commas");
    } else if (std::strcmp(argv[i], "--nics") == 0 && i + 1 < argc) {
      nic_counts = int_list(argv[++i]);
      if (nic_counts.empty())
        return usage("--nics takes positive integers separated by commas");
    } else if (std::strcmp(argv[i], "--collectives") == 0 && i + 1 < argc) {
      for (const std::string &word : words(argv[++i])) {
        const auto kind = parse_collective_kind(word);
        if (!kind) {
          std::fprintf(stderr, "compose_bench: unknown collective '%s'\n", word.c_str());
          return 2;
        }
        chosen_kinds.push_back(*kind);
      }
    } else if (std::strcmp(argv[i], "--systems") == 0 && i + 1 < argc) {
      chosen_systems = words(argv[++i]);
    } else {
      return usage((std::string("unknown option or missing value: ") + argv[i]).c_str());
    }
  }
  const std::vector<int64_t> sizes = quick
                                         ? std::vector<int64_t>{int64_t(1) << 20}
                                         : std::vector<int64_t>{int64_t(1) << 20, int64_t(64) << 20,
                                                                int64_t(1) << 30, int64_t(4) << 30};
  const std::vector<std::string> systems = !chosen_systems.empty() ? chosen_systems
                                           : quick
                                               ? std::vector<std::string>{"dgx_h100"}
                                               : std::vector<std::string>{"dgx_h100", "aws_p4de"};
  const std::vector<CollectiveKind> kinds =
      !chosen_kinds.empty()
          ? chosen_kinds
          : std::vector<CollectiveKind>{CollectiveKind::Allreduce, CollectiveKind::Allgather,
                                        CollectiveKind::Broadcast, CollectiveKind::Alltoall};
  std::printf("%-9s %5s %4s %-10s %7s  %-11s %11s %11s %7s  %-6s %s\n", "system", "nodes", "nics",
              "collective", "size", "best plan", "composed us", "NCCL us", "ratio", "winner",
              "NCCL's choice");
  int failures = 0;
  for (const std::string &name : systems) {
    for (int nics : nic_counts.empty() ? std::vector<int>{0} : nic_counts)
      for (int nodes : node_counts) {
        SystemPreset preset = *find_system_preset(name);
        if (nics > 0)
          preset.nics_per_node = nics;
        auto system = simulator::make_system_model(preset, nodes);
        if (!system) {
          std::printf("%s x %d: %s\n", name.c_str(), nodes, system.error().to_string().c_str());
          ++failures;
          continue;
        }
        const int ranks = system->topology.num_ranks();
        std::vector<compose::Hierarchy> plans;
        // Past 16 nodes a flat tree across nodes needs a thread block per peer node, more than the
        // executor keeps resident, so the top level is a ring of 8-node segments or of all nodes,
        // or a tree of three levels (groups of 8 nodes, nodes, GPUs); and a 512-rank plan takes
        // seconds to lower and verify, so it is not pipelined.
        const bool large = nodes > 16;
        const std::set<int> rings =
            large ? std::set<int>{std::max(1, nodes / 8), nodes} : std::set<int>{1, nodes};
        const std::set<int> pipelines = large ? std::set<int>{1} : std::set<int>{1, 4};
        for (int stripes : std::set<int>{1, preset.nics_per_node}) {
          for (int ring : rings)
            for (int pipeline : pipelines)
              plans.push_back({{nodes, system->gpus_per_node}, stripes, ring, pipeline, {}});
          if (large && nodes % 8 == 0)
            plans.push_back({{nodes / 8, 8, system->gpus_per_node}, stripes, 1, 1, {}});
          if (!large && system->gpus_per_node == 8)
            for (int pipeline : pipelines)
              plans.push_back({{nodes, 2, 2, 2}, stripes, 1, pipeline, {}});
        }
        for (CollectiveKind kind : kinds) {
          // Past 4 nodes the system shares max-min fair rates out once per window of simulated
          // time (default_sharing_window), for NCCL and the composed plans alike, as every
          // command does.
          const simulator::SystemModel &machine = *system;
          // Allreduce in a slice per rank where the model holds it (its postcondition relates
          // ranks^2 x chunks x parts, at most 2^24), else in fewer slices: plans grouped by the
          // chunk factor their parts allow.
          std::map<int, std::vector<compose::Hierarchy>> by_factor;
          for (const compose::Hierarchy &h : plans) {
            int factor = 1;
            if (kind == CollectiveKind::Allreduce)
              for (factor = ranks;
                   factor > 1 &&
                   int64_t(ranks) * ranks * factor * h.stripes * h.pipeline > kMaxChunkCopies;)
                factor /= 2;
            by_factor[factor].push_back(h);
          }
          const std::optional<int> root =
              kind == CollectiveKind::Broadcast ? std::optional<int>(0) : std::nullopt;
          Expected<compose::Composition> composition = fail({}, "no plans");
          Expected<CollectiveSpec> spec = fail({}, "no plans");
          Expected<std::vector<compose::Search>> found = std::vector<compose::Search>{};
          for (const auto &[factor, group] : by_factor) {
            composition = compose::Composition::standard(kind, ranks, factor, root);
            spec = make_collective(kind, ranks, factor, root);
            if (!composition || !spec)
              break;
            auto more = compose::search(*composition, *spec, machine, sizes, group);
            if (!more) {
              found = std::move(more);
              break;
            }
            found->resize(sizes.size());
            for (size_t i = 0; i < sizes.size(); ++i) {
              compose::Search &into = (*found)[i];
              const compose::Search &from = (*more)[i];
              for (size_t t = 0; t < from.tried.size(); ++t) {
                into.tried.push_back(from.tried[t]);
                if (from.best == t &&
                    (!into.best || *from.tried[t].us < *into.tried[*into.best].us))
                  into.best = into.tried.size() - 1;
              }
              into.nccl_us = from.nccl_us;
              into.nccl_info = from.nccl_info;
            }
          }
          if (!composition || !spec) {
            // Past the model's bounds: a row that says so.
            const Diagnostics &why = composition ? spec.error() : composition.error();
            std::printf("%-9s %5d %4d %-10s  not run: %s\n", name.c_str(), nodes,
                        preset.nics_per_node, std::string(collective_kind_name(kind)).c_str(),
                        why.items().front().message.c_str());
            continue;
          }
          if (!found) {
            std::printf("%s: %s\n", std::string(collective_kind_name(kind)).c_str(),
                        found.error().to_string().c_str());
            ++failures;
            continue;
          }
          for (size_t i = 0; i < sizes.size(); ++i) {
            const compose::Search &s = (*found)[i];
            const std::string info = s.nccl_info.substr(0, s.nccl_info.find(" time"));
            const std::string choice =
                info.substr(info.find("-> ") == std::string::npos ? 0 : info.find("-> ") + 3);
            if (!s.best) {
              std::printf("%-9s %5d %4d %-10s %7s  %-11s %11s %11.1f %7s  %-6s %s\n", name.c_str(),
                          nodes, preset.nics_per_node,
                          std::string(collective_kind_name(kind)).c_str(),
                          size_name(sizes[i]).c_str(), "none", "-", s.nccl_us.value_or(0), "-",
                          "NCCL", choice.c_str());
              // Why not: the first plan's verdict (they fail alike when none fits).
              std::printf("%47s(%s)\n", "", s.tried.front().verdict.substr(0, 100).c_str());
              continue;
            }
            const compose::Tried &best = s.tried[*s.best];
            const double ratio = s.nccl_us ? *s.nccl_us / *best.us : 0;
            std::printf("%-9s %5d %4d %-10s %7s  %-11s %11.1f %11.1f %6.2fx  %-6s %s\n",
                        name.c_str(), nodes, preset.nics_per_node,
                        std::string(collective_kind_name(kind)).c_str(),
                        size_name(sizes[i]).c_str(), plan_name(best.hierarchy).c_str(), *best.us,
                        s.nccl_us.value_or(0), ratio, ratio > 1 ? "HiCCL" : "NCCL", choice.c_str());
            std::fflush(stdout);
          }
        }
      }
  }
  return failures == 0 ? 0 : 1;
}
