#include "nccl/nccl_tests.h"

#include "model/collective_traits.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

} // namespace

std::string nccl_tests_text(const NcclTestsRun &run) {
  const std::string program = program_of(run.kind);
  std::string out = fmt::format("# syncoll simulate: {}\n", run.what);
  out += "# in place and out of place are one simulated call; #wrong is N/A: no data is checked\n";
  out += fmt::format("# Collective test starting: {}\n#\n", program);
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

} // namespace syncoll::nccl
