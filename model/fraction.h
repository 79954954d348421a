// Exact non-negative rationals: rounds per chunk, cut ratios, bandwidth bounds. Every bound
// syncoll calls exact is one of these, never a double.
#pragma once

#include <cstdint>
#include <string>

namespace syncoll {

/// A non-negative fraction; Fraction::of keeps it in lowest terms with a positive denominator.
struct Fraction {
  int64_t num = 0;
  int64_t den = 1;

  /// num / den reduced; den must be positive and num non-negative.
  static Fraction of(int64_t num, int64_t den);
  double value() const { return double(num) / double(den); }
  friend bool operator==(const Fraction &, const Fraction &) = default;
};

/// "num/den", or "num" for a whole number.
std::string to_string(Fraction f);

/// a + b in lowest terms; an invariant failure if it does not fit in 64 bits.
Fraction sum(Fraction a, Fraction b);

/// a / b in lowest terms (b not zero); an invariant failure if it does not fit in 64 bits.
Fraction quotient(Fraction a, Fraction b);

/// a < b, exactly (the cross products in 128 bits).
bool less(Fraction a, Fraction b);

} // namespace syncoll
