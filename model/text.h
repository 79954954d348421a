// How names and sizes are read and written the same way everywhere: a name typed on the command
// line or found in a file matches case-insensitively with '-' and '_' ignored (SCCL's DGX1,
// dgx-h100), and a byte count prints in the largest binary unit that divides it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace syncoll {

/// The key a name matches by: lower case, without '-' and '_'.
[[nodiscard]] std::string name_key(std::string_view name);

/// "64 KiB", "1 GiB", "1000 B".
[[nodiscard]] std::string format_size(int64_t bytes);

} // namespace syncoll
