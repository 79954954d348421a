// study/: what-if co-design studies (docs/study.md). Read this first.
//
//   study_file.h  the study file: machines (system presets and what changes about them: nodes,
//                 GPUs, NICs, NIC rate, NVLink rate), collectives, sizes, variants (NCCL's choice
//                 or a forced algorithm, composed plans, MSCCL-IR programs, DSL examples,
//                 SCCL's synthesized frontier),
//                 baseline, heat map
//   points.h      every point in one fixed order, its key and hash; groups (a machine,
//                 collective and variant at every size) and how shards share them out
//   evaluate.h    one group's outcomes: simulated, verified where a program is involved; a point
//                 that cannot run is an outcome that says why
//   cache.h       one file per point, written atomically: resumable, shared by shards
//   report.h      CSV (long format), JSON and the HTML report with SVG plots, built from the
//                 cache, so identical whatever the shard count
//
// Depends on examples/programs (the DSL examples), viz/ (the report's plots share the demo's tick
// spacing and markers), compose/ (composed variants), synth/, lowering/, simulator/ (NCCL,
// programs), verifier/ and model/.
#pragma once

#include "study/cache.h"
#include "study/evaluate.h"
#include "study/points.h"
#include "study/report.h"
#include "study/study_file.h"
