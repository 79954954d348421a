// verifier/: decides whether a thread-block program is correct, and says why not. Read this first.
//
//   verify.h         verify(program, options) -> Report: every property a verdict (holds,
//                    violated with a counterexample, or unknown with the reason); certify() makes
//                    the VerifiedProgram that deployment accepts, and nothing else can
//   report.h         verdicts, counterexamples (wait-for cycles, racing accesses, wrong output
//                    slots, broken rules) and their text and JSON forms
//   structural.h     the static rules and resource limits (docs/semantics.md, "Structure")
//   model_checker.h  explicit-state exploration of every interleaving, for programs the linear
//                    deadlock check is not sound for, and to cross-check it
//
// Depends on model/ only, and never on simulator/: the two execute docs/semantics.md
// independently and the tests require them to agree.
#pragma once

#include "verifier/model_checker.h"
#include "verifier/report.h"
#include "verifier/structural.h"
#include "verifier/verify.h"
