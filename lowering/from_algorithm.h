// Synthesized (or hand-written) k-synchronous Algorithms as DSL programs, so that they lower
// through the same passes as everything else (docs/architecture.md, "Lowering").
#pragma once

#include "lowering/dsl.h"
#include "model/algorithm.h"

namespace syncoll::lowering {

/// Out of place: a chunk a rank receives lands in its output slot when the rank is one of the
/// chunk's post ranks, else in a scratch slot; a reduction first copies the rank's own
/// contribution there. Within a step every send reads the value from before the step (sends
/// are ordered so that a rank sends a chunk before it receives it again). Post ranks that end
/// with a chunk elsewhere copy it to their output slots last. Fails for a step whose sends
/// of one chunk form a cycle, or a send of a chunk its source does not hold.
[[nodiscard]] Expected<DslProgram> algorithm_to_dsl(const Algorithm &algorithm,
                                                    const Topology &topology,
                                                    const CollectiveSpec &collective,
                                                    DslOptions options = {});

} // namespace syncoll::lowering
