#include "cli/cli_support.h"

#include "model/topology_json.h"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>

namespace syncoll::cli {

void print_diagnostics(const Diagnostics &diagnostics) {
  for (const auto &d : diagnostics.items()) {
    std::string line = d.to_string();
    if (d.location.file.empty())
      line = "syncoll: " + line;
    std::cerr << line << "\n";
  }
}

int exit_code_or_bad_input(const Expected<int> &outcome) {
  if (outcome)
    return *outcome;
  print_diagnostics(outcome.error());
  return kBadInput;
}

void TopologyOptions::add_to(CLI::App &command, bool positional, bool required) {
  auto *opt = positional ? command.add_option("topology", spec,
                                              "library topology name or topology JSON file")
                         : command.add_option("-t,--topology", spec,
                                              "library topology name or topology JSON file");
  if (required)
    opt->required();
  command.add_option("-n", params.n,
                     "number of ranks (line, ring, fully_connected, star, "
                     "hub_and_spoke)");
  command.add_option("--dims", params.dims, "hypercube dimension");
  command.add_option("--shape", shape,
                     "grid shape WxH (mesh2d, torus2d) or XxYxZ (torus3d, mesh3d)");
  command.add_option("--nodes", params.nodes, "multinode, fat_tree: number of nodes");
  command.add_option("--gpus", params.gpus, "multinode, fat_tree: GPUs per node");
  command.add_option("--intra", params.intra, "multinode, fat_tree: intra-node topology name");
  command.add_option("--nics", params.nics, "multinode, fat_tree: NICs per node");
  command.add_option("--nic-bandwidth", params.nic_bandwidth_gbps,
                     "multinode, fat_tree: GB/s per NIC");
  command.add_option("--tiers", params.tiers, "fat_tree: switch tiers, 2 or 3");
  command.add_option("--nodes-per-leaf", params.nodes_per_leaf, "fat_tree: nodes per leaf switch");
  command.add_option("--leaves-per-pod", params.leaves_per_pod,
                     "fat_tree: leaves per pod (3 tiers)");
  command.add_option("--oversubscription", params.oversubscription,
                     "fat_tree: a leaf's NIC bandwidth over its uplink bandwidth");
  command.add_flag("--unidirectional", params.unidirectional, "ring: links in one direction");
  command.add_flag("--rails", params.rails,
                   "fat_tree: rail-optimized, a leaf per NIC index in each leaf group");
}

std::optional<std::vector<int>> parse_int_list(const std::string &text, char separator) {
  std::vector<int> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, separator);) {
    try {
      size_t used = 0;
      const int v = std::stoi(part, &used);
      if (used != part.size() || v < 1)
        return std::nullopt;
      out.push_back(v);
    } catch (const std::exception &) {
      return std::nullopt;
    }
  }
  if (out.empty())
    return std::nullopt;
  return out;
}

Expected<const SystemPreset *> system_preset(const std::string &name) {
  if (const SystemPreset *preset = find_system_preset(name))
    return preset;
  std::string known;
  for (const SystemPreset &s : all_system_presets())
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  return fail({}, fmt::format("unknown system '{}' (known: {})", name, known));
}

Expected<Topology> resolve_topology(TopologyOptions &options) {
  if (!options.shape.empty()) {
    const auto sides = parse_int_list(options.shape, 'x');
    if (!sides)
      return fail({}, fmt::format("--shape must look like 4x4 or 3x3x3, got '{}'", options.shape));
    options.params.shape = *sides;
  }
  const std::string &spec = options.spec;
  bool is_file = std::filesystem::is_regular_file(spec) ||
                 (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json");
  if (is_file) {
    const TopologyParams &p = options.params;
    if (p.n || p.dims || p.shape || p.nodes || p.gpus || p.intra || p.nics ||
        p.nic_bandwidth_gbps || p.unidirectional || p.tiers || p.nodes_per_leaf ||
        p.leaves_per_pod || p.oversubscription || p.rails)
      return fail({}, fmt::format("size options apply to library topologies, not to the file "
                                  "'{}'",
                                  spec));
    return read_topology_file(spec);
  }
  return make_library_topology(spec, options.params);
}

Expected<CollectiveSpec> resolve_collective(const std::string &spec, int num_ranks,
                                            int chunk_factor, std::optional<int> root) {
  bool is_file = std::filesystem::is_regular_file(spec) ||
                 (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json");
  if (!is_file)
    return make_collective(spec, num_ranks, chunk_factor, root);
  SYNCOLL_TRY(c, read_collective_file(spec));
  if (c.num_ranks() != num_ranks)
    return fail({spec, 0, 0},
                fmt::format("collective has {} ranks, the topology {}", c.num_ranks(), num_ranks));
  return c;
}

Expected<void> write_output(const std::string &path, const std::string &content) {
  if (path == "-") {
    std::cout << content;
    return {};
  }
  std::filesystem::path target(path);
  std::filesystem::path temp = target;
  temp += fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      return fail({path, 0, 0}, "cannot write file");
    out << content;
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return fail({path, 0, 0}, "cannot write file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return fail({path, 0, 0}, "cannot write file");
  }
  return {};
}

Expected<AlgorithmInput> read_algorithm_input(const std::string &path, TopologyOptions topology,
                                              const std::string &collective,
                                              std::optional<int> chunk_factor,
                                              std::optional<int> root) {
  SYNCOLL_TRY(algorithm, read_algorithm_file(path));
  if (topology.spec.empty())
    topology.spec = algorithm.target.topology;
  if (topology.spec.empty())
    return fail({path, 0, 0}, "names no topology; give one with --topology");
  SYNCOLL_TRY(t, resolve_topology(topology));
  const std::string coll = collective.empty() ? algorithm.target.collective : collective;
  if (coll.empty())
    return fail({path, 0, 0}, "names no collective; give one with --collective");
  SYNCOLL_TRY(spec, resolve_collective(coll, t.num_ranks(),
                                       chunk_factor.value_or(algorithm.target.chunk_factor),
                                       root ? root : algorithm.target.root));
  return AlgorithmInput{std::move(algorithm), std::move(t), std::move(spec)};
}

} // namespace syncoll::cli
