#include "nccl/nccl_tests.h"

#include "model/collective_traits.h"
#include "model/json_document.h"
#include "nccl/version.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace syncoll::nccl {
namespace {

constexpr int kFloatBytes = 4; // nccl-tests' default type, float

// nccl-tests' numbers in a column of `width`: two decimals while they fit, then fewer, then an
// exponent (its getFloatStr).
std::string column(double value, int width) {
  int digits = 0;
  for (double at = 1; value >= at && digits < 40; at *= 10)
    ++digits;
  if (digits < width - 2)
    return fmt::format("{:>{}.2f}", value, width);
  if (digits < width - 1)
    return fmt::format("{:>{}.1f}", value, width);
  if (digits < width + 1)
    return fmt::format("{:>{}.0f}", value, width);
  if (width >= 7)
    return fmt::format("{:>{}.1e}", value, width);
  return fmt::format("{:>{}.0e}", value, width);
}

std::string program_of(CollectiveKind kind) {
  const std::string_view binary = collective_traits(kind).nccl_tests_binary;
  return binary.empty() ? std::string(collective_kind_name(kind)) : std::string(binary);
}

std::string redop_of(CollectiveKind kind) {
  const std::string_view redop = collective_traits(kind).nccl_tests_redop;
  return redop.empty() ? "none" : std::string(redop);
}

double average_busbw(const NcclTestsRun &run) {
  double sum = 0;
  for (const NcclTestsRow &r : run.rows)
    sum += r.busbw_gbps;
  return run.rows.empty() ? 0 : sum / double(run.rows.size());
}

// nccl-tests' %g.
std::string general(double value) {
  return fmt::format("{:g}", value);
}

// A simulated rank's host and device, as nccl-tests names them.
bool several_hosts(const NcclTestsRun &run) {
  return run.ranks_per_host > 0 && run.ranks_per_host < run.ranks;
}
std::string host_of(const NcclTestsRun &run, int rank) {
  return several_hosts(run) ? fmt::format("simulated-host{}", rank / run.ranks_per_host)
                            : "simulated";
}
int device_of(const NcclTestsRun &run, int rank) {
  return several_hosts(run) ? rank % run.ranks_per_host : rank;
}

} // namespace

std::string nccl_tests_text(const NcclTestsRun &run) {
  const std::string program = program_of(run.kind);
  std::string out = fmt::format("# syncoll simulate: {}\n", run.what);
  if (run.nccl_version_code)
    out += fmt::format("# nccl-headers={0} nccl-library={0} (the NCCL release modelled)\n",
                       *run.nccl_version_code);
  out += "# in place and out of place are one simulated call; #wrong is N/A: no data is checked\n";
  out += fmt::format("# Collective test starting: {}\n#\n# Using devices\n", program);
  for (int rank = 0; rank < run.ranks; ++rank)
    out += fmt::format("#  Rank {:>2} Group  0 Pid      0 on  {} device {:>2} [0000:00:00] "
                       "simulated GPU\n",
                       rank, host_of(run, rank), device_of(run, rank));
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                "
                     "       in-place          \n",
                     "", "", "", "", "");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
                     "{:>6}  {:>6}  {:>6} \n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                     "time", "algbw", "busbw", "#wrong");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
                     "{:>6}  {:>6}  {:>6} \n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                     "(GB/s)", "(GB/s)", "");
  const std::string redop = redop_of(run.kind);
  const int root = run.root.value_or(-1);
  for (const NcclTestsRow &r : run.rows) {
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size, r.size / kFloatBytes, "float",
                       redop, root);
    for (int placement = 0; placement < 2; ++placement)
      out += fmt::format("  {:>7}  {:>6}  {:>6}    N/A", column(r.time_us, 7),
                         column(r.algbw_gbps, 6), column(r.busbw_gbps, 6));
    out += "\n";
  }
  out += fmt::format("# {:<20} : {} {}\n", "Out of bounds values", 0, "OK");
  out += fmt::format("# {:<20} : {} \n", "Avg bus bandwidth", general(average_busbw(run)));
  out += fmt::format("#\n# Collective test concluded: {}\n", program);
  return out;
}

std::string nccl_tests_json(const NcclTestsRun &run) {
  using Json = nlohmann::ordered_json;
  Json doc;
  doc["version"] = 2;
  doc["generator"] = "syncoll simulate: " + run.what;
  if (run.nccl_version_code)
    doc["nccl_version"] = *run.nccl_version_code;
  Json config;
  config["nthreads"] = 1;
  config["ngpus"] = run.ranks;
  config["minimum_bytes"] = run.rows.empty() ? 0 : run.rows.front().size;
  config["maximum_bytes"] = run.rows.empty() ? 0 : run.rows.back().size;
  config["step_factor"] = 2;
  config["validation"] = 0;
  Json devices = Json::array();
  for (int rank = 0; rank < run.ranks; ++rank)
    devices.push_back(
        Json{{"rank", rank}, {"hostname", host_of(run, rank)}, {"device", device_of(run, rank)}});
  config["devices"] = std::move(devices);
  doc["config"] = std::move(config);
  Json results = Json::array();
  const std::string redop = redop_of(run.kind);
  const std::string root = fmt::format("{:>6}", run.root.value_or(-1));
  for (const NcclTestsRow &r : run.rows) {
    Json row;
    row["size"] = r.size;
    row["count"] = r.size / kFloatBytes;
    row["type"] = "float";
    row["redop"] = redop;
    row["root"] = root;
    for (const char *placement : {"out_of_place", "in_place"}) {
      Json timing;
      timing["time"] = r.time_us;
      timing["alg_bw"] = r.algbw_gbps;
      timing["bus_bw"] = r.busbw_gbps;
      timing["nwrong"] = nullptr;
      row[placement] = std::move(timing);
    }
    row["actual_iterations"] = 1;
    row["experiment_name"] = program_of(run.kind);
    results.push_back(std::move(row));
  }
  doc["results"] = std::move(results);
  doc["out_of_bounds"] = Json{{"count", 0}, {"okay", "true"}};
  doc["average_bus_bandwidth"] = Json{{"bandwidth", average_busbw(run)}, {"okay", "unchecked"}};
  doc["errors"] = Json::array();
  return doc.dump(2) + "\n";
}

namespace {

// The kind of an nccl-tests program named by itself or by its path ("./build/all_reduce_perf").
std::optional<CollectiveKind> kind_of_program(std::string_view program) {
  while (!program.empty() && (program.back() == ' ' || program.back() == '\r'))
    program.remove_suffix(1);
  if (const size_t slash = program.rfind('/'); slash != std::string_view::npos)
    program.remove_prefix(slash + 1);
  for (const CollectiveTraits &t : all_collective_traits())
    if (!t.nccl_tests_binary.empty() && program == t.nccl_tests_binary)
      return t.kind;
  return std::nullopt;
}

template <class T> std::optional<T> number(std::string_view token) {
  T value{};
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size())
    return std::nullopt;
  return value;
}

std::vector<std::string_view> tokens_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r'))
      ++at;
    size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r')
      ++end;
    if (end > at)
      out.push_back(line.substr(at, end - at));
    at = end;
  }
  return out;
}

// NCCL's tuning line, any release's wording: "<bytes> Bytes -> Algo <A> proto <P>".
void read_choice(std::string_view line,
                 std::map<int64_t, std::pair<std::string, std::string>> &to) {
  const size_t arrow = line.find(" Bytes -> Algo ");
  if (arrow == std::string_view::npos)
    return;
  size_t start = arrow;
  while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9')
    --start;
  const auto bytes = number<int64_t>(line.substr(start, arrow - start));
  const auto rest = tokens_of(line.substr(arrow + 15));
  if (!bytes || rest.size() < 3 || rest[1] != "proto")
    return;
  std::string protocol(rest[2]);
  while (!protocol.empty() && !std::isalnum(static_cast<unsigned char>(protocol.back())))
    protocol.pop_back();
  to[*bytes] = {std::string(rest[0]), protocol};
}

// The host a device line names: "#  Rank  9 Group  0 Pid  52109 on  gpu-001 device  1 [...]".
std::string_view host_of_device_line(std::string_view comment) {
  const size_t on = comment.find(" on ");
  const size_t device = comment.rfind(" device ");
  if (on == std::string_view::npos || device == std::string_view::npos || device < on)
    return {};
  const auto words = tokens_of(comment.substr(on + 4, device - on - 4));
  return words.size() == 1 ? words[0] : std::string_view{};
}

// The table header's column of the first (out-of-place) time: "#  size  count  type  redop
// root  time  algbw ..." gives 5; none for a line that is not the header.
std::optional<size_t> time_column(std::string_view comment) {
  const auto words = tokens_of(comment.substr(1));
  if (words.size() < 4 || words[0] != "size" || words[1] != "count")
    return std::nullopt;
  for (size_t i = 2; i < words.size(); ++i)
    if (words[i] == "time")
      return i;
  return std::nullopt;
}

// NCCL_VERSION_CODE of "2.21.5" (the text after "NCCL version "), none for other text.
std::optional<int> version_code_of(std::string_view text) {
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(std::string(text.substr(0, 16)).c_str(), "%d.%d.%d", &major, &minor, &patch) !=
          3 ||
      major != 2 || minor < 0 || minor > 99 || patch < 0 || patch > 99)
    return std::nullopt;
  return nccl_version_code(NcclVersion{minor, patch});
}

// The release a log names: nccl-tests' "nccl-library=22105", NCCL's "NCCL version 2.21.5" or
// RCCL's "RCCL version 2.27.7" (RCCL's releases carry the NCCL release they follow).
void read_version(std::string_view line, std::optional<int> &code) {
  if (const size_t at = line.find("nccl-library="); at != std::string_view::npos) {
    const auto words = tokens_of(line.substr(at + 13));
    if (!words.empty())
      if (const auto value = number<int>(words[0]); value && *value > 0)
        code = *value;
  } else if (const size_t info = line.find("CCL version ");
             info != std::string_view::npos && info > 0 &&
             (line[info - 1] == 'N' || line[info - 1] == 'R')) {
    if (const auto value = version_code_of(line.substr(info + 12)); value && !code)
      code = value;
  }
}

Expected<MeasuredLog> read_text_log(std::string_view text, const std::string &file) {
  MeasuredLog log;
  std::map<int64_t, std::pair<std::string, std::string>> choices;
  int devices = 0;
  std::set<std::string, std::less<>> hosts;
  // The out-of-place time's column: today's header puts it after size, count, type, redop and
  // root; older nccl-tests printed no root (and before that no redop).
  size_t time_at = 5;
  size_t offset = 0;
  while (offset < text.size()) {
    size_t end = text.find('\n', offset);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(offset, end - offset);
    const size_t line_start = offset;
    offset = end + 1;
    if (line.find("NCCL INFO") != std::string_view::npos) {
      read_choice(line, choices);
      read_version(line, log.nccl_version_code);
      continue;
    }
    // MPI launchers prefix every line ("[1,0]<stdout>:"): what follows the prefix is the log.
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      const std::string_view comment = line.substr(hash);
      if (const size_t at = comment.find("Collective test starting: ");
          at != std::string_view::npos)
        log.kind = kind_of_program(comment.substr(at + 26));
      else if (comment.find("#  Rank ") == 0 &&
               comment.find(" device ") != std::string_view::npos) {
        ++devices;
        if (const std::string_view host = host_of_device_line(comment); !host.empty())
          hosts.emplace(host);
      } else if (const auto column = time_column(comment)) {
        time_at = *column;
      } else {
        read_version(comment, log.nccl_version_code);
      }
      continue;
    }
    // Launchers' prefixes before a result line: Open MPI's "[1,0]<stdout>:", srun's "0: ".
    if (line.size() > 1 && line[0] == '[')
      if (const size_t end_of_prefix = line.find(">:"); end_of_prefix != std::string_view::npos)
        line.remove_prefix(end_of_prefix + 2);
    auto tokens = tokens_of(line);
    if (!tokens.empty() && tokens[0].size() > 1 && tokens[0].back() == ':' &&
        number<int>(tokens[0].substr(0, tokens[0].size() - 1)))
      tokens.erase(tokens.begin());
    // A result line: size and count, then (today) type, redop and root, then time, algbw,
    // busbw and #wrong at least, in the columns the header names.
    if (tokens.size() < time_at + 4 || !number<int64_t>(tokens[0]) || !number<int64_t>(tokens[1]))
      continue;
    MeasuredRow row;
    row.size = *number<int64_t>(tokens[0]);
    row.where = location_at(text, file, line_start + size_t(tokens[time_at].data() - line.data()));
    const std::pair<size_t, double *> columns[] = {
        {time_at, &row.time_us}, {time_at + 1, &row.algbw_gbps}, {time_at + 2, &row.busbw_gbps}};
    for (const auto &[index, value] : columns) {
      const std::string token(tokens[index]);
      char *parsed_end = nullptr;
      *value = std::strtod(token.c_str(), &parsed_end);
      if (token.empty() || parsed_end != token.c_str() + token.size() || !(*value >= 0))
        return fail(
            location_at(text, file, line_start + size_t(tokens[index].data() - line.data())),
            fmt::format("'{}' is not a number (a result line's time, algbw and busbw are "
                        "its columns {} to {}, as its header names them)",
                        token, time_at + 1, time_at + 3));
    }
    log.rows.push_back(std::move(row));
  }
  if (log.rows.empty())
    return fail({file, 1, 1}, "no nccl-tests result line (size, count, type, redop, root, time, "
                              "algbw, busbw, #wrong)");
  if (devices > 0)
    log.ranks = devices;
  if (!hosts.empty())
    log.hosts = int(hosts.size());
  for (MeasuredRow &row : log.rows)
    if (auto choice = choices.find(row.size); choice != choices.end())
      std::tie(row.algorithm, row.protocol) = choice->second;
  return log;
}

Expected<MeasuredLog> read_json_log(std::string_view text, const std::string &file) {
  SYNCOLL_TRY(doc, JsonDocument::parse(text, file));
  const nlohmann::json &root = doc.root().json();
  MeasuredLog log;
  if (!root.is_object() || !root.contains("results") || !root["results"].is_array())
    return fail({file, 1, 1}, "an nccl-tests JSON log holds a \"results\" list");
  if (root.contains("config") && root["config"].is_object()) {
    const nlohmann::json &config = root["config"];
    if (config.contains("devices") && config["devices"].is_array() && !config["devices"].empty()) {
      log.ranks = int(config["devices"].size());
      std::set<std::string> hosts;
      for (const nlohmann::json &device : config["devices"])
        if (device.is_object() && device.contains("hostname") && device["hostname"].is_string())
          hosts.insert(device["hostname"].get<std::string>());
      if (!hosts.empty())
        log.hosts = int(hosts.size());
    }
  }
  if (root.contains("nccl_version") && root["nccl_version"].is_number_integer() &&
      root["nccl_version"].get<int64_t>() > 0 && root["nccl_version"].get<int64_t>() < 1000000)
    log.nccl_version_code = int(root["nccl_version"].get<int64_t>());
  size_t index = 0;
  for (const nlohmann::json &result : root["results"]) {
    const std::string where = fmt::format("/results/{}", index++);
    auto located = [&](const std::string &pointer) { return doc.location(pointer); };
    const nlohmann::json *timing = nullptr;
    for (const char *placement : {"out_of_place", "in_place"})
      if (result.is_object() && result.contains(placement) && result[placement].is_object()) {
        timing = &result[placement];
        break;
      }
    if (!result.is_object() || !result.contains("size") || !result["size"].is_number_integer() ||
        !timing)
      return fail(located(where), "a result holds an integer \"size\" and an \"out_of_place\" or "
                                  "\"in_place\" object");
    MeasuredRow row;
    row.size = result["size"].get<int64_t>();
    row.where = located(where);
    const std::pair<const char *, double *> fields[] = {
        {"time", &row.time_us}, {"alg_bw", &row.algbw_gbps}, {"bus_bw", &row.busbw_gbps}};
    for (const auto &[key, value] : fields) {
      const char *name =
          timing->contains(key) || std::string_view(key) != "time" ? key : "cpu_time";
      if (!timing->contains(name) || !(*timing)[name].is_number() ||
          !((*value = (*timing)[name].get<double>()) >= 0))
        return fail(located(where), fmt::format("a result's timing holds a number \"{}\"", key));
    }
    if (result.contains("experiment_name") && result["experiment_name"].is_string() && !log.kind)
      log.kind = kind_of_program(result["experiment_name"].get<std::string>());
    log.rows.push_back(std::move(row));
  }
  if (log.rows.empty())
    return fail({file, 1, 1}, "the log's \"results\" list is empty");
  return log;
}

} // namespace

Expected<MeasuredLog> read_nccl_tests_log(std::string_view text, const std::string &file) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{')
    return read_json_log(text, file);
  return read_text_log(text, file);
}

} // namespace syncoll::nccl
