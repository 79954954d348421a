#include "model/text.h"

#include <cctype>

namespace syncoll {

std::string name_key(std::string_view name) {
  std::string key;
  for (char c : name)
    if (c != '_' && c != '-')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

std::string format_size(int64_t bytes) {
  static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0)
    bytes /= 1024, ++unit;
  return std::to_string(bytes) + " " + kUnits[unit];
}

} // namespace syncoll
