#include "cli/cli_support.h"

#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_json.h"
#include "mscclpp/mscclpp.h"
#include "nccl/topo_xml.h"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

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

void TopologyOptions::add_fabric_to(CLI::App &command) {
  command.add_option("--fabric", fabric,
                     "--system: the network between nodes instead of the preset's (syncoll topo "
                     "list names them: ib_ndr, roce, efa_v4, tcpxo, ...)");
}

void TopologyOptions::add_system_to(CLI::App &command, std::string &system,
                                    const std::string &help) {
  command.add_option("--system", system, help)->required();
  command.add_option("--nodes", params.nodes, "nodes of the system");
  command.add_option("--gpus", params.gpus, "GPUs per node");
  command.add_option("--nics", params.nics, "NICs per node");
  command.add_option("--nic-bandwidth", params.nic_bandwidth_gbps, "GB/s per NIC");
  add_fabric_to(command);
}

namespace {

// Why `folder` cannot take new files; empty when it can.
std::string unwritable_folder(const std::filesystem::path &folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    return fmt::format("the folder '{}' does not exist", folder.string());
  if (::access(folder.c_str(), W_OK) != 0)
    return fmt::format("the folder '{}' cannot be written", folder.string());
  return {};
}

// A topology or collective argument that names a JSON file rather than a library entry: an
// existing file, or a name ending in ".json".
bool names_json_file(const std::string &spec) {
  return std::filesystem::is_regular_file(spec) ||
         (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json");
}

std::filesystem::path folder_of(const std::filesystem::path &path) {
  const std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

// `text` as a number within [least, most]; why not, else empty.
std::string out_of_bounds(const std::string &text, double least, std::optional<double> most) {
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    return fmt::format("'{}' is not a number", text);
  if (v < least || (most && v > *most))
    return most ? fmt::format("must be between {} and {}, got {}", least, *most, text)
                : fmt::format("must be at least {}, got {}", least, text);
  return {};
}

} // namespace

CLI::Validator at_least(double least) {
  return CLI::Validator(
      [least](std::string &text) { return out_of_bounds(text, least, std::nullopt); },
      fmt::format("NUMBER >= {}", least), "at least");
}

CLI::Validator between(double least, double most) {
  return CLI::Validator(
      [least, most](std::string &text) { return out_of_bounds(text, least, most); },
      fmt::format("NUMBER in [{}, {}]", least, most), "between");
}

Expected<void> check_program_root(std::optional<int> root, const Program &program) {
  if (!root)
    return {};
  const auto kind = parse_collective_kind(program.collective());
  if (kind && *kind != CollectiveKind::Custom && !collective_traits(*kind).rooted)
    return fail(
        {}, fmt::format("--root {}: the program's {} has no root", *root, program.collective()));
  if (*root >= program.num_ranks())
    return fail({}, fmt::format("--root {}: the program has ranks 0 to {}", *root,
                                program.num_ranks() - 1));
  return {};
}

CLI::Validator writable_file() {
  return CLI::Validator(
      [](std::string &path) -> std::string {
        if (path == "-")
          return {};
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec))
          return fmt::format("'{}' is a folder, not a file", path);
        if (const std::string why = unwritable_folder(folder_of(path)); !why.empty())
          return fmt::format("cannot write '{}': {}", path, why);
        return {};
      },
      "FILE", "writable file");
}

CLI::Validator writable_folder() {
  return CLI::Validator(
      [](std::string &path) -> std::string {
        std::error_code ec;
        std::filesystem::path folder(path);
        if (!folder.has_filename()) // "out/": the folder is "out"
          folder = folder.parent_path();
        if (std::filesystem::exists(folder, ec)) {
          if (!std::filesystem::is_directory(folder, ec))
            return fmt::format("'{}' is a file, not a folder", path);
          if (const std::string why = unwritable_folder(folder); !why.empty())
            return fmt::format("cannot write into '{}': {}", path, why);
          return {};
        }
        if (const std::string why = unwritable_folder(folder_of(folder)); !why.empty())
          return fmt::format("cannot make '{}': {}", path, why);
        return {};
      },
      "DIR", "writable folder");
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

// A system by preset name, or the machine an NCCL topology dump holds (nccl::system_of_dump).
struct NamedOrDumped {
  nccl::DumpedSystem system;
  /// For a dump, whether it listed any NIC (one without keeps the preset's); none for a name.
  std::optional<bool> dump_lists_nics;
};

Expected<NamedOrDumped> named_or_dumped_system(const std::string &name) {
  if (nccl::names_nccl_topology_file(name)) {
    SYNCOLL_TRY(machine, nccl::read_nccl_topology_file(name));
    SYNCOLL_TRY(system, nccl::system_of_dump(machine, name));
    return NamedOrDumped{std::move(system), !machine.nics.empty()};
  }
  SYNCOLL_TRY(named, system_preset(name));
  return NamedOrDumped{{*named, std::nullopt, {}, nullptr}, std::nullopt};
}

// The heading's note on a dumped system: which of its parts the dump gave and which the preset
// or the options did.
std::string dump_origin(const std::string &file, const SystemPreset &preset,
                        const std::string &own_node, bool dump_nics, bool gpu_direct,
                        const TopologyParams &p) {
  const char *given = dump_nics ? "the dump's" : "the preset's: the dump lists none";
  const char *count = p.nics ? "--nics" : given;
  const char *rate = p.nic_bandwidth_gbps ? "--nic-bandwidth" : given;
  // Where the GPUs reach the dump's NICs no nearer than NCCL's limits, what NCCL does about it.
  std::string path;
  if (dump_nics && (preset.nic_path > NcclPathType::Pxb || !gpu_direct))
    path = fmt::format(", the GPUs reach them at {}{}", nccl::nccl_path_name(preset.nic_path),
                       gpu_direct ? ""
                                  : " and NCCL sends without GPUDirect RDMA (its staging "
                                    "through host memory is not in the model)");
  return fmt::format(" (node of {}{}, {} NIC(s) of {} Gb/s: {}{})", file,
                     own_node.empty() ? std::string() : fmt::format(" as dumped, {}", own_node),
                     preset.nics_per_node, preset.nic_gbps * 8,
                     std::string_view(count) == rate
                         ? std::string(count)
                         : fmt::format("count {}, rate {}", count, rate),
                     path);
}

Expected<BuiltSystem> build_system(const std::string &name, const TopologyOptions &options) {
  SYNCOLL_TRY(named_dumped, named_or_dumped_system(name));
  const SystemPreset &named = named_dumped.system.preset;
  const std::optional<bool> dump_nics = named_dumped.dump_lists_nics;
  const std::optional<Topology> &own_node = named_dumped.system.node;

  const TopologyParams &p = options.params;
  if (own_node && p.gpus)
    return fail({}, fmt::format("--gpus: {} is a node of its own (none of the calibrated "
                                "machines'), run with all of its {} GPUs",
                                name, own_node->num_ranks()));
  if (!options.shape.empty())
    return fail({}, "--shape shapes a topology (-t); a --system takes --nodes, --gpus, --nics and "
                    "--nic-bandwidth");
  for (std::string_view option : given_topology_options(p))
    if (option != "--nodes" && option != "--gpus" && option != "--nics" &&
        option != "--nic-bandwidth")
      return fail({}, fmt::format("{} shapes a topology (-t); a --system takes --nodes, --gpus, "
                                  "--nics and --nic-bandwidth",
                                  option));
  const std::pair<std::optional<int>, const char *> counts[] = {
      {p.nodes, "--nodes"}, {p.gpus, "--gpus"}, {p.nics, "--nics"}};
  for (const auto &[count, option] : counts)
    if (count && *count < 1)
      return fail({}, fmt::format("{} must be at least 1, got {}", option, *count));
  if (p.nic_bandwidth_gbps && !(*p.nic_bandwidth_gbps > 0 && *p.nic_bandwidth_gbps <= 1e5))
    return fail({}, fmt::format("--nic-bandwidth must be between 0 and 100000 GB/s, got {}",
                                *p.nic_bandwidth_gbps));
  auto preset = std::make_unique<SystemPreset>(named);
  if (!options.fabric.empty()) {
    const FabricTraits *fabric = find_fabric(options.fabric);
    if (!fabric) {
      std::string known;
      for (const FabricTraits &f : all_fabrics())
        known += (known.empty() ? "" : ", ") + std::string(f.name);
      return fail({}, fmt::format("unknown fabric '{}' (known: {})", options.fabric, known));
    }
    preset->fabric = fabric->fabric;
  }
  if (p.nics)
    preset->nics_per_node = *p.nics;
  if (p.nic_bandwidth_gbps)
    preset->nic_gbps = *p.nic_bandwidth_gbps;
  SYNCOLL_TRY(model,
              own_node
                  ? simulator::make_system_model(*preset, *own_node, p.nodes.value_or(1))
                  : simulator::make_system_model(*preset, p.nodes.value_or(1), p.gpus.value_or(0)));
  if ((p.nics || p.nic_bandwidth_gbps || !options.fabric.empty()) && model.nodes == 1)
    return fail({}, fmt::format("--{} shapes the network between nodes; one node of '{}' has none "
                                "(give --nodes 2 or more)",
                                p.nics                 ? "nics"
                                : p.nic_bandwidth_gbps ? "nic-bandwidth"
                                                       : "fabric",
                                name));
  if (p.nics && *p.nics > model.gpus_per_node)
    return fail({}, fmt::format("--nics {}: a node of {} GPUs uses at most {} NICs (one per GPU)",
                                *p.nics, model.gpus_per_node, model.gpus_per_node));
  std::string origin = dump_nics ? dump_origin(name, *preset, named_dumped.system.label, *dump_nics,
                                               named_dumped.system.gpu_direct, p)
                                 : std::string();
  return BuiltSystem{std::move(preset), std::move(model), std::move(origin),
                     std::move(named_dumped.system.name)};
}

Expected<Topology> resolve_topology(TopologyOptions &options) {
  if (!options.shape.empty()) {
    const auto sides = parse_int_list(options.shape, 'x');
    if (!sides)
      return fail({}, fmt::format("--shape must look like 4x4 or 3x3x3, got '{}'", options.shape));
    options.params.shape = *sides;
  }
  if (!options.fabric.empty())
    return fail({}, "--fabric is a --system's network between nodes; a topology (-t) carries its "
                    "own links' rates and latencies");
  const std::string &spec = options.spec;
  if (names_json_file(spec) || nccl::names_nccl_topology_file(spec)) {
    const auto given = given_topology_options(options.params);
    if (!given.empty())
      return fail({}, fmt::format("{} applies to library topologies, not to the file '{}'",
                                  given.front(), spec));
    if (!nccl::names_nccl_topology_file(spec))
      return read_topology_file(spec);
    // NCCL's own dump of a machine (NCCL_TOPO_DUMP_FILE): its GPUs and the links between them.
    SYNCOLL_TRY(machine, nccl::read_nccl_topology_file(spec));
    return *std::move(machine.topology);
  }
  // The command line's options after the spec's own: a value given twice is the later one's.
  SYNCOLL_TRY(named, parse_library_topology_spec(spec + library_topology_spec("", options.params)));
  return make_library_topology(named.first, named.second);
}

std::string algorithm_file_text(Algorithm algorithm, const TopologyOptions &where) {
  algorithm.target.topology =
      names_json_file(where.spec) || nccl::names_nccl_topology_file(where.spec)
          ? where.spec
          : library_topology_spec(where.spec, where.params);
  return to_canonical_json(algorithm_to_json(algorithm));
}

Expected<CollectiveKind> standard_collective_kind(const std::string &name) {
  const auto kind = parse_collective_kind(name);
  if (kind && *kind != CollectiveKind::Custom)
    return *kind;
  std::string known;
  for (const CollectiveTraits &t : all_collective_traits())
    if (t.standard)
      known += (known.empty() ? "" : ", ") + std::string(t.name);
  return fail({}, fmt::format("unknown collective '{}' (known: {})", name, known));
}

Expected<CollectiveSpec> resolve_collective(const std::string &spec, int num_ranks,
                                            int chunk_factor, std::optional<int> root) {
  if (!names_json_file(spec))
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

Expected<Topology> topology_for_algorithm(const std::string &path, const Algorithm &algorithm,
                                          TopologyOptions topology) {
  if (topology.spec.empty())
    topology.spec = algorithm.target.topology;
  if (topology.spec.empty())
    return fail({path, 0, 0}, "names no topology; give one with --topology");
  // A sized topology named without its size takes the file's rank count.
  std::optional<Topology> sized;
  if (!topology.params.n && algorithm.target.ranks > 0) {
    TopologyOptions with_ranks = topology;
    with_ranks.params.n = algorithm.target.ranks;
    if (auto t = resolve_topology(with_ranks))
      sized = std::move(*t);
  }
  if (!sized) {
    SYNCOLL_TRY(t, resolve_topology(topology));
    sized = std::move(t);
  }
  Topology t = std::move(*sized);
  if (algorithm.target.ranks > 0 && algorithm.target.ranks != t.num_ranks())
    return fail({path, 0, 0}, fmt::format("the algorithm is for {} ranks; the topology '{}' has {}",
                                          algorithm.target.ranks, t.name(), t.num_ranks()));
  return t;
}

Expected<AlgorithmInput> read_algorithm_input(const std::string &path, TopologyOptions topology,
                                              const std::string &collective,
                                              std::optional<int> chunk_factor,
                                              std::optional<int> root) {
  SYNCOLL_TRY(algorithm, read_algorithm_file(path));
  SYNCOLL_TRY(t, topology_for_algorithm(path, algorithm, std::move(topology)));
  const std::string coll = collective.empty() ? algorithm.target.collective : collective;
  if (coll.empty())
    return fail({path, 0, 0}, "names no collective; give one with --collective");
  SYNCOLL_TRY(spec, resolve_collective(coll, t.num_ranks(),
                                       chunk_factor.value_or(algorithm.target.chunk_factor),
                                       root ? root : algorithm.target.root));
  return AlgorithmInput{std::move(algorithm), std::move(t), std::move(spec)};
}

StageProgress::StageProgress(std::string command)
    : command_(std::move(command)), start_(std::chrono::steady_clock::now()) {}

void StageProgress::operator()(std::string_view stage) const {
  fmt::print(stderr, "[{:6.1f} s] {}: {}\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(),
             command_, stage);
}

namespace {

// A verified program as an MSCCL++ plan, written only when the plan verifies too.
Expected<int> write_mscclpp_plan(const verifier::VerifiedProgram &verified,
                                 const Topology &topology, const std::string &output) {
  SYNCOLL_TRY(plan, mscclpp::plan_from_program(verified, topology.ranks_per_node()));
  const mscclpp::PlanReport report = mscclpp::verify_plan(plan);
  if (!report.all_hold()) {
    fmt::print("{}not written: the MSCCL++ plan fails verification (a lowering bug: please "
               "report)\n",
               report.to_text());
    return kCheckFailed;
  }
  int memory_channels = 0, port_channels = 0;
  for (const mscclpp::PlanGpu &g : plan.gpus) {
    memory_channels += g.channel_count(mscclpp::ChannelKind::Memory);
    port_channels += g.channel_count(mscclpp::ChannelKind::Port);
  }
  fmt::print("MSCCL++ plan verified: structure, deadlock freedom, race freedom, postcondition "
             "({} GPUs, {} thread blocks on GPU 0, {} memory and {} port channels)\n",
             plan.gpus.size(), plan.gpus.front().threadblocks.size(), memory_channels,
             port_channels);
  if (!output.empty())
    SYNCOLL_CHECK(write_output(output, mscclpp::execution_plan_json(plan)));
  return kSuccess;
}

} // namespace

Expected<bool> names_mscclpp_plan(const std::string &file) {
  SYNCOLL_TRY(text, read_text_file(file));
  return sniff_program_format(text) == ProgramFormat::Json && mscclpp::is_execution_plan(text);
}

Expected<int> write_verified_program(const verifier::VerifiedProgram &verified,
                                     const Topology &topology, const std::string &output,
                                     const std::string &format) {
  if (format == "mscclpp")
    return write_mscclpp_plan(verified, topology, output);
  if (!output.empty())
    SYNCOLL_CHECK(write_output(output, lowering::write_deployment_xml(verified)));
  return int(kSuccess);
}

} // namespace syncoll::cli
