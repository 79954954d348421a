// compose/: collectives composed of multicasts, reductions and fences, and factorized for a
// machine's hierarchy (HiCCL's approach; docs/compose.md). Read in this order:
//
//  1. composition.h      Composition: primitives and fences; standard() for the standard
//                        collectives; specification() derives what a composition computes, and
//                        same_postcondition() compares it with a collective.
//  2. composition_json.h the composition file (docs/formats.md, "Compositions").
//  3. factorize.h        Hierarchy (factors, stripes, ring nodes, pipeline depth) and factorize():
//                        a plan of point-to-point hops emitted as a chunk-DSL program, which
//                        lowering::lower() compiles and verifies like any other.
//  4. search.h           candidates() and search(): plans tried on the simulator, the fastest
//                        verified one kept, NCCL's choice on the same machine beside it.
//  5. plan_dot.h         a plan drawn by level.
#pragma once

#include "compose/composition.h"
#include "compose/composition_json.h"
#include "compose/factorize.h"
#include "compose/plan_dot.h"
#include "compose/search.h"
