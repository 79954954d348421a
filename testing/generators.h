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

/// Small communicating programs (2-3 ranks, up to 3 thread blocks each): thread blocks get
/// distinct connections, every connection carries as many pushes as pops with matching counts,
/// and steps mix sends, receives, fused steps, local copies and reductions, nops and random
/// dependencies, so some programs deadlock and some do not. With `share_connections`, two
/// thread blocks may use one connection, breaking the structural rules on purpose.
rc::Gen<Program> gen_connected_program(bool share_connections = false);

} // namespace syncoll::testing
