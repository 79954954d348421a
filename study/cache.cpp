#include "study/cache.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

namespace syncoll::study {

Expected<ResultCache> ResultCache::open(const std::string &directory) {
  const std::filesystem::path folder = std::filesystem::path(directory) / "cache";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec)
    return fail({folder.string(), 0, 0}, "cannot create the study's cache: " + ec.message());
  return ResultCache(folder.string());
}

std::string ResultCache::path_of(const Point &point) const {
  return fmt::format("{}/{:016x}.json", folder_, point.hash);
}

std::optional<Outcome> ResultCache::find(const Point &point) const {
  std::ifstream in(path_of(point));
  if (!in)
    return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("key", "") != point.key)
    return std::nullopt;
  const auto status = parse_outcome_status(j.value("status", ""));
  if (!status)
    return std::nullopt;
  return Outcome{*status,
                 j.value("time_us", 0.0),
                 j.value("algbw_gbps", 0.0),
                 j.value("busbw_gbps", 0.0),
                 j.value("busiest_link", 0.0),
                 j.value("note", ""),
                 j.value("synthesis_s", 0.0)};
}

Expected<void> ResultCache::store(const Point &point, const Outcome &o) const {
  nlohmann::ordered_json j;
  j["key"] = point.key;
  j["status"] = outcome_status_name(o.status);
  j["time_us"] = o.time_us;
  j["algbw_gbps"] = o.algbw_gbps;
  j["busbw_gbps"] = o.busbw_gbps;
  j["busiest_link"] = o.busiest_link;
  j["note"] = o.note;
  j["synthesis_s"] = o.synthesis_s;
  const std::string path = path_of(point);
  // Unique per process, so that shards writing the same point never share a temporary file.
  const std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << j.dump() << '\n';
    if (!out)
      return fail({temporary, 0, 0}, "cannot write a cached result");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec)
    return fail({path, 0, 0}, "cannot store a cached result: " + ec.message());
  return {};
}

} // namespace syncoll::study
