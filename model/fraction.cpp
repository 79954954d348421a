#include "model/fraction.h"

#include "model/invariant.h"

#include <fmt/format.h>
#include <limits>
#include <numeric>

namespace syncoll {

Fraction Fraction::of(int64_t num, int64_t den) {
  SYNCOLL_INVARIANT(den > 0 && num >= 0, "a fraction with a non-positive denominator");
  const int64_t g = std::gcd(num, den);
  return {num / g, den / g};
}

std::string to_string(Fraction f) {
  return f.den == 1 ? fmt::format("{}", f.num) : fmt::format("{}/{}", f.num, f.den);
}

Fraction sum(Fraction a, Fraction b) {
  const int64_t g = std::gcd(a.den, b.den);
  const __int128 den = static_cast<__int128>(a.den / g) * b.den;
  const __int128 num =
      static_cast<__int128>(a.num) * (b.den / g) + static_cast<__int128>(b.num) * (a.den / g);
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  SYNCOLL_INVARIANT(num <= kMax && den <= kMax, "a fraction sum outgrows 64 bits");
  return Fraction::of(static_cast<int64_t>(num), static_cast<int64_t>(den));
}

Fraction quotient(Fraction a, Fraction b) {
  SYNCOLL_INVARIANT(b.num > 0, "a fraction divided by zero");
  const int64_t g1 = std::gcd(a.num, b.num);
  const int64_t g2 = std::gcd(a.den, b.den);
  const __int128 num = static_cast<__int128>(a.num / std::max<int64_t>(g1, 1)) * (b.den / g2);
  const __int128 den = static_cast<__int128>(a.den / g2) * (b.num / std::max<int64_t>(g1, 1));
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  SYNCOLL_INVARIANT(num <= kMax && den <= kMax, "a fraction quotient outgrows 64 bits");
  return Fraction::of(static_cast<int64_t>(num), static_cast<int64_t>(den));
}

bool less(Fraction a, Fraction b) {
  return static_cast<__int128>(a.num) * b.den < static_cast<__int128>(b.num) * a.den;
}

} // namespace syncoll
