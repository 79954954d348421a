// syncoll::testing, for property tests of collective algorithms, compilers and runtimes: start
// here.
//
// - testing/generators.h: rapidcheck generators (with shrinking) for topologies and thread-block
//   programs, every value well formed.
// - testing/programs.h: reference programs built directly (rings, trees, all-to-alls) that are
//   correct by construction, for differential tests.
//
// Installed with the package: `find_package(syncoll)` and link `syncoll::testing`
// (examples/consumer is a project that does).
#pragma once

#include "testing/generators.h"
#include "testing/programs.h"
