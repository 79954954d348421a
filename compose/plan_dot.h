// A factorized plan drawn by level (DOT text): ranks clustered by their top-level group, one edge
// per (from, to) pair with how many hops it carries and at which stages, coloured by the level it
// crosses. Deterministic: the same plan gives the same bytes.
#pragma once

#include "compose/factorize.h"

#include <string>

namespace syncoll::compose {

std::string plan_to_dot(const Factorized &plan, const Hierarchy &hierarchy, int ranks);

} // namespace syncoll::compose
