// Fidelity: every published measurement of bench/data/nccl_measurements.csv against syncoll's
// simulation of the same system, collective, algorithm and size. NCCL runs as it would there
// (search, tuning choice, program; nccl/run.h). Prints one row per point (times, error,
// bus bandwidths, NCCL's choice), then per
// set and collective the geometric-mean error, exp(mean |ln(simulated / measured)|) - 1, and
// the worst point of 1 MiB and up. Points syncoll cannot simulate yet are listed as such.
//
//   ./build/ci/bench/fidelity_bench [--summary | --quick]
//   ./build/ci/bench/fidelity_bench --multinode [--summary]   # bench/data/nccl_multinode.csv:
//       # 505 points of 2-67-node clusters (three of their sets gave the fabrics' figures,
//       # docs/cost-model.md); a machine or an algorithm the model cannot run yet is listed as
//       # missing, with why, and does not fail the run
//   ./build/ci/bench/fidelity_bench ... --only SET   # every mode: the sets starting with SET
//   ./build/ci/bench/fidelity_bench --multinode --loso   # leave one set out: each fabric's
//       # host cost, NIC share and LL128 share fitted without each set (about 17 minutes)
//   ./build/ci/bench/fidelity_bench --multinode --choices   # NCCL's choice per size, as the logs
//       # show it (a forced run of the same set within 5% of the default) beside the model's
//   ./build/ci/bench/fidelity_bench --fit [Ampere [SET]]   # the calibration (model/hardware.cpp);
//                                                          # SET: sets held out, then predicted
#include "model/collective.h"
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/text.h"
#include "nccl/run.h"
#include "simulator/system_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
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
  std::string as_run; ///< the run's NCCL environment as its log gives it (multi-node data)
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
                      std::stod(f[7]), f.size() > 11 ? f[11] : std::string()});
  }
  return points;
}

// The simulated time of a point, or why there is none.
struct Outcome {
  std::optional<double> us;
  std::string note;
  std::optional<nccl::NcclAlgorithm> ran; ///< the algorithm NCCL's model ran
};

// The algorithm a point's run forced (NCCL_ALGO), from the data's algorithm column ("ring ...",
// "tree", "nvls", "nvlstree"); none for NCCL's own choice ("default ..."). `known` is false for
// a name this bench does not read.
struct Forced {
  bool known = true;
  std::optional<nccl::NcclAlgorithm> algorithm;
};
Forced forced_algorithm(const std::string &column) {
  if (column.starts_with("ring"))
    return {true, nccl::NcclAlgorithm::Ring};
  if (column == "tree")
    return {true, nccl::NcclAlgorithm::Tree};
  if (column == "nvls")
    return {true, nccl::NcclAlgorithm::Nvls};
  if (column == "nvlstree")
    return {true, nccl::NcclAlgorithm::NvlsTree};
  return {column.starts_with("default"), std::nullopt};
}

// Constants a calibration tries instead of the tables' rows.
struct Trial {
  const GenerationTraits *generation = nullptr;
  std::map<Fabric, FabricTraits> fabrics;  ///< by the fabric they stand for
  std::map<std::string, double> launch_us; ///< by system
};

Outcome simulate_point(const Point &p, const Trial &trial = {}) {
  const SystemPreset *found = find_system_preset(p.system);
  auto kind = parse_collective_kind(p.collective);
  if (!found)
    return {std::nullopt, "no system preset '" + p.system + "' yet", std::nullopt};
  if (!kind)
    return {std::nullopt, "unknown collective '" + p.collective + "'", std::nullopt};
  SystemPreset preset = *found;
  if (auto it = trial.launch_us.find(p.system); it != trial.launch_us.end())
    preset.launch_us = it->second;
  const auto tried = trial.fabrics.find(preset.fabric);
  const FabricTraits &fabric =
      tried != trial.fabrics.end() ? tried->second : fabric_traits(preset.fabric);
  auto system = simulator::make_system_model(
      preset, p.nodes, p.gpus,
      trial.generation ? *trial.generation : generation_traits(preset.generation), fabric);
  if (!system)
    return {std::nullopt, system.error().to_string(), std::nullopt};
  auto machine = nccl::nccl_machine(*system);
  if (!machine)
    return {std::nullopt, machine.error().to_string(), std::nullopt};
  // What the run forced, as the measurement's NCCL environment set it.
  nccl::NcclRunOptions o;
  const Forced forced = forced_algorithm(p.algorithm);
  if (!forced.known)
    return {std::nullopt, "unknown algorithm '" + p.algorithm + "'", std::nullopt};
  o.algorithm = forced.algorithm;
  if (p.algorithm.ends_with("nvls-off"))
    o.nvls = false;
  // "... min-ctas-N": NCCL_MIN_CTAS=N, at least N channels.
  if (const size_t at = p.algorithm.find("min-ctas-"); at != std::string::npos)
    o.min_channels = std::stoi(p.algorithm.substr(at + std::strlen("min-ctas-")));
  auto run = nccl::simulate_nccl(*kind, p.size, *system, *machine, o);
  if (!run)
    return {std::nullopt, "not simulated: " + run.error().to_string(), std::nullopt};
  return {double(run->result.completion) / 1e6,
          run->info + (run->closed_form ? " (closed form)" : ""), run->choice.algorithm};
}

// The calibration's objective for one generation, shaped like what the fit must achieve: the mean
// over its sets of mean |ln(simulated / measured)|, plus three times each set's excess of that
// over ln 1.095 (a set's geomean error above 9.5%), plus twice the mean excess of |error| over 23%
// at 1 MiB and up. Sets count equally, whatever their number of points.
double objective(const std::vector<const Point *> &points, const Trial &trial) {
  std::map<std::string, std::pair<double, int>> per_set;
  double excess = 0;
  int large = 0;
  for (const Point *p : points) {
    const Outcome o = simulate_point(*p, trial);
    if (!o.us)
      continue;
    auto &[sum, n] = per_set[p->set];
    sum += std::fabs(std::log(*o.us / p->time_us));
    ++n;
    if (p->size >= (int64_t(1) << 20)) {
      excess += std::max(0.0, std::fabs(*o.us / p->time_us - 1) - 0.23);
      ++large;
    }
  }
  double score = 0;
  for (const auto &[set, sum_n] : per_set) {
    const double mean = sum_n.first / sum_n.second;
    score += mean + 3 * std::max(0.0, mean - std::log(1.095));
  }
  return score / double(std::max<size_t>(1, per_set.size())) +
         2 * excess / double(std::max(1, large));
}

// Coordinate descent over the calibrated columns of each generation that has measurements (or
// the one named), and the launch cost of each of its systems; prints the fitted values for
// model/hardware.cpp.
// With `holdout`, the sets named so are left out of the fit, and their error under the fitted
// values is printed at the end: the model predicting a machine it was not fitted to.
void fit(const std::vector<Point> &points, const std::string &only, const std::string &holdout) {
  for (const GenerationTraits &row : all_generations()) {
    if (!only.empty() && std::string(row.name).find(only) == std::string::npos)
      continue;
    // Points up to 2 GiB keep a fit quick; a generation measured only above that uses them all.
    std::vector<const Point *> mine, large, held;
    for (const Point &p : points) {
      const SystemPreset *preset = find_system_preset(p.system);
      if (!preset || preset->generation != row.generation)
        continue;
      if (!holdout.empty() && p.set.rfind(holdout, 0) == 0)
        held.push_back(&p);
      else
        (p.size <= (int64_t(2) << 30) ? mine : large).push_back(&p);
    }
    if (mine.empty())
      mine = large;
    if (mine.empty())
      continue;
    GenerationTraits g = row;
    std::vector<std::pair<const char *, double *>> knobs = {
        {"Simple share", &g.nvlink_payload_share[0]},
        {"LL share", &g.nvlink_payload_share[1]},
        {"LL128 share", &g.nvlink_payload_share[2]},
        {"Simple hop", &g.nvlink_hop_us[0]},
        {"LL hop", &g.nvlink_hop_us[1]},
        {"LL128 hop", &g.nvlink_hop_us[2]},
        {"tree Simple hop", &g.nccl_tree_hop_us[0]},
        {"tree LL hop", &g.nccl_tree_hop_us[1]},
        {"tree LL128 hop", &g.nccl_tree_hop_us[2]},
        {"Simple block GB/s", &g.thread_block_gbps[0]},
        {"LL block GB/s", &g.thread_block_gbps[1]},
        {"LL128 block GB/s", &g.thread_block_gbps[2]},
        {"NVLS share", &g.nvls_payload_share},
        {"NVLS latency", &g.nvls_latency_us},
        {"NVLS step", &g.nvls_step_kib}};
    Trial trial{&g, {}, {}};
    for (const Point *p : mine) {
      const SystemPreset *preset = find_system_preset(p->system);
      trial.launch_us.emplace(p->system, preset->launch_us);
      if (p->nodes > 1)
        trial.fabrics.emplace(preset->fabric, fabric_traits(preset->fabric));
    }
    // The fabrics' knobs: those of every fabric the generation's multi-node points cross.
    std::vector<std::string> fabric_names;
    for (auto &[id, f] : trial.fabrics)
      for (const char *what : {"share", "host cost", "connection", "LL128 share"})
        fabric_names.push_back(std::string(f.name) + " " + what);
    size_t fk = 0;
    for (auto &[id, f] : trial.fabrics) {
      knobs.emplace_back(fabric_names[fk++].c_str(), &f.nic_payload_share);
      knobs.emplace_back(fabric_names[fk++].c_str(), &f.host_cost_us);
      knobs.emplace_back(fabric_names[fk++].c_str(), &f.connection_gbps);
      knobs.emplace_back(fabric_names[fk++].c_str(), &f.ll128_connection_share);
    }
    // The launch knobs' names outlive the descent (as the fabrics' do).
    std::vector<std::string> names;
    for (auto &[system, launch] : trial.launch_us)
      names.push_back("launch " + system);
    size_t k = 0;
    for (auto &[system, launch] : trial.launch_us)
      knobs.emplace_back(names[k++].c_str(), &launch);
    double best = objective(mine, trial);
    std::printf("%s: %zu points, start %.4f\n", std::string(g.name).c_str(), mine.size(), best);
    for (int round = 0; round < 3; ++round)
      for (auto &[name, value] : knobs) {
        if (*value == 0)
          continue;
        for (double factor : {0.6, 0.8, 0.9, 0.95, 1.05, 1.1, 1.25, 1.6}) {
          const double old = *value;
          *value = old * factor;
          // Shares stay at most 1, and LL and LL128 at most Simple's (they carry flags).
          bool shares_valid = true;
          for (const auto &[id, f] : trial.fabrics)
            shares_valid =
                shares_valid && f.nic_payload_share <= 1 && f.ll128_connection_share <= 1;
          const bool valid = g.nvlink_payload_share[0] <= 1 && shares_valid &&
                             g.nvls_payload_share <= 1 &&
                             g.nvlink_payload_share[1] <= g.nvlink_payload_share[0] &&
                             g.nvlink_payload_share[2] <= g.nvlink_payload_share[0];
          const double score = valid ? objective(mine, trial) : 1e9;
          if (score + 1e-6 < best) {
            best = score;
            std::printf("  %-13s %.3f -> %.3f  objective %.4f\n", name, old, *value, best);
          } else {
            *value = old;
          }
        }
      }
    std::printf("  fitted:");
    for (auto &[name, value] : knobs)
      std::printf(" %s %.3f;", name, *value);
    std::printf("\n");
    if (held.empty())
      continue;
    // Held-out machines keep their table launch: nothing of theirs was fitted.
    auto geomean = [&](const Trial &t) {
      double sum = 0;
      int n = 0;
      for (const Point *p : held)
        if (auto o = simulate_point(*p, t); o.us) {
          sum += std::fabs(std::log(*o.us / p->time_us));
          ++n;
        }
      return n ? std::exp(sum / n) - 1 : 0.0;
    };
    std::printf("  held out %s (%zu points): geomean error %.1f%% fitted without them, %.1f%% "
                "with the table's row\n",
                holdout.c_str(), held.size(), 100 * geomean(trial), 100 * geomean(Trial{}));
  }
}

// Leave one set out, for the fabric figures the multi-node sets pin down: each fabric's
// per-message host cost (points up to 16 MiB, where it matters), its NICs' payload share (points
// of 256 MiB and up) and its LL128 connections' share of a connection's rate (32 MiB and up). Every
// multi-node set on the fabric is simulated at each value of a grid around the table's; for each
// set, the value that fits the fabric's other sets best (the least mean of their mean |ln(simulated
// / measured)|) and that set's geomean error there. A set alone on its fabric has nothing to be
// fitted without: it shows the table's value.
struct LosoKnob {
  const char *what;
  double FabricTraits::*field;
  int64_t min_size, max_size;
  std::vector<double> offsets; ///< added to the table's value
  double most = 1e300;         ///< clamp (a share is at most 1)
};

// Each set's mean |ln(simulated / measured)| over the knob's sizes at every value of `grid` of
// the fabric's row.
std::map<std::string, std::vector<double>> mean_log_errors(const std::vector<const Point *> &mine,
                                                           const FabricTraits &row,
                                                           const LosoKnob &knob,
                                                           const std::vector<double> &grid) {
  std::map<std::string, std::vector<double>> mean_log; // by set, one per grid value
  for (double value : grid) {
    Trial trial;
    FabricTraits tried = row;
    tried.*knob.field = value;
    trial.fabrics.emplace(row.fabric, tried);
    std::map<std::string, std::pair<double, int>> sums;
    for (const Point *p : mine)
      if (p->size >= knob.min_size && p->size <= knob.max_size)
        if (const Outcome o = simulate_point(*p, trial); o.us) {
          sums[p->set].first += std::fabs(std::log(*o.us / p->time_us));
          ++sums[p->set].second;
        }
    for (const auto &[set, sum] : sums)
      mean_log[set].push_back(sum.first / sum.second);
    std::fprintf(stderr, "leave one set out: %s %s %.2f simulated\n", std::string(row.name).c_str(),
                 knob.what, value);
  }
  return mean_log;
}

// The grid value that fits every set but `held` best, none when no other set has points there.
std::optional<size_t> fitted_without(const std::map<std::string, std::vector<double>> &mean_log,
                                     const std::string &held, size_t values) {
  std::optional<size_t> best;
  double best_score = 1e300;
  for (size_t i = 0; i < values; ++i) {
    double score = 0;
    int sets = 0;
    for (const auto &[set, e] : mean_log)
      if (set != held)
        score += e[i], ++sets;
    if (sets > 0 && score / sets < best_score)
      best_score = score / sets, best = i;
  }
  return best;
}

void leave_one_set_out(const std::vector<Point> &points) {
  const LosoKnob knobs[] = {
      {"host cost us", &FabricTraits::host_cost_us, 0, int64_t(16) << 20, {-6, -3, 0, 3, 6}},
      {"NIC share",
       &FabricTraits::nic_payload_share,
       int64_t(256) << 20,
       INT64_MAX,
       {-0.10, -0.05, 0, 0.05},
       1.0},
      {"LL128 share",
       &FabricTraits::ll128_connection_share,
       int64_t(32) << 20,
       INT64_MAX,
       {-0.06, 0, 0.06},
       1.0},
  };
  std::map<Fabric, std::vector<const Point *>> by_fabric;
  for (const Point &p : points)
    if (const SystemPreset *preset = find_system_preset(p.system); preset && p.nodes > 1)
      by_fabric[preset->fabric].push_back(&p);
  std::printf("each set's geomean error over the points where the figure matters (host cost: up "
              "to 16 MiB; NIC share: 256 MiB and up; LL128 share: 32 MiB and up)\n");
  std::printf("%-26s %-8s %-13s %16s %12s %14s\n", "held-out set", "fabric", "figure",
              "fitted without", "its geomean", "at the table's");
  for (const auto &[fabric, mine] : by_fabric) {
    const FabricTraits &row = fabric_traits(fabric);
    for (const LosoKnob &knob : knobs) {
      const double table = row.*knob.field;
      std::vector<double> grid;
      for (double offset : knob.offsets)
        grid.push_back(std::clamp(table + offset, 0.0, knob.most));
      grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
      const size_t at_table = size_t(std::find(grid.begin(), grid.end(), table) - grid.begin());
      const auto mean_log = mean_log_errors(mine, row, knob, grid);
      for (const auto &[held, errors] : mean_log) {
        const std::optional<size_t> best = fitted_without(mean_log, held, grid.size());
        const std::string fitted =
            best ? fmt::format("{:.2f}", grid[*best]) : std::string("(no other set)");
        std::printf("%-26s %-8s %-13s %16s %11.1f%% %13.1f%%\n", held.c_str(),
                    std::string(row.name).c_str(), knob.what, fitted.c_str(),
                    100 * (std::exp(errors[best.value_or(at_table)]) - 1),
                    100 * (std::exp(errors[at_table]) - 1));
      }
    }
  }
}

// --choices: what NCCL ran at each point of its own choice, read off the logs where the same set
// measured forced algorithms at the same size under the same NVLS setting: the forced run whose
// time is within 5% of the default's (the closest), or none; beside the model's choice there.
void print_choices(const std::vector<Point> &points) {
  auto nvls_on = [](const Point &p) {
    return p.as_run.find("NCCL_NVLS_ENABLE=0") == std::string::npos &&
           !p.algorithm.ends_with("nvls-off");
  };
  auto same_run = [&](const Point &a, const Point &b) {
    return a.set == b.set && a.nodes == b.nodes && a.gpus == b.gpus &&
           a.collective == b.collective && a.size == b.size && nvls_on(a) == nvls_on(b);
  };
  std::printf("%-20s %5s %-13s %8s %4s %10s  %-34s %-9s %s\n", "set", "gpus", "collective", "size",
              "NVLS", "default us", "forced runs (us, vs default)", "logs say", "model chose");
  int settled = 0, agree = 0;
  for (const Point &p : points) {
    if (!p.algorithm.starts_with("default"))
      continue;
    std::string forced_runs;
    std::optional<std::string> ran; // the forced run the default matches
    double closest = 0.05;
    bool any = false;
    for (const Point &f : points) {
      if (f.algorithm.starts_with("default") || !same_run(p, f))
        continue;
      any = true;
      const double off = f.time_us / p.time_us - 1;
      forced_runs += fmt::format("{}{} {:.0f} ({:+.0f}%)", forced_runs.empty() ? "" : ", ",
                                 f.algorithm, f.time_us, 100 * off);
      if (std::fabs(off) <= closest) {
        closest = std::fabs(off);
        ran = f.algorithm;
      }
    }
    if (!any)
      continue;
    const Outcome o = simulate_point(p);
    const std::string chose = o.ran ? std::string(nccl::nccl_algorithm_name(*o.ran)) : "-";
    std::string verdict;
    if (ran) {
      ++settled;
      const bool same = forced_algorithm(*ran).algorithm == o.ran;
      agree += same;
      verdict = same ? "  agrees" : "  differs";
    }
    const std::string gpus = std::to_string(p.nodes) + "x" + std::to_string(p.gpus);
    std::printf("%-20s %5s %-13s %8s %4s %10.0f  %-34s %-9s %s%s\n", p.set.c_str(), gpus.c_str(),
                p.collective.c_str(), format_size(p.size).c_str(), nvls_on(p) ? "on" : "off",
                p.time_us, forced_runs.c_str(), ran.value_or("none").c_str(), chose.c_str(),
                verdict.c_str());
  }
  std::printf("\nthe model's choice agrees with the logs at %d of the %d points they settle (a "
              "forced run within 5%% of the default)\n",
              agree, settled);
}

struct Summary {
  double log_error_sum = 0;
  int points = 0;
  double worst_large = 0; ///< |error| of the worst point of 1 MiB and up
  int missing = 0;
};

} // namespace

constexpr const char *kUsage =
    "usage: fidelity_bench [--multinode] [--summary | --quick | --loso | --choices | --fit "
    "[GENERATION [SET]]] [--only SET]";

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::printf("%s\n", kUsage);
    return 0;
  }
  // --only PREFIX (anywhere): the sets whose name starts so, for looking at one machine.
  std::string only_sets;
  if (auto at = std::find(args.begin(), args.end(), "--only"); at != args.end()) {
    if (at + 1 == args.end()) {
      std::fprintf(stderr, "fidelity_bench: --only needs a set name\n");
      return 2;
    }
    only_sets = *(at + 1);
    args.erase(at, at + 2);
  }
  // --multinode: the multi-node clusters' measurements (bench/data/nccl_multinode.csv).
  const bool multinode = !args.empty() && args.front() == "--multinode";
  if (multinode)
    args.erase(args.begin());
  const std::string mode = args.empty() ? "" : args.front();
  const bool summary_only = mode == "--summary";
  // --quick (ctest's smoke run): the points up to 16 MiB only.
  const bool quick = mode == "--quick";
  const bool fitting = mode == "--fit";
  const bool loso = mode == "--loso";
  const bool choices = mode == "--choices";
  const size_t most_args = fitting ? 3 : 1;
  if ((!mode.empty() && !summary_only && !quick && !fitting && !loso && !choices) ||
      args.size() > most_args || ((loso || choices) && !multinode)) {
    std::fprintf(stderr, "fidelity_bench: '%s' is not an option here; %s\n",
                 (args.size() > most_args ? args[most_args] : mode).c_str(), kUsage);
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<Point> points =
      read_points(multinode ? SYNCOLL_SOURCE_DIR "/bench/data/nccl_multinode.csv"
                            : SYNCOLL_SOURCE_DIR "/bench/data/nccl_measurements.csv");
  std::erase_if(points, [&](const Point &p) { return !p.set.starts_with(only_sets); });
  if (points.empty()) {
    std::printf("no measurements found%s\n",
                only_sets.empty() ? "" : (" in a set starting with " + only_sets).c_str());
    return 1;
  }
  if (fitting && multinode) {
    std::fprintf(stderr, "fidelity_bench: --fit fits on the calibration data only (a descent over "
                         "the multi-node points would take hours); --multinode --loso fits each "
                         "fabric's per-message cost and NIC share without each set\n");
    return 2;
  }
  if (fitting) {
    fit(points, args.size() > 1 ? args[1] : "", args.size() > 2 ? args[2] : "");
    return 0;
  }
  if (loso) {
    leave_one_set_out(points);
    return 0;
  }
  if (choices) {
    print_choices(points);
    return 0;
  }
  std::map<std::string, Summary> by_group; // "set collective"
  std::map<std::string, Summary> by_set;
  std::map<std::string, int> why; // points not simulated, by why
  if (!summary_only)
    std::printf("%-14s %-16s %5s %-13s %-7s %9s %12s %12s %8s %9s %9s  %s\n", "set", "system",
                "gpus", "collective", "algo", "size", "measured us", "simulated us", "error",
                "busbw", "sim busbw", "NCCL choice");
  for (const Point &p : points) {
    if (quick && p.size > (int64_t(16) << 20))
      continue;
    Outcome outcome = simulate_point(p);
    std::optional<double> simulated = outcome.us;
    std::string note = std::move(outcome.note);
    while (!note.empty() && note.back() == '\n')
      note.pop_back();
    if (!simulated)
      ++why[note];
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
    // nccl-tests' bus bandwidth of a time, GB/s.
    const auto kind = parse_collective_kind(p.collective);
    auto busbw = [&](double us) {
      return double(p.size) / (us * 1000) *
             (kind ? bus_bandwidth_factor(*kind, p.nodes * p.gpus) : 1.0);
    };
    if (simulated)
      std::printf("%-14s %-16s %5s %-13s %-7s %9s %12.1f %12.1f %+7.1f%% %9.2f %9.2f  %s\n",
                  p.set.c_str(), p.system.c_str(), gpus.c_str(), p.collective.c_str(),
                  p.algorithm.c_str(), format_size(p.size).c_str(), p.time_us, *simulated,
                  100 * (*simulated / p.time_us - 1), busbw(p.time_us), busbw(*simulated),
                  note.c_str());
    else
      std::printf("%-14s %-16s %5s %-13s %-7s %9s %12.1f %12s %8s %9.2f %9s  %s\n", p.set.c_str(),
                  p.system.c_str(), gpus.c_str(), p.collective.c_str(), p.algorithm.c_str(),
                  format_size(p.size).c_str(), p.time_us, "-", "-", busbw(p.time_us), "-",
                  note.c_str());
  }
  auto print = [](const char *title, const std::map<std::string, Summary> &groups) {
    std::printf("\n%-34s %7s %10s %16s %9s\n", title, "points", "geomean", "worst >= 1 MiB",
                "missing");
    for (const auto &[name, s] : groups) {
      const double geomean = s.points ? std::exp(s.log_error_sum / s.points) - 1 : 0;
      std::printf("%-34s %7d %9.1f%% %15.1f%% %9d\n", name.c_str(), s.points, 100 * geomean,
                  100 * s.worst_large, s.missing);
    }
  };
  print("set and collective", by_group);
  print("set (system)", by_set);
  // A point that cannot be simulated is a gap in the model, reported, and the run fails; the
  // multi-node data also holds machines and algorithms the model does not have yet, each
  // listed with why above.
  int missing = 0;
  for (const auto &[name, s] : by_set)
    missing += s.missing;
  if (multinode) {
    std::printf("\n%d point(s) not simulated:\n", missing);
    for (const auto &[note, count] : why)
      std::printf("  %4d  %s\n", count, note.c_str());
    return 0;
  }
  return missing == 0 ? 0 : 1;
}
