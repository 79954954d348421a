// Fuzz target: the tuner plugin's reading of its table (tuner_plugin/), as NCCL starts it: any
// bytes are either refused (ncclInvalidUsage, with one log line naming the table's line) or
// accepted, and an accepted table then answers NCCL's questions for every collective at sizes
// across the range without reading or writing outside the cost table.
#include "tuner_plugin/tuner_plugin.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

// NCCL's logger has no user pointer: the count of refusals it heard lives here.
int refusals_logged = 0;

void logger(int level, unsigned long, const char *, int, const char *format, ...) {
  if (level != SYNCOLL_NCCL_LOG_WARN)
    return;
  char line[2048];
  std::va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  // "TUNER/syncoll: PATH:LINE:1: why", or the table could not be read at all.
  if (!std::strstr(line, ":1: ") && !std::strstr(line, "cannot be read")) {
    std::fprintf(stderr, "tuner table contract: a refusal without its line: '%s'\n", line);
    std::abort();
  }
  ++refusals_logged;
}

// The table the plugin reads: one scratch file, rewritten for every input.
const std::string &table_path() {
  static const std::string path = [] {
    char name[] = "/tmp/syncoll_tuner_fuzz_XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0)
      std::abort();
    ::close(fd);
    ::setenv("NCCL_TUNER_CONFIG_FILE", name, 1);
    return std::string(name);
  }();
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = table_path();
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0)
    std::abort();
  void *context = nullptr;
  refusals_logged = 0;
  const syncoll_nccl_result rc =
      ncclTunerPlugin_v5.init(&context, 0, 16, 2, logger, nullptr, nullptr);
  if (rc != SYNCOLL_NCCL_SUCCESS) {
    if (rc != SYNCOLL_NCCL_INVALID_USAGE || refusals_logged != 1) {
      std::fprintf(stderr, "tuner table contract: code %d with %d log lines\n", int(rc),
                   refusals_logged);
      std::abort();
    }
    return 0;
  }
  float costs[7][3];
  for (int collective = SYNCOLL_NCCL_BROADCAST; collective <= SYNCOLL_NCCL_ALLREDUCE; ++collective)
    for (size_t bytes :
         {size_t(0), size_t(1) << 10, size_t(1) << 20, size_t(1) << 30, ~size_t(0)}) {
      for (auto &row : costs)
        for (float &cost : row)
          cost = 1.0f;
      int channels = 0;
      if (ncclTunerPlugin_v5.get_coll_info(context, syncoll_nccl_func(collective), bytes, 1,
                                           reinterpret_cast<float **>(costs), 7, 3, 0,
                                           &channels) != SYNCOLL_NCCL_SUCCESS ||
          channels < 0)
        std::abort();
    }
  ncclTunerPlugin_v5.finalize(context);
  return 0;
}
