// A library topology and its parameters on one line, in the command line's spelling: the name an
// algorithm file gives the machine it was made for.
#include "model/topology_library.h"

#include <charconv>
#include <fmt/format.h>
#include <sstream>

namespace syncoll {
namespace {

// One row per parameter: its option, how it is printed from and read into TopologyParams.
struct ParamRow {
  const char *option;
  std::optional<std::string> (*print)(const TopologyParams &);
  bool (*read)(TopologyParams &, std::string_view); ///< null for flags
  void (*set_flag)(TopologyParams &);               ///< flags only
};

template <class T> std::optional<std::string> print_value(const std::optional<T> &v) {
  if (!v)
    return std::nullopt;
  return fmt::format("{}", *v);
}

bool read_int(std::optional<int> &out, std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return false;
  out = v;
  return true;
}

bool read_double(std::optional<double> &out, std::string_view text) {
  // from_chars for doubles is not in GCC 12's library for every target; strtod on a copy is.
  const std::string copy(text);
  char *end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size())
    return false;
  out = v;
  return true;
}

const ParamRow kParams[] = {
    {"-n", [](const TopologyParams &p) { return print_value(p.n); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.n, t); }, nullptr},
    {"--dims", [](const TopologyParams &p) { return print_value(p.dims); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.dims, t); }, nullptr},
    {"--shape",
     [](const TopologyParams &p) -> std::optional<std::string> {
       if (!p.shape)
         return std::nullopt;
       std::string out;
       for (int side : *p.shape)
         out += (out.empty() ? "" : "x") + std::to_string(side);
       return out;
     },
     [](TopologyParams &p, std::string_view t) {
       std::vector<int> sides;
       for (size_t at = 0; at <= t.size();) {
         const size_t x = std::min(t.find('x', at), t.size());
         std::optional<int> side;
         if (!read_int(side, t.substr(at, x - at)))
           return false;
         sides.push_back(*side);
         at = x + 1;
       }
       p.shape = sides;
       return true;
     },
     nullptr},
    {"--nodes", [](const TopologyParams &p) { return print_value(p.nodes); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.nodes, t); }, nullptr},
    {"--gpus", [](const TopologyParams &p) { return print_value(p.gpus); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.gpus, t); }, nullptr},
    {"--intra", [](const TopologyParams &p) { return p.intra; },
     [](TopologyParams &p, std::string_view t) {
       p.intra = std::string(t);
       return true;
     },
     nullptr},
    {"--nics", [](const TopologyParams &p) { return print_value(p.nics); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.nics, t); }, nullptr},
    {"--nic-bandwidth", [](const TopologyParams &p) { return print_value(p.nic_bandwidth_gbps); },
     [](TopologyParams &p, std::string_view t) { return read_double(p.nic_bandwidth_gbps, t); },
     nullptr},
    {"--tiers", [](const TopologyParams &p) { return print_value(p.tiers); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.tiers, t); }, nullptr},
    {"--nodes-per-leaf", [](const TopologyParams &p) { return print_value(p.nodes_per_leaf); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.nodes_per_leaf, t); }, nullptr},
    {"--leaves-per-pod", [](const TopologyParams &p) { return print_value(p.leaves_per_pod); },
     [](TopologyParams &p, std::string_view t) { return read_int(p.leaves_per_pod, t); }, nullptr},
    {"--oversubscription", [](const TopologyParams &p) { return print_value(p.oversubscription); },
     [](TopologyParams &p, std::string_view t) { return read_double(p.oversubscription, t); },
     nullptr},
    {"--unidirectional",
     [](const TopologyParams &p) {
       return p.unidirectional ? std::optional<std::string>("") : std::nullopt;
     },
     nullptr, [](TopologyParams &p) { p.unidirectional = true; }},
    {"--rails",
     [](const TopologyParams &p) {
       return p.rails ? std::optional<std::string>("") : std::nullopt;
     },
     nullptr, [](TopologyParams &p) { p.rails = true; }},
};

} // namespace

std::string library_topology_spec(std::string_view name, const TopologyParams &params) {
  std::string out(name);
  for (const ParamRow &row : kParams)
    if (const auto value = row.print(params))
      out += value->empty() ? fmt::format(" {}", row.option)
                            : fmt::format(" {} {}", row.option, *value);
  return out;
}

std::vector<std::string_view> given_topology_options(const TopologyParams &params) {
  std::vector<std::string_view> given;
  for (const ParamRow &row : kParams)
    if (row.print(params))
      given.push_back(row.option);
  return given;
}

Expected<std::pair<std::string, TopologyParams>>
parse_library_topology_spec(std::string_view spec) {
  std::istringstream in{std::string(spec)};
  std::string name;
  in >> name;
  if (name.empty())
    return fail({}, "an empty topology name");
  TopologyParams params;
  for (std::string option; in >> option;) {
    const ParamRow *row = nullptr;
    for (const ParamRow &r : kParams)
      if (option == r.option)
        row = &r;
    if (!row)
      return fail({}, fmt::format("topology '{}': unknown option '{}'", spec, option));
    if (row->set_flag) {
      row->set_flag(params);
      continue;
    }
    std::string value;
    if (!(in >> value) || !row->read(params, value))
      return fail({}, fmt::format("topology '{}': {} needs a {}", spec, option,
                                  option == std::string_view("--intra") ? "name" : "number"));
  }
  return std::pair{std::move(name), std::move(params)};
}

} // namespace syncoll
