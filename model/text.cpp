#include "model/text.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <string>

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

Expected<int64_t> parse_size(const std::string &text) {
  if (text.find("..") != std::string::npos)
    return fail({}, fmt::format("size '{}': one size here, not a sweep", text));
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception &) {
    return fail({},
                fmt::format("size '{}' is not a number of bytes (e.g. 4096, 64KiB, 1GiB)", text));
  }
  std::string unit = text.substr(used);
  int64_t scale = 1;
  if (unit == "" || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KiB")
    scale = int64_t(1) << 10;
  else if (unit == "M" || unit == "MB" || unit == "MiB")
    scale = int64_t(1) << 20;
  else if (unit == "G" || unit == "GB" || unit == "GiB")
    scale = int64_t(1) << 30;
  else if (unit == "T" || unit == "TB" || unit == "TiB")
    scale = int64_t(1) << 40;
  else
    return fail({}, fmt::format("size '{}' has an unknown unit '{}' (B; K, KB or KiB; M, MB or "
                                "MiB; G, GB or GiB; T, TB or TiB: all powers of 1024)",
                                text, unit));
  if (value <= 0 || value > (int64_t(1) << 42) / scale)
    return fail({}, fmt::format("size '{}' is out of range (1 B .. 4 TiB)", text));
  return value * scale;
}

namespace {

Expected<std::vector<int64_t>> parse_one_range(const std::string &text) {
  auto dots = text.find("..");
  if (dots == std::string::npos) {
    SYNCOLL_TRY(one, parse_size(text));
    return std::vector<int64_t>{one};
  }
  SYNCOLL_TRY(from, parse_size(text.substr(0, dots)));
  SYNCOLL_TRY(to, parse_size(text.substr(dots + 2)));
  if (to < from)
    return fail({}, fmt::format("size range '{}' ends below its start", text));
  std::vector<int64_t> sizes;
  for (int64_t s = from; s <= to; s *= 2)
    sizes.push_back(s);
  return sizes;
}

} // namespace

Expected<std::vector<int64_t>> parse_size_range(const std::string &text) {
  if (text.find(',') == std::string::npos)
    return parse_one_range(text);
  std::vector<int64_t> sizes;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part.empty())
      return fail({}, fmt::format("size list '{}' has an empty entry", text));
    SYNCOLL_TRY(some, parse_one_range(part));
    sizes.insert(sizes.end(), some.begin(), some.end());
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string format_decimal(double value) {
  std::string s = fmt::format("{:.3f}", value);
  while (!s.empty() && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.')
    s.pop_back();
  return s;
}

} // namespace syncoll
