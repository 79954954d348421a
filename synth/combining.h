// Combining collectives (SCCL, section 3.5): through their non-combining dual, and Allreduce as
// ReduceScatter followed by Allgather with buffer maps that line up.
#pragma once

#include "model/algorithm.h"
#include "model/collective.h"
#include "model/topology.h"

#include <optional>
#include <string_view>

namespace syncoll::synth {

/// The topology with every link and relation turned around.
Topology reverse_topology(const Topology &topology);

/// The non-combining dual of a collective whose every chunk is reduced over all ranks into a
/// single post rank (Reduce, ReduceScatter): the chunk starts at that rank and must reach every
/// contributor. nullopt for any other collective (Allreduce has every rank in every post set).
std::optional<CollectiveSpec> non_combining_dual(const CollectiveSpec &collective);

/// The transpose of a collective whose chunks all start at one rank and each end at one rank
/// (Scatter): pre and post swapped, so the chunks converge instead (Gather-like). nullopt for
/// any other collective. SCCL solves Scatter as the inverse of Gather (its Table 4); the
/// converging form is the easier one for the solver.
std::optional<CollectiveSpec> fan_in_transpose(const CollectiveSpec &collective);

/// Runs a transposed collective's algorithm backwards as copies: first drops every send that
/// does not lead to a post rank of its chunk (what remains of each chunk is a path), then
/// reverses the steps and turns every send around.
Algorithm invert_transpose(const Algorithm &transposed, const CollectiveSpec &transposed_spec);

/// Runs a dual's algorithm backwards: steps in reverse order, every send turned around and made
/// a reduction. A rank that fanned a chunk out in the dual now gathers partial sums from the
/// same ranks, one step earlier than it forwards its own.
Algorithm invert_dual(const Algorithm &dual);

/// Allreduce of P x C chunks per rank from a ReduceScatter and an Allgather of C chunks per rank.
/// Both number chunk i of rank n as i*P + n, and that chunk lives at slot n*C + i of the
/// Allreduce buffer, so the chunks are renamed to the slot, not kept by number: the composed
/// algorithm moves exactly the Allreduce's buffer (msccl-tools' composition gets this
/// wrong: it builds the result on one address per chunk unit).
Algorithm compose_allreduce(const Algorithm &reduce_scatter, const Algorithm &allgather, int ranks,
                            int chunks_per_rank);

/// ReduceScatter or Allreduce of `pieces` pieces per rank's share from Allgathers: the reversed
/// topology's Allgather run backwards (invert_dual), then, for an Allreduce, `allgather` after it
/// (compose_allreduce). Named "{method}-{collective}-{topology}-{tag}", with its target: the one
/// construction behind every scale schedule's ReduceScatter and Allreduce.
Algorithm collective_from_allgathers(CollectiveKind kind, const Algorithm &reversed_allgather,
                                     const Algorithm *allgather, int ranks, int pieces,
                                     std::string_view topology, std::string_view method,
                                     std::string_view tag);

} // namespace syncoll::synth
