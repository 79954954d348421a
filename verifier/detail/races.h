// Race detection over one pipeline iteration (iterations touch disjoint elements): two accesses
// on one rank to one cell, at least one a write, with no happens-before path between them.
// Happens-before is program order and dependency edges (strict), plus message edges (relaxed);
// it is computed with vector clocks over a topological order.
#pragma once

#include "model/program.h"
#include "verifier/detail/connections.h"
#include "verifier/detail/symbolic.h"
#include "verifier/report.h"

#include <vector>

namespace syncoll::verifier::detail {

std::vector<RaceCounterexample> find_races(const Program &program, const ConnectionMap &cm,
                                           const SymbolicMemory &cells, RaceMode mode,
                                           const std::string &alias_mode, size_t max_reports);

} // namespace syncoll::verifier::detail
