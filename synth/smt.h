// The SMT backend: SCCL's encoding (SCCL, section 3.4) on z3's C++ API.
#pragma once

#include "model/collective.h"
#include "model/topology.h"
#include "synth/answer.h"

namespace syncoll::synth {

/// Decides one (C, S, R) instance, C being the collective's chunk factor.
///
/// Non-reduced chunks use SCCL's variables: time(c, n), the step at which chunk c is first on
/// rank n (S+1 for never), and snd(n, c, n') for each link; constraints C1-C6 with the
/// bandwidth of every link and relation as pseudo-Boolean constraints per step, scaled by that
/// step's round count r_s. Reduced chunks (direct combining synthesis, e.g. Allreduce) add a
/// reduction in-tree over the chunk's pre ranks into a root the solver picks, then a broadcast
/// out-tree from the root to the post ranks; tr(c, n) is the step a partial leaves rank n.
///
/// The answer's algorithm is not yet checked; synthesize() checks every one.
Answer solve_smt(const Topology &topology, const CollectiveSpec &collective, StepsRounds sr,
                 const SynthOptions &options);

} // namespace syncoll::synth
