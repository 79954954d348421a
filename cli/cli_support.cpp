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
  command.add_option("--shape", shape, "grid shape WxH (mesh2d, torus2d) or XxYxZ (torus3d)");
  command.add_option("--nodes", params.nodes, "multinode: number of nodes");
  command.add_option("--gpus", params.gpus, "multinode: GPUs per node");
  command.add_option("--intra", params.intra, "multinode: intra-node topology name");
  command.add_option("--nics", params.nics, "multinode: NICs per node");
  command.add_option("--nic-bandwidth", params.nic_bandwidth_gbps, "multinode: GB/s per NIC");
  command.add_flag("--unidirectional", params.unidirectional, "ring: links in one direction");
}

Expected<Topology> resolve_topology(TopologyOptions &options) {
  if (!options.shape.empty()) {
    std::vector<int> sides;
    std::stringstream ss(options.shape);
    for (std::string part; std::getline(ss, part, 'x');) {
      try {
        size_t used = 0;
        int v = std::stoi(part, &used);
        if (used != part.size())
          throw std::invalid_argument(part);
        sides.push_back(v);
      } catch (const std::exception &) {
        return fail({},
                    fmt::format("--shape must look like 4x4 or 3x3x3, got '{}'", options.shape));
      }
    }
    options.params.shape = sides;
  }
  const std::string &spec = options.spec;
  bool is_file = std::filesystem::is_regular_file(spec) ||
                 (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json");
  if (is_file) {
    const TopologyParams &p = options.params;
    if (p.n || p.dims || p.shape || p.nodes || p.gpus || p.intra || p.nics ||
        p.nic_bandwidth_gbps || p.unidirectional)
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

Expected<std::string> read_text_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail({path, 0, 0}, "cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

} // namespace syncoll::cli
