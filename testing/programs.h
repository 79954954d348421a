// Correct thread-block programs built directly, for tests and benchmarks, until the compiler of
// lowering/ produces them from the DSL. Each is the textbook schedule in the shape
// msccl-tools emits for rings.
#pragma once

#include "model/collective.h"
#include "model/program.h"

namespace syncoll::testing {

/// A thread block with peers given as rank numbers, -1 for none (the MSCCL-IR convention).
ThreadBlockBuilder thread_block(int id, int send, int recv, int chan);

/// NCCL's ring program (nccl/algorithms) along 0, 1, ..., n-1.
Program ring_program(CollectiveKind kind, int n, int channels, Protocol proto);

/// The two ways runtimes declare an in-place program's buffers: both in full, or the buffer
/// that lives inside the other as 0 chunks with every step naming its home (RCCL's and
/// msccl-tools' in-place allreduce: o_chunks="0", only `i`; allgather: i_chunks="0", only `o`).
Program declared_in_full(const Program &p, const CollectiveSpec &c);
Program aliased_buffer_declared_zero(const Program &p, const CollectiveSpec &c);

/// The <algo> header of a program claiming one aliasing mode; no size window.
ProgramDraft header(const char *name, const char *coll, int ranks, int channels, int chunks,
                    bool in_place, Protocol proto);

/// Ring Allreduce, in place, along 0..n-1 (nccl/algorithms' NCCL ring): per channel one
/// thread block per rank (send next, receive previous) with steps s, rrs x (n-2), rrcs,
/// rcs x (n-2), r. nchunksperloop = ranks x channels.
Program ring_allreduce_program(int ranks, int channels, Protocol proto = Protocol::Simple);

/// Ring Allgather, out of place, along 0..n-1: per channel a thread block per rank with cpy, s,
/// rcs x (n-2), r.
Program ring_allgather_program(int ranks, int channels, Protocol proto = Protocol::Simple);

/// All-pairs Allreduce, in place (reduce-scatter then allgather through scratch): each rank
/// sends chunk j to rank j, reduces what it receives with local `re` steps, and sends the result
/// back to everyone. One sending and one receiving thread block per peer; dependencies order the
/// local reductions after the receives and the final sends after the reductions.
Program allpairs_allreduce_program(int ranks);

/// The same with a seeded bug, for trying property runs (`syncoll check --family
/// broken_allpairs_allreduce`): at 2 ranks the sends of the reduced chunk do not wait for the
/// (single) reduction, so they race with it; from 3 ranks on it is correct.
Program broken_allpairs_allreduce_program(int ranks);

/// Recursive-doubling Allgather (ranks a power of two), out of place: in round k each rank
/// exchanges the 2^k chunks it has with rank ^ 2^k; one thread block per partner, rounds chained
/// with dependencies.
Program recursive_doubling_allgather_program(int ranks);

/// Two-step Alltoall over `nodes` x `gpus` ranks, out of place (GC3, figure 8): chunks for
/// ranks of this node go directly; all chunks for another node go in one transfer to the GPU
/// with this GPU's local index there, which keeps its own and forwards the others inside its
/// node from scratch.
Program two_step_alltoall_program(int nodes, int gpus);

} // namespace syncoll::testing
