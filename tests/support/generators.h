// rapidcheck generators for syncoll's model types. Every generated value passes its type's
// validation, so properties can assume well-formed input.
#pragma once

#include "model/program.h"
#include "model/topology.h"

#include <rapidcheck.h>

namespace syncoll::testing {

/// Topologies of 2..12 ranks: random links with capacities 1..4, latencies with fractional parts,
/// bandwidths, random bandwidth relations and sometimes a two-level hierarchy.
rc::Gen<Topology> gen_topology();

/// Thread-block programs of 1..5 ranks that the executor's parser accepts: random peers,
/// channels, step types, buffers, offsets within the buffers, counts, dependencies and nops.
rc::Gen<Program> gen_program();

} // namespace syncoll::testing
