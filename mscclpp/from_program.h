// A verified MSCCL-IR program as an MSCCL++ execution plan (docs/semantics.md, "MSCCL++
// execution plans"), so that what syncoll lowers and proves runs on MSCCL++'s executor too.
#pragma once

#include "model/diagnostics.h"
#include "mscclpp/plan.h"
#include "verifier/verify.h"

namespace syncoll::mscclpp {

/// The plan of a verified program: each thread block one thread block, each connection (sender,
/// receiver, channel) a memory channel each way, each message its own slot in the receiver's
/// scratch (so that no slot is reused within a call; calls alternate scratch halves:
/// use_double_scratch_buffer). A send puts its payload into the receiver's slot and signals; a
/// receive waits, then copies or reduces from the slot; a dependency is a device semaphore the
/// depended-on step releases and the dependent step acquires. Fails for a collective MSCCL++'s
/// executor does not name (gather, scatter, reduce, custom) and for a program of another
/// protocol than Simple (the plan's puts and signals are Simple's). With `gpus_per_node` (ranks
/// numbered node by node, as a topology's hierarchy numbers them), a connection between nodes is
/// a port channel instead: the proxy puts and signals (`pwsf`, which also waits until the source
/// is read, since a later step may overwrite it); 0 puts every GPU on one node.
[[nodiscard]] Expected<ExecutionPlan> plan_from_program(const verifier::VerifiedProgram &verified,
                                                        int gpus_per_node = 0);

} // namespace syncoll::mscclpp
