/* The tuner plugin: reads the table at NCCL_TUNER_CONFIG_FILE once per communicator, keeps the
 * rows for its node and rank count, and answers each call with the first row whose collective and
 * size band match. The table's format is NCCL's example plugin's (colltype, min and max bytes,
 * algorithm, protocol, channels, nNodes, nRanks, and optionally numPipeOps and regBuff; -1 matches
 * any), so a table syncoll writes runs with either plugin. Unlike the example, a malformed table
 * fails the communicator's tuner with the line it broke on instead of becoming a row of defaults,
 * and a row whose choice NCCL cannot run for the call leaves NCCL's own choice in place. */
#include "tuner_plugin/tuner_plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNCOLL_HIDDEN __attribute__((visibility("hidden")))

enum { kMaxLine = 1024, kMaxFields = 10, kMinFields = 8 };

typedef struct {
  int collective;
  unsigned long long min_bytes;
  unsigned long long max_bytes;
  int algorithm;
  int protocol;
  long channels;      /* -1: NCCL's own count */
  long pipelined_ops; /* -1: any */
  long registered;    /* -1: any */
} Row;

typedef struct {
  Row *rows;
  size_t count;
  syncoll_nccl_logger log;
} Context;

typedef struct {
  const char *name;
  int value;
} Name;

static const Name kCollectives[] = {{"broadcast", SYNCOLL_NCCL_BROADCAST},
                                    {"reduce", SYNCOLL_NCCL_REDUCE},
                                    {"allgather", SYNCOLL_NCCL_ALLGATHER},
                                    {"reducescatter", SYNCOLL_NCCL_REDUCESCATTER},
                                    {"allreduce", SYNCOLL_NCCL_ALLREDUCE}};
static const Name kAlgorithms[] = {{"tree", SYNCOLL_NCCL_ALGO_TREE},
                                   {"ring", SYNCOLL_NCCL_ALGO_RING},
                                   {"collnet_direct", SYNCOLL_NCCL_ALGO_COLLNET_DIRECT},
                                   {"collnet_chain", SYNCOLL_NCCL_ALGO_COLLNET_CHAIN},
                                   {"nvls", SYNCOLL_NCCL_ALGO_NVLS},
                                   {"nvls_tree", SYNCOLL_NCCL_ALGO_NVLS_TREE},
                                   {"pat", SYNCOLL_NCCL_ALGO_PAT}};
static const Name kProtocols[] = {{"ll", SYNCOLL_NCCL_PROTO_LL},
                                  {"ll128", SYNCOLL_NCCL_PROTO_LL128},
                                  {"simple", SYNCOLL_NCCL_PROTO_SIMPLE}};

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

static int find_name(const Name *names, size_t count, const char *token, int *value) {
  for (size_t i = 0; i < count; ++i)
    if (strcmp(names[i].name, token) == 0) {
      *value = names[i].value;
      return 1;
    }
  return 0;
}

static const char *name_of(const Name *names, size_t count, int value) {
  for (size_t i = 0; i < count; ++i)
    if (names[i].value == value)
      return names[i].name;
  return "?";
}

/* A whole token as a non-negative count of bytes. */
static int parse_bytes(const char *token, unsigned long long *value) {
  if (*token < '0' || *token > '9')
    return 0;
  char *end = NULL;
  errno = 0;
  *value = strtoull(token, &end, 10);
  return errno == 0 && *end == '\0';
}

/* A whole token as an integer of at least -1 (the wildcard). */
static int parse_count(const char *token, long *value) {
  char *end = NULL;
  errno = 0;
  *value = strtol(token, &end, 10);
  return errno == 0 && end != token && *end == '\0' && *value >= -1 && *value <= 1 << 20;
}

static char *trim(char *text) {
  while (*text == ' ' || *text == '\t')
    ++text;
  char *end = text + strlen(text);
  while (end > text && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
    *--end = '\0';
  return text;
}

/* Splits a line at commas; the number of fields, or kMaxFields + 1 when there are more. */
static int split(char *line, char **fields) {
  int count = 0;
  char *start = line;
  for (;;) {
    char *comma = strchr(start, ',');
    if (count == kMaxFields)
      return kMaxFields + 1;
    fields[count++] = start;
    if (!comma)
      return count;
    *comma = '\0';
    start = comma + 1;
  }
}

/* One data line: 1 and a row to keep when it is this communicator's, 0 for another's, and -1
 * with `why` filled when it is malformed. */
static int parse_row(char *line, size_t ranks, size_t nodes, Row *row, const char **why) {
  char *fields[kMaxFields];
  const int count = split(line, fields);
  if (count < kMinFields || count > kMaxFields) {
    *why = "a row has 8 to 10 fields: colltype,min_bytes,max_bytes,algorithm,protocol,channels,"
           "nNodes,nRanks[,numPipeOps[,regBuff]]";
    return -1;
  }
  for (int i = 0; i < count; ++i)
    fields[i] = trim(fields[i]);
  long row_nodes = 0, row_ranks = 0;
  row->pipelined_ops = -1;
  row->registered = -1;
  if (!find_name(kCollectives, COUNT_OF(kCollectives), fields[0], &row->collective))
    *why = "unknown collective (broadcast, reduce, allgather, reducescatter, allreduce)";
  else if (!parse_bytes(fields[1], &row->min_bytes) || !parse_bytes(fields[2], &row->max_bytes))
    *why = "min_bytes and max_bytes are byte counts";
  else if (row->min_bytes > row->max_bytes)
    *why = "min_bytes is above max_bytes";
  else if (!find_name(kAlgorithms, COUNT_OF(kAlgorithms), fields[3], &row->algorithm))
    *why = "unknown algorithm (tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat)";
  else if (!find_name(kProtocols, COUNT_OF(kProtocols), fields[4], &row->protocol))
    *why = "unknown protocol (ll, ll128, simple)";
  else if (!parse_count(fields[5], &row->channels) || row->channels == 0)
    *why = "channels is a positive count or -1";
  else if (!parse_count(fields[6], &row_nodes) || !parse_count(fields[7], &row_ranks))
    *why = "nNodes and nRanks are counts or -1";
  else if (count > 8 && !parse_count(fields[8], &row->pipelined_ops))
    *why = "numPipeOps is a count or -1";
  else if (count > 9 && (!parse_count(fields[9], &row->registered) || row->registered > 1))
    *why = "regBuff is 0, 1 or -1";
  else
    return (row_nodes == -1 || (size_t)row_nodes == nodes) &&
           (row_ranks == -1 || (size_t)row_ranks == ranks);
  return -1;
}

static syncoll_nccl_result load_table(Context *context, const char *path, size_t ranks,
                                      size_t nodes) {
  FILE *file = fopen(path, "r");
  if (!file) {
    if (context->log)
      context->log(SYNCOLL_NCCL_LOG_WARN, SYNCOLL_NCCL_TUNING_SUBSYSTEM, __FILE__, __LINE__,
                   "TUNER/syncoll: %s: cannot be read (%s)", path, strerror(errno));
    return SYNCOLL_NCCL_INVALID_USAGE;
  }
  char line[kMaxLine];
  size_t capacity = 0;
  int number = 0;
  syncoll_nccl_result result = SYNCOLL_NCCL_SUCCESS;
  while (fgets(line, sizeof line, file)) {
    ++number;
    const char *why = NULL;
    if (!strchr(line, '\n') && !feof(file)) {
      why = "a line longer than 1023 characters";
    } else {
      line[strcspn(line, "\n")] = '\0';
      char *text = trim(line);
      if (*text == '\0' || *text == '#')
        continue;
      Row row;
      const int kept = parse_row(text, ranks, nodes, &row, &why);
      if (kept == 1) {
        if (context->count == capacity) {
          capacity = capacity ? 2 * capacity : 16;
          Row *grown = realloc(context->rows, capacity * sizeof(Row));
          if (!grown) {
            result = SYNCOLL_NCCL_SYSTEM_ERROR;
            break;
          }
          context->rows = grown;
        }
        context->rows[context->count++] = row;
      }
    }
    if (why) {
      if (context->log)
        context->log(SYNCOLL_NCCL_LOG_WARN, SYNCOLL_NCCL_TUNING_SUBSYSTEM, __FILE__, __LINE__,
                     "TUNER/syncoll: %s:%d:1: %s", path, number, why);
      result = SYNCOLL_NCCL_INVALID_USAGE;
      break;
    }
  }
  fclose(file);
  return result;
}

SYNCOLL_HIDDEN syncoll_nccl_result syncoll_tuner_init(
    void **context_out, uint64_t comm_id, size_t ranks, size_t nodes, syncoll_nccl_logger log,
    struct syncoll_nccl_nvl_domain_info *nvl, struct syncoll_nccl_tuner_constants *constants) {
  (void)comm_id;
  (void)nvl;
  (void)constants;
  const char *path = getenv("NCCL_TUNER_CONFIG_FILE");
  if (!path || !*path) {
    if (log)
      log(SYNCOLL_NCCL_LOG_WARN, SYNCOLL_NCCL_TUNING_SUBSYSTEM, __FILE__, __LINE__,
          "TUNER/syncoll: NCCL_TUNER_CONFIG_FILE names no table (syncoll tune --nccl-tuner-csv "
          "writes one)");
    return SYNCOLL_NCCL_INVALID_USAGE;
  }
  Context *context = calloc(1, sizeof(Context));
  if (!context)
    return SYNCOLL_NCCL_SYSTEM_ERROR;
  context->log = log;
  const syncoll_nccl_result result = load_table(context, path, ranks, nodes);
  if (result != SYNCOLL_NCCL_SUCCESS) {
    free(context->rows);
    free(context);
    return result;
  }
  if (log)
    log(SYNCOLL_NCCL_LOG_INFO, SYNCOLL_NCCL_TUNING_SUBSYSTEM, __FILE__, __LINE__,
        "TUNER/syncoll: %zu rows of %s for %zu nodes, %zu ranks", context->count, path, nodes,
        ranks);
  *context_out = context;
  return SYNCOLL_NCCL_SUCCESS;
}

SYNCOLL_HIDDEN syncoll_nccl_result syncoll_tuner_get_coll_info(
    void *opaque, syncoll_nccl_func collective, size_t bytes, int pipelined_ops, float **cost_table,
    int algorithms, int protocols, int registered_buffers, int *channels) {
  const Context *context = opaque;
  if (!context)
    return SYNCOLL_NCCL_INTERNAL_ERROR;
  float *costs = (float *)cost_table;
  for (size_t i = 0; i < context->count; ++i) {
    const Row *row = &context->rows[i];
    if (row->collective != (int)collective || bytes < row->min_bytes || bytes > row->max_bytes ||
        (row->pipelined_ops != -1 && row->pipelined_ops != pipelined_ops) ||
        (row->registered != -1 && row->registered != registered_buffers))
      continue;
    float *entry = row->algorithm < algorithms && row->protocol < protocols
                       ? &costs[row->algorithm * protocols + row->protocol]
                       : NULL;
    if (!entry || *entry == SYNCOLL_NCCL_IGNORE) {
      if (context->log)
        context->log(SYNCOLL_NCCL_LOG_INFO, SYNCOLL_NCCL_TUNING_SUBSYSTEM, __FILE__, __LINE__,
                     "TUNER/syncoll: %s of %zu bytes: NCCL cannot run %s/%s here; its own choice "
                     "stands",
                     name_of(kCollectives, COUNT_OF(kCollectives), row->collective), bytes,
                     name_of(kAlgorithms, COUNT_OF(kAlgorithms), row->algorithm),
                     name_of(kProtocols, COUNT_OF(kProtocols), row->protocol));
      return SYNCOLL_NCCL_SUCCESS;
    }
    *entry = 0.0f;
    if (row->channels > 0)
      *channels = (int)row->channels;
    return SYNCOLL_NCCL_SUCCESS;
  }
  return SYNCOLL_NCCL_SUCCESS;
}

SYNCOLL_HIDDEN syncoll_nccl_result syncoll_tuner_finalize(void *opaque) {
  Context *context = opaque;
  if (context) {
    free(context->rows);
    free(context);
  }
  return SYNCOLL_NCCL_SUCCESS;
}

/* The one symbol the library exports (everything else is hidden). */
__attribute__((visibility("default"))) const syncoll_nccl_tuner_v5 ncclTunerPlugin_v5 = {
    "syncoll", syncoll_tuner_init, syncoll_tuner_get_coll_info, syncoll_tuner_finalize};
