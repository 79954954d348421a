// The SAT backend: the SAT paper's encoding on CaDiCaL, with the rounds of every step inside the
// one formula.
#pragma once

#include "model/collective.h"
#include "model/topology.h"
#include "synth/answer.h"

namespace syncoll::synth {

/// Decides one (C, S, R) instance of a collective whose chunks are all copied (combining ones
/// come through their duals or composition, as with the SMT backend).
///
/// Variables (the SAT paper): p(c, n, t), chunk c is on rank n after step t, and s(c, l, t), chunk
/// c crosses link l in step t; and per step a unary round count u(t, i), "step t has at least i
/// rounds". Constraints: the pre- and postcondition at t = 0 and t = S; a send needs the chunk
/// at its source before the step and delivers it; a chunk is new at a rank only through a send
/// of that step; presence is monotone; per link and relation and step, a totalizer counts the
/// sends, and more than capacity x i of them forces u(t, i + 1); the extra rounds of all steps
/// together are at most R - S. Implied constraints that prune: a chunk crosses a link at most
/// once, is never sent to a rank that has it, arrives at most once per step, and is nowhere
/// before its hop distance from a pre rank. Interchangeable chunks bound to several ranks reach
/// one of them in label order (symmetry breaking between chunks). With
/// `options.break_symmetry`, each generator of the topology's symmetry group (symmetry.h) adds a
/// lex-leader constraint under an order compatible with the chunk ordering.
///
/// With `options.certify`, CaDiCaL checks its own unsat proof as it goes (DRAT, its
/// `checkproof` option) and the answer says so.
Answer solve_sat(const Topology &topology, const CollectiveSpec &collective, StepsRounds sr,
                 const SynthOptions &options);

} // namespace syncoll::synth
