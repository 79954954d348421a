// How names and sizes are read and written the same way everywhere: a name typed on the command
// line or found in a file matches case-insensitively with '-' and '_' ignored (SCCL's DGX1,
// dgx-h100), and a byte count prints in the largest binary unit that divides it.
#pragma once

#include "model/diagnostics.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll {

/// The key a name matches by: lower case, without '-' and '_'.
[[nodiscard]] std::string name_key(std::string_view name);

/// A number with at most three decimals and no trailing zeros: 20.6, 10, 0.125.
[[nodiscard]] std::string format_decimal(double value);
/// "64 KiB", "1 GiB", "1000 B".
[[nodiscard]] std::string format_size(int64_t bytes);

/// A byte size such as 4096, 64K, 64KiB, 1MB, 256MiB or 1G (K, M, G are powers of 1024, as
/// nccl-tests counts them).
[[nodiscard]] Expected<int64_t> parse_size(const std::string &text);
/// "A..B": the powers-of-two sweep from A to B (nccl-tests' -b A -e B -f 2); or one size; or a
/// comma-separated list of these ("1MiB,64MiB,1GiB..8GiB"), ascending without repeats.
[[nodiscard]] Expected<std::vector<int64_t>> parse_size_range(const std::string &text);

} // namespace syncoll
