// A lower bound on the least value of a linear program, and the certificate that proves it: one
// multiplier per constraint (the dual solution). Any x >= 0 meeting every constraint has
// cost . x >= sum_i y_i (row_i . x) >= sum_i y_i rhs_i when every column's sum_i y_i a_ij is at
// most its cost and every multiplier has the sign its constraint allows (>= 0 for at-least, <= 0
// for at-most, any for equal): weak duality. The check below re-derives the bound that way in
// exact rational arithmetic, trusting nothing about the solver that found the multipliers.
#pragma once

#include "model/diagnostics.h"
#include "model/fraction.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace syncoll {

enum class RowSense { AtLeast, AtMost, Equal };

/// sum of coefficient x variable over `terms`, compared with `rhs` by `sense`.
struct LinearRow {
  std::vector<std::pair<int32_t, int64_t>> terms; ///< (variable, coefficient)
  RowSense sense = RowSense::AtLeast;
  int64_t rhs = 0;
};

/// Minimise cost . x over x >= 0 (one cost per variable) subject to every row.
struct LinearProgram {
  std::vector<int64_t> cost;
  std::vector<LinearRow> rows;
};

/// The bound a certificate proves: exact when it fits in 64 bits, else rounded down to 10^-12
/// (still a lower bound).
struct LinearBound {
  Fraction value;
  bool exact = true;
};

/// Checks one multiplier per row, each an exact rational "p/q" or "p", and returns the bound it
/// proves; fails naming the first row with the wrong sign or the first column whose reduced cost
/// is negative, or a multiplier that is not a rational.
[[nodiscard]] Expected<LinearBound> check_linear_bound(const LinearProgram &program,
                                                       const std::vector<std::string> &multipliers);

} // namespace syncoll
