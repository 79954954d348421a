// Compositions as JSON files (docs/formats.md, "Compositions"). Errors are located at the value
// that breaks the rule (file:line:col).
#pragma once

#include "compose/composition.h"

#include <string>

namespace syncoll {
class JsonView; // model/json_document.h
}

namespace syncoll::compose {

[[nodiscard]] Expected<Composition> composition_from_json(const JsonView &root);
[[nodiscard]] Expected<Composition> read_composition_file(const std::string &path);

} // namespace syncoll::compose
