// rapidcheck generators for syncoll's model types. Every generated value passes its type's
// validation, so properties can assume well-formed input; the algorithms check and the programs
// verify.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/program.h"
#include "model/topology.h"
#include "testing/check.h"

#include <ostream>
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

/// A topology of the library (model/topology_library.h): every family, with small random sizes
/// (2..8 ranks, hypercubes to 8, grids to 4 x 4, multinode and fat trees of 2..4 nodes of 2..4
/// GPUs with 1..2 NICs).
rc::Gen<Topology> gen_library_topology();

/// Collectives of `ranks` >= 2 ranks: every standard kind (chunk factors 1..3, random roots for the
/// rooted ones) and custom ones (random pre and post slots, copied or reduced chunks).
rc::Gen<CollectiveSpec> gen_collective(int ranks);

/// An algorithm that check_algorithm accepts, with its topology and collective: a strongly
/// connected topology of 2..6 ranks (a bidirectional ring plus random links of capacity 1..3 and
/// random relations), a collective whose chunks are copied (standard or custom), every chunk
/// routed from its pre ranks along a random shortest-path tree to its post ranks, and each step
/// given the rounds its busiest link or relation needs.
struct AlgorithmCase {
  Topology topology;
  CollectiveSpec collective;
  Algorithm algorithm;
};
rc::Gen<AlgorithmCase> gen_algorithm();

/// A program that verifies, with a topology it runs on and the collective it implements: a
/// reference program (testing/programs.h) of random size, or a generated algorithm (gen_algorithm)
/// lowered by the compiler.
rc::Gen<FamilyCase> gen_verified_program();

/// How rapidcheck prints a failing case: the program as MSCCL-IR, the collective and the
/// algorithm as JSON, so a counterexample can be saved and replayed with the CLI.
void showValue(const FamilyCase &c, std::ostream &os);
void showValue(const AlgorithmCase &c, std::ostream &os);

} // namespace syncoll::testing
