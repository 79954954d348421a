// `syncoll study FILE -o DIR`: a what-if study (docs/study.md). Every point is evaluated once and
// cached; shards (--shard i/n, or the processes of `mpirun -n K`) share the cache, and whichever
// finds every point cached writes the results and the report, byte-identical whatever the
// sharding.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "study/report.h"
#include "study/study.h"

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <unistd.h>

namespace syncoll::cli {
namespace {

struct StudyArgs {
  std::string file;
  std::string output;
  std::string shard;
  bool quick = false;
  bool fresh = false;
};

struct Shard {
  int index = 0;
  int count = 1;
};

// --shard i/n; under mpirun (Open MPI's environment) the process's rank and the world size.
Expected<Shard> shard_of(const std::string &text) {
  if (text.empty()) {
    const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
    const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (rank && size && std::atoi(size) > 0)
      return Shard{std::atoi(rank), std::atoi(size)};
    return Shard{};
  }
  const size_t slash = text.find('/');
  const std::string bad = fmt::format("--shard '{}' is not i/n with 0 <= i < n (e.g. 0/3)", text);
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find_first_not_of("0123456789/") != std::string::npos ||
      text.find('/', slash + 1) != std::string::npos || slash > 6 || text.size() - slash > 7)
    return fail({}, bad);
  const int index = std::atoi(text.substr(0, slash).c_str());
  const int count = std::atoi(text.substr(slash + 1).c_str());
  if (count < 1 || index >= count)
    return fail({}, bad);
  return Shard{index, count};
}

// Points done, failures and the time left: redrawn in place on a terminal, a line per group
// otherwise (a log, CI), so a long study is never silent.
class Progress {
public:
  explicit Progress(size_t total) : total_(total), terminal_(::isatty(2) == 1) {}
  void advance(size_t points, size_t failed, const std::string &group) {
    done_ += points;
    failed_ += failed;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!terminal_) {
      fmt::print(stderr, "[{:7.1f} s] {}/{} points: {} ({} points, {} not run)\n", elapsed, done_,
                 total_, group, points, failed);
      return;
    }
    const double left = done_ > 0 ? elapsed * double(total_ - done_) / double(done_) : 0;
    const int width = 30;
    const int filled = total_ ? int(double(width) * double(done_) / double(total_)) : width;
    fmt::print(stderr, "\r[{}{}] {}/{} points, {} not run, ETA {}:{:02}", std::string(filled, '='),
               std::string(width - filled, ' '), done_, total_, failed_, int(left) / 60,
               int(left) % 60);
    if (done_ == total_)
      fmt::print(stderr, "\n");
  }

private:
  size_t total_, done_ = 0, failed_ = 0;
  bool terminal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

Expected<int> run_study(const StudyArgs &a) {
  SYNCOLL_TRY(shard, shard_of(a.shard));
  SYNCOLL_TRY(study, study::read_study(a.file, a.quick));
  SYNCOLL_TRY(cache, study::ResultCache::open(a.output));
  const study::Plan plan = study::plan_points(study);
  const std::vector<size_t> mine = study::shard_groups(plan, shard.index, shard.count);
  size_t total = 0;
  for (size_t g : mine)
    total += plan.groups[g].points.size();
  Progress progress(total);
  size_t evaluated = 0; // points of this shard stored now; the others came from the cache
  for (size_t g : mine) {
    const study::Group &group = plan.groups[g];
    // A group killed part-way is evaluated again, but the points it had stored stay as written.
    std::vector<bool> cached(group.points.size(), false);
    for (size_t k = 0; k < group.points.size() && !a.fresh; ++k)
      cached[k] = cache.find(plan.points[group.points[k]]).has_value();
    size_t failed = 0;
    if (std::find(cached.begin(), cached.end(), false) != cached.end()) {
      const std::vector<study::Outcome> outcomes = study::evaluate(study, plan, group);
      for (size_t k = 0; k < group.points.size(); ++k) {
        if (!cached[k]) {
          SYNCOLL_CHECK(cache.store(plan.points[group.points[k]], outcomes[k]));
          ++evaluated;
        }
        failed += outcomes[k].status != study::OutcomeStatus::Ok;
      }
    }
    const study::Machine &m = study.machines[group.machine];
    progress.advance(group.points.size(), failed,
                     fmt::format("{}, {}, {}", study::machine_title(m),
                                 collective_kind_name(group.collective),
                                 study.variants[group.variant].name));
  }
  // The report from the cache alone: whichever shard finds every point there writes it.
  study::Results results{&study, &plan, {}};
  for (const study::Point &p : plan.points) {
    auto o = cache.find(p);
    if (!o) {
      fmt::print("shard {}/{}: {} points, {} evaluated now, {} from the cache; the report waits "
                 "for the other shards\n",
                 shard.index, shard.count, total, evaluated, total - evaluated);
      return 0;
    }
    results.outcomes.push_back(std::move(*o));
  }
  SYNCOLL_CHECK(write_output(a.output + "/results.csv", study::results_csv(results)));
  SYNCOLL_CHECK(write_output(a.output + "/results.json", study::results_json(results)));
  SYNCOLL_CHECK(write_output(a.output + "/report.html", study::report_html(results)));
  size_t ran = 0;
  for (const study::Outcome &o : results.outcomes)
    ran += o.status == study::OutcomeStatus::Ok;
  fmt::print("study {}: {} points ({} evaluated now, {} from the cache), {} ran, {} did not "
             "(each with why in the report)\n"
             "  {}/results.csv, {}/results.json, {}/report.html\n",
             study.name, plan.points.size(), evaluated, plan.points.size() - evaluated, ran,
             plan.points.size() - ran, a.output, a.output, a.output);
  return 0;
}

} // namespace

void add_study_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<StudyArgs>();
  CLI::App *cmd = app.add_subcommand(
      "study", "a what-if study: every machine, collective, size and variant of a study file "
               "simulated, with results (CSV, JSON) and an HTML report (docs/study.md)");
  cmd->add_option("file", args->file, "the study file (JSON)")->required();
  cmd->add_option("-o,--output", args->output, "the folder for the cache, results and report")
      ->required()
      ->check(writable_folder());
  cmd->add_option("--shard", args->shard,
                  "evaluate only shard i of n (i/n); under mpirun, the process's rank of the "
                  "world");
  cmd->add_flag("--quick", args->quick, "the file's small \"quick\" machines and sizes");
  cmd->add_flag("--fresh", args->fresh, "evaluate every point again instead of using the cache");
  cmd->callback([&result, args] { result.exit_code = exit_code_or_bad_input(run_study(*args)); });
}

} // namespace syncoll::cli
