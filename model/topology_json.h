// Topology JSON, specified in docs/formats.md.
#pragma once

#include "model/topology.h"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace syncoll {

class JsonView; // model/json_document.h

/// Reads a topology from a parsed document; every error is located in the document's file.
[[nodiscard]] Expected<Topology> topology_from_json(const JsonView &root);
/// Parses and reads topology JSON text; `file_name` is used in diagnostics.
[[nodiscard]] Expected<Topology> parse_topology_json(std::string_view text,
                                                     const std::string &file_name);
[[nodiscard]] Expected<Topology> read_topology_file(const std::string &path);
nlohmann::ordered_json topology_to_json(const Topology &topology);

} // namespace syncoll
