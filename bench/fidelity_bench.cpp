// Fidelity: every published measurement of bench/data/nccl_measurements.csv against syncoll's
// simulation of the same system, collective, algorithm and size. NCCL runs as it would there
// (search, tuning choice, program; simulator/nccl_run.h). Prints one row per point, then per
// set and collective the geometric-mean error, exp(mean |ln(simulated / measured)|) - 1, and
// the worst point of 1 MiB and up. Points syncoll cannot simulate yet are listed as such.
//
//   ./build/ci/bench/fidelity_bench [--summary]
#include "model/collective.h"
#include "model/hardware.h"
#include "simulator/nccl_run.h"
#include "simulator/system_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace syncoll;

struct Point {
  std::string set, system, collective, algorithm;
  int nodes = 1, gpus = 8;
  int64_t size = 0;
  double time_us = 0;
};

// The CSV's own quoting: fields with commas are in double quotes.
std::vector<std::string> split_csv(const std::string &line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

std::vector<Point> read_points(const std::string &path) {
  std::ifstream in(path);
  std::vector<Point> points;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto f = split_csv(line);
    if (f.size() < 8)
      continue;
    points.push_back({f[0], f[1], f[4], f[5], std::stoi(f[2]), std::stoi(f[3]), std::stoll(f[6]),
                      std::stod(f[7])});
  }
  return points;
}

std::string size_text(int64_t b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && b >= 1024 && b % 1024 == 0)
    b /= 1024, ++u;
  return std::to_string(b) + " " + units[u];
}

struct Summary {
  double log_error_sum = 0;
  int points = 0;
  double worst_large = 0; ///< |error| of the worst point of 1 MiB and up
  int missing = 0;
};

} // namespace

int main(int argc, char **argv) {
  const bool summary_only = argc > 1 && std::strcmp(argv[1], "--summary") == 0;
  const std::vector<Point> points =
      read_points(SYNCOLL_SOURCE_DIR "/bench/data/nccl_measurements.csv");
  if (points.empty()) {
    std::printf("no measurements found\n");
    return 1;
  }
  std::map<std::string, Summary> by_group; // "set collective"
  std::map<std::string, Summary> by_set;
  if (!summary_only)
    std::printf("%-14s %-16s %5s %-13s %-7s %9s %12s %12s %8s  %s\n", "set", "system", "gpus",
                "collective", "algo", "size", "measured us", "simulated us", "error",
                "NCCL choice");
  for (const Point &p : points) {
    const SystemPreset *preset = find_system_preset(p.system);
    auto kind = parse_collective_kind(p.collective);
    std::string note;
    std::optional<double> simulated;
    if (!preset || !kind) {
      note = "unknown system or collective";
    } else if (auto system = simulator::make_system_model(*preset, p.nodes, p.gpus); !system) {
      note = system.error().to_string();
    } else if (auto machine = simulator::nccl_machine(*system); !machine) {
      note = machine.error().to_string();
    } else {
      simulator::NcclRunOptions o;
      if (p.algorithm == "ring")
        o.algorithm = simulator::NcclAlgorithm::Ring;
      if (p.algorithm == "nvls")
        o.algorithm = simulator::NcclAlgorithm::Nvls;
      if (auto run = simulator::simulate_nccl(*kind, p.size, *system, *machine, o); !run) {
        note = "not simulated: " + run.error().to_string();
      } else {
        simulated = double(run->result.completion) / 1e6;
        note = run->info + (run->closed_form ? " (closed form)" : "");
      }
    }
    while (!note.empty() && note.back() == '\n')
      note.pop_back();
    const std::string group = p.set + " " + p.collective;
    for (Summary *s : {&by_group[group], &by_set[p.set]}) {
      if (!simulated) {
        ++s->missing;
        continue;
      }
      const double log_error = std::fabs(std::log(*simulated / p.time_us));
      s->log_error_sum += log_error;
      ++s->points;
      if (p.size >= (int64_t(1) << 20))
        s->worst_large = std::max(s->worst_large, std::fabs(*simulated / p.time_us - 1));
    }
    if (summary_only)
      continue;
    const std::string gpus = std::to_string(p.nodes) + "x" + std::to_string(p.gpus);
    if (simulated)
      std::printf("%-14s %-16s %5s %-13s %-7s %9s %12.1f %12.1f %+7.1f%%  %s\n", p.set.c_str(),
                  p.system.c_str(), gpus.c_str(), p.collective.c_str(), p.algorithm.c_str(),
                  size_text(p.size).c_str(), p.time_us, *simulated,
                  100 * (*simulated / p.time_us - 1), note.c_str());
    else
      std::printf("%-14s %-16s %5s %-13s %-7s %9s %12.1f %12s %8s  %s\n", p.set.c_str(),
                  p.system.c_str(), gpus.c_str(), p.collective.c_str(), p.algorithm.c_str(),
                  size_text(p.size).c_str(), p.time_us, "-", "-", note.c_str());
  }
  auto print = [](const char *title, const std::map<std::string, Summary> &groups) {
    std::printf("\n%-28s %7s %10s %16s %9s\n", title, "points", "geomean", "worst >= 1 MiB",
                "missing");
    for (const auto &[name, s] : groups) {
      const double geomean = s.points ? std::exp(s.log_error_sum / s.points) - 1 : 0;
      std::printf("%-28s %7d %9.1f%% %15.1f%% %9d\n", name.c_str(), s.points, 100 * geomean,
                  100 * s.worst_large, s.missing);
    }
  };
  print("set and collective", by_group);
  print("set (system)", by_set);
  return 0;
}
