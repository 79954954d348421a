// viz/: drawings. Read this first; docs/visualization.md shows what each drawing means.
//
//   dot.h     DOT for topologies (topology_dot.cpp: nodes collapsed at cluster scale),
//             algorithms, programs (folded when large) and counterexamples
//   plan_dot.h  an MSCCL++ plan's counterexample
//   render.h  DOT to SVG or PNG through Graphviz's library (the only place Graphviz is used)
//   charts.h  SVG timelines of simulator traces and speedup-versus-size plots, and the tick
//             spacing and markers the study report's plots share
//
// Depends on model/, simulator/, verifier/ and mscclpp/.
#pragma once

#include "viz/charts.h"
#include "viz/dot.h"
#include "viz/plan_dot.h"
#include "viz/render.h"
