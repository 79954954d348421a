// synth/: synthesizes k-synchronous algorithms for a topology and a collective. Read this first;
// docs/synthesis.md has the encodings and measurements.
//
//   synthesize.h  synthesize (one instance: S steps, R rounds, C chunks), least_steps, pareto
//   answer.h      an algorithm (re-checked by model's check_algorithm), a proof that none
//                 exists (with what it covers), or unknown
//   bounds.h      lower bounds on steps and rounds per chunk that prune the searches
//   combining.h   Reduce, ReduceScatter and Scatter through their duals; Allreduce composed
//   cut_bound.h   the exact cut bound of Allgather / ReduceScatter at any scale (max-flow),
//                 with its certificate
//   scale.h       breadth-first Allgather schedules in diameter steps, measured against it
//   grid.h        dimension-ordered Allgather on meshes (line pipelines), diameter steps
//   paced.h       Allgather paced to the binding ranks' cut, earliest deadline first, in the
//                 diameter's steps or a few more (meshes at the bound)
//   cluster.h     Allgather, ReduceScatter, Allreduce on clusters of boxes (rails, leaf
//                 groups), planned by a small linear program, against the cluster's cuts
//   scale_choice.h  which of those `synth scale` makes: method, pieces and steps by default
//   step_cost.h   what a step and a pipelined schedule cost on a topology, exactly
//   sat.h, smt.h  the CaDiCaL and z3 backends (reached through synthesize.h)
//   symmetry.h    topology symmetries for lex-leader symmetry breaking
//
// z3 and CaDiCaL are used here and nowhere else.
#pragma once

#include "synth/answer.h"
#include "synth/bounds.h"
#include "synth/cluster.h"
#include "synth/combining.h"
#include "synth/cut_bound.h"
#include "synth/grid.h"
#include "synth/paced.h"
#include "synth/scale.h"
#include "synth/scale_choice.h"
#include "synth/step_cost.h"
#include "synth/synthesize.h"
