// The tuner plugin held against its table, loaded as NCCL loads it: dlopen the library, look up
// ncclTunerPlugin_v5, init it for a communicator's node and rank count with NCCL_TUNER_CONFIG_FILE
// naming the table, and ask it about every band's first, middle and last size, as NCCL asks
// before each call. Independent of syncoll's libraries: it reads the table itself and needs only
// the plugin's ABI header.
//
//   tuner_harness PLUGIN TABLE --nodes N --ranks R     every band answered as the table says
//   tuner_harness PLUGIN TABLE --nodes N --ranks R --expect-refused
//                                                     init refuses the table (a malformed one)
//
// Exit 0 when the plugin answers as the table says, 1 when it does not, 2 on bad usage.
#include "tuner_plugin/tuner_plugin.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kAlgorithms = 7;
constexpr int kProtocols = 3;

const std::map<std::string, int> kCollectiveIndex = {{"broadcast", SYNCOLL_NCCL_BROADCAST},
                                                     {"reduce", SYNCOLL_NCCL_REDUCE},
                                                     {"allgather", SYNCOLL_NCCL_ALLGATHER},
                                                     {"reducescatter", SYNCOLL_NCCL_REDUCESCATTER},
                                                     {"allreduce", SYNCOLL_NCCL_ALLREDUCE}};
const std::map<std::string, int> kAlgorithmIndex = {
    {"tree", SYNCOLL_NCCL_ALGO_TREE},
    {"ring", SYNCOLL_NCCL_ALGO_RING},
    {"collnet_direct", SYNCOLL_NCCL_ALGO_COLLNET_DIRECT},
    {"collnet_chain", SYNCOLL_NCCL_ALGO_COLLNET_CHAIN},
    {"nvls", SYNCOLL_NCCL_ALGO_NVLS},
    {"nvls_tree", SYNCOLL_NCCL_ALGO_NVLS_TREE},
    {"pat", SYNCOLL_NCCL_ALGO_PAT}};
const std::map<std::string, int> kProtocolIndex = {{"ll", SYNCOLL_NCCL_PROTO_LL},
                                                   {"ll128", SYNCOLL_NCCL_PROTO_LL128},
                                                   {"simple", SYNCOLL_NCCL_PROTO_SIMPLE}};

struct Band {
  std::string collective, algorithm, protocol;
  unsigned long long min_bytes = 0, max_bytes = 0;
  int channels = -1;
};

std::vector<std::string> split(const std::string &line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');)
    fields.push_back(field);
  return fields;
}

// The table's rows for this communicator, as its text says (the harness's own reading).
std::optional<std::vector<Band>> read_bands(const std::string &path, long nodes, long ranks) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  std::vector<Band> bands;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    const std::vector<std::string> f = split(line);
    if (f.size() < 8)
      return std::nullopt;
    if ((std::stol(f[6]) != -1 && std::stol(f[6]) != nodes) ||
        (std::stol(f[7]) != -1 && std::stol(f[7]) != ranks))
      continue;
    bands.push_back({f[0], f[3], f[4], std::stoull(f[1]), std::stoull(f[2]), std::stoi(f[5])});
  }
  return bands;
}

void log_to_stderr(int level, unsigned long, const char *, int, const char *format, ...) {
  if (level > SYNCOLL_NCCL_LOG_WARN) // its choices are in the table printed
    return;
  std::va_list args;
  va_start(args, format);
  std::fputs("  NCCL log: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
}

// NCCL's cost table before the tuner sees it: every entry runnable, each at its own cost, so the
// least is NCCL's own choice (here the tree with LL) unless the plugin changes it.
void fill_costs(float (&costs)[kAlgorithms][kProtocols]) {
  for (int a = 0; a < kAlgorithms; ++a)
    for (int p = 0; p < kProtocols; ++p)
      costs[a][p] = 10.0f + float(a * kProtocols + p);
}

// The entry NCCL runs: the least cost that is not ignored.
std::pair<int, int> least(const float (&costs)[kAlgorithms][kProtocols]) {
  std::pair<int, int> best{-1, -1};
  for (int a = 0; a < kAlgorithms; ++a)
    for (int p = 0; p < kProtocols; ++p)
      if (costs[a][p] >= 0 && (best.first < 0 || costs[a][p] < costs[best.first][best.second]))
        best = {a, p};
  return best;
}

int usage(const char *why) {
  std::fprintf(stderr,
               "tuner_harness: %s (usage: tuner_harness PLUGIN TABLE --nodes N --ranks R "
               "[--expect-refused])\n",
               why);
  return 2;
}

struct Check {
  const syncoll_nccl_tuner_v5 *tuner;
  void *context;
  int failures = 0;

  // One question, as NCCL asks it, against the band the table gives the size.
  void ask(const Band &band, unsigned long long bytes) {
    float costs[kAlgorithms][kProtocols];
    fill_costs(costs);
    int channels = 0;
    const auto collective = syncoll_nccl_func(kCollectiveIndex.at(band.collective));
    const int rc =
        tuner->get_coll_info(context, collective, bytes, 1, reinterpret_cast<float **>(costs),
                             kAlgorithms, kProtocols, 0, &channels);
    const std::pair<int, int> want{kAlgorithmIndex.at(band.algorithm),
                                   kProtocolIndex.at(band.protocol)};
    const int want_channels = band.channels > 0 ? band.channels : 0;
    const bool ok = rc == SYNCOLL_NCCL_SUCCESS && least(costs) == want && channels == want_channels;
    // The same question where NCCL cannot run the band's choice: its own choice must stand.
    fill_costs(costs);
    costs[want.first][want.second] = SYNCOLL_NCCL_IGNORE;
    int kept_channels = 0;
    tuner->get_coll_info(context, collective, bytes, 1, reinterpret_cast<float **>(costs),
                         kAlgorithms, kProtocols, 0, &kept_channels);
    float untouched[kAlgorithms][kProtocols];
    fill_costs(untouched);
    untouched[want.first][want.second] = SYNCOLL_NCCL_IGNORE;
    const bool stands = least(costs) == least(untouched) && kept_channels == 0;
    std::printf("%-14s %20llu  %-16s %8d  %-8s %s\n", band.collective.c_str(), bytes,
                (band.algorithm + "/" + band.protocol).c_str(), want_channels,
                ok ? "chosen" : "WRONG", stands ? "NCCL's own stands" : "WRONG: overrode NCCL");
    failures += !ok + !stands;
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 7)
    return usage("too few arguments");
  const std::string plugin = argv[1], table = argv[2];
  long nodes = 0, ranks = 0;
  bool expect_refused = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nodes" && i + 1 < argc)
      nodes = std::atol(argv[++i]);
    else if (arg == "--ranks" && i + 1 < argc)
      ranks = std::atol(argv[++i]);
    else if (arg == "--expect-refused")
      expect_refused = true;
    else
      return usage(("unknown argument '" + arg + "'").c_str());
  }
  if (nodes < 1 || ranks < nodes)
    return usage("--nodes and --ranks are counts, ranks at least nodes");
  if (::setenv("NCCL_TUNER_CONFIG_FILE", table.c_str(), 1) != 0)
    return usage("cannot set NCCL_TUNER_CONFIG_FILE");
  void *library = ::dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return usage(::dlerror());
  const auto *tuner =
      static_cast<const syncoll_nccl_tuner_v5 *>(::dlsym(library, "ncclTunerPlugin_v5"));
  if (!tuner)
    return usage("the library has no ncclTunerPlugin_v5");
  void *context = nullptr;
  const int rc =
      tuner->init(&context, 1, size_t(ranks), size_t(nodes), log_to_stderr, nullptr, nullptr);
  if (expect_refused) {
    std::printf("plugin '%s' init on %s: %s\n", tuner->name, table.c_str(),
                rc == SYNCOLL_NCCL_INVALID_USAGE ? "refused (ncclInvalidUsage)" : "ACCEPTED");
    if (rc == SYNCOLL_NCCL_SUCCESS)
      tuner->finalize(context);
    return rc == SYNCOLL_NCCL_INVALID_USAGE ? 0 : 1;
  }
  if (rc != SYNCOLL_NCCL_SUCCESS) {
    std::printf("plugin '%s' refused %s (code %d)\n", tuner->name, table.c_str(), rc);
    return 1;
  }
  const auto bands = read_bands(table, nodes, ranks);
  if (!bands || bands->empty())
    return usage("the table has no rows for this node and rank count");
  std::printf("plugin '%s' with %s for %ld nodes, %ld ranks: %zu bands\n", tuner->name,
              table.c_str(), nodes, ranks, bands->size());
  std::printf("%-14s %20s  %-16s %8s  %-8s %s\n", "collective", "nBytes", "table", "channels",
              "plugin", "table's choice unrunnable");
  Check check{tuner, context};
  std::map<std::string, unsigned long long> next_start;
  for (const Band &band : *bands) {
    // Bands of one collective follow each other without a gap or an overlap.
    auto [at, fresh] = next_start.emplace(band.collective, 0);
    if (band.min_bytes != at->second) {
      std::printf("%-14s band from %llu: expected it to start at %llu\n", band.collective.c_str(),
                  band.min_bytes, at->second);
      ++check.failures;
    }
    at->second = band.max_bytes + 1;
    check.ask(band, band.min_bytes);
    const auto middle = static_cast<unsigned long long>(
        std::sqrt(double(std::max(band.min_bytes, 1ULL)) * double(band.max_bytes)));
    if (middle > band.min_bytes && middle < band.max_bytes)
      check.ask(band, middle);
    check.ask(band, band.max_bytes);
  }
  for (const auto &[collective, end] : next_start)
    if (end != 0) { // the last band ends at the largest nBytes, so one past it wraps to 0
      std::printf("%-14s bands end at %llu: larger sizes have no row\n", collective.c_str(),
                  end - 1);
      ++check.failures;
    }
  tuner->finalize(context);
  std::printf("%s: %d wrong answers\n", check.failures ? "FAIL" : "ok", check.failures);
  return check.failures ? 1 : 0;
}
