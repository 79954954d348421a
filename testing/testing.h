// syncoll::testing, for property tests of collective algorithms, compilers and runtimes: start
// here.
//
// - testing/generators.h: rapidcheck generators (with shrinking): topologies (random and every
//   library family), collectives (standard and custom), algorithms that check, programs that
//   verify, and programs that merely parse.
// - testing/programs.h: reference programs built directly (rings, all-pairs, recursive doubling,
//   two-step all-to-all), correct by construction, and one with a seeded bug.
// - testing/laws.h: ready laws (lowers and verifies; verifies; simulator and verifier agree;
//   simulated time at least the cost model's receive bound; the CPU executor matches the
//   reference), each a verdict with a readable counterexample; `require(law)` asserts one.
// - testing/mutate.h: faults injected into correct programs (deadlock, race, wrong result), each
//   mutant re-verified to show exactly that fault.
// - testing/check.h: property runs over a family of programs with seeded cases and shrinking, the
//   engine of `syncoll check`; testing/families.h: the families it offers (reference programs,
//   synthesized algorithms, a folder of MSCCL-IR files).
//
// Installed with the package: `find_package(syncoll)` and link `syncoll::testing`
// (examples/consumer is a project that does).
#pragma once

#include "testing/check.h"
#include "testing/families.h"
#include "testing/generators.h"
#include "testing/laws.h"
#include "testing/mutate.h"
#include "testing/programs.h"
