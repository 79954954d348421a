/* tuner_plugin/: syncoll's NCCL tuner plugin, a small C shared library (libnccl-tuner-syncoll.so)
 * that NCCL loads with NCCL_TUNER_PLUGIN=syncoll (or the library's path) and that answers NCCL's
 * question "which algorithm, protocol and channels for this call?" from a table `syncoll tune
 * --nccl-tuner-csv` wrote (NCCL_TUNER_CONFIG_FILE). It depends on nothing of syncoll's: NCCL runs
 * it on machines where syncoll is not installed. docs/nccl.md, "Tuner tables", says how to deploy
 * it.
 *
 * This header declares the part of NCCL's tuner interface, version 5, that the plugin implements,
 * written from NCCL's documented ABI (NCCL 2.27 and later load version 5; a release with a newer
 * interface still looks for `ncclTunerPlugin_v5` when its own is absent). The values are NCCL's:
 * its result codes, its collective, algorithm and protocol indices, its log levels. */
#ifndef SYNCOLL_TUNER_PLUGIN_TUNER_PLUGIN_H
#define SYNCOLL_TUNER_PLUGIN_TUNER_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ncclResult_t: the codes the plugin returns. */
typedef enum {
  SYNCOLL_NCCL_SUCCESS = 0,
  SYNCOLL_NCCL_SYSTEM_ERROR = 2,
  SYNCOLL_NCCL_INTERNAL_ERROR = 3,
  SYNCOLL_NCCL_INVALID_USAGE = 5
} syncoll_nccl_result;

/* ncclFunc_t: the collectives NCCL asks its tuner about. */
typedef enum {
  SYNCOLL_NCCL_BROADCAST = 0,
  SYNCOLL_NCCL_REDUCE = 1,
  SYNCOLL_NCCL_ALLGATHER = 2,
  SYNCOLL_NCCL_REDUCESCATTER = 3,
  SYNCOLL_NCCL_ALLREDUCE = 4
} syncoll_nccl_func;

/* NCCL_ALGO_* and NCCL_PROTO_*: the rows and columns of NCCL's cost table. */
enum {
  SYNCOLL_NCCL_ALGO_TREE = 0,
  SYNCOLL_NCCL_ALGO_RING = 1,
  SYNCOLL_NCCL_ALGO_COLLNET_DIRECT = 2,
  SYNCOLL_NCCL_ALGO_COLLNET_CHAIN = 3,
  SYNCOLL_NCCL_ALGO_NVLS = 4,
  SYNCOLL_NCCL_ALGO_NVLS_TREE = 5,
  SYNCOLL_NCCL_ALGO_PAT = 6
};
enum { SYNCOLL_NCCL_PROTO_LL = 0, SYNCOLL_NCCL_PROTO_LL128 = 1, SYNCOLL_NCCL_PROTO_SIMPLE = 2 };

/* NCCL_ALGO_PROTO_IGNORE: a cost-table entry NCCL cannot run for this call. */
#define SYNCOLL_NCCL_IGNORE (-1.0f)

/* ncclDebugLogLevel values and the NCCL_TUNING subsystem flag. */
enum { SYNCOLL_NCCL_LOG_WARN = 2, SYNCOLL_NCCL_LOG_INFO = 3, SYNCOLL_NCCL_LOG_TRACE = 5 };
#define SYNCOLL_NCCL_TUNING_SUBSYSTEM 64UL

/* ncclDebugLogger_t: NCCL's logger, handed to init. */
typedef void (*syncoll_nccl_logger)(int level, unsigned long flags, const char *file, int line,
                                    const char *format, ...);

/* What init is handed beside the communicator's size; the plugin leaves both as NCCL set them. */
struct syncoll_nccl_nvl_domain_info;
struct syncoll_nccl_tuner_constants;

/* ncclTuner_v5_t. The cost table is NCCL's float[numAlgo][numProto], passed as float**: NCCL runs
 * the entry of least cost, so the plugin chooses by setting its entry to 0. */
typedef struct {
  const char *name;
  syncoll_nccl_result (*init)(void **context, uint64_t comm_id, size_t ranks, size_t nodes,
                              syncoll_nccl_logger log, struct syncoll_nccl_nvl_domain_info *nvl,
                              struct syncoll_nccl_tuner_constants *constants);
  syncoll_nccl_result (*get_coll_info)(void *context, syncoll_nccl_func collective, size_t bytes,
                                       int pipelined_ops, float **cost_table, int algorithms,
                                       int protocols, int registered_buffers, int *channels);
  syncoll_nccl_result (*finalize)(void *context);
} syncoll_nccl_tuner_v5;

/* The symbol NCCL looks up in the library. */
extern const syncoll_nccl_tuner_v5 ncclTunerPlugin_v5;

#ifdef __cplusplus
}
#endif

#endif
