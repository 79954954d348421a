#include "model/linear_bound.h"

#include "model/invariant.h"

#include <boost/multiprecision/cpp_int.hpp>
#include <fmt/format.h>
#include <limits>
#include <optional>

namespace syncoll {

namespace {

using Rational = boost::multiprecision::cpp_rational;
using Integer = boost::multiprecision::cpp_int;

std::optional<Rational> parse_rational(const std::string &text) {
  const auto digits = [](std::string_view s) {
    if (s.starts_with('-'))
      s.remove_prefix(1);
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  const size_t slash = text.find('/');
  const std::string num = text.substr(0, slash);
  const std::string den = slash == std::string::npos ? "1" : text.substr(slash + 1);
  if (!digits(num) || !digits(den) || den.starts_with('-'))
    return std::nullopt;
  const Integer d(den);
  if (d == 0)
    return std::nullopt;
  return Rational(Integer(num), d);
}

Fraction rounded_down(const Rational &value, bool &exact) {
  const Integer num = boost::multiprecision::numerator(value);
  const Integer den = boost::multiprecision::denominator(value);
  const Integer limit = std::numeric_limits<int64_t>::max();
  if (num >= 0 && num <= limit && den <= limit) {
    exact = true;
    return Fraction::of(static_cast<int64_t>(num), static_cast<int64_t>(den));
  }
  exact = false;
  constexpr int64_t kScale = 1'000'000'000'000;
  const Integer scaled = num * kScale / den; // truncation is floor for a non-negative bound
  SYNCOLL_INVARIANT(num >= 0 && scaled <= limit, "a bound out of range reached rounding");
  return Fraction::of(static_cast<int64_t>(scaled), kScale);
}

} // namespace

Expected<LinearBound> check_linear_bound(const LinearProgram &program,
                                         const std::vector<std::string> &multipliers) {
  if (multipliers.size() != program.rows.size())
    return fail({}, fmt::format("a certificate has one multiplier per constraint: {} for {}",
                                multipliers.size(), program.rows.size()));
  std::vector<Rational> reduced(program.cost.size());
  for (size_t j = 0; j < program.cost.size(); ++j)
    reduced[j] = program.cost[j];
  Rational bound = 0;
  for (size_t i = 0; i < program.rows.size(); ++i) {
    const std::optional<Rational> y = parse_rational(multipliers[i]);
    if (!y)
      return fail({}, fmt::format("multiplier {} ('{}') is not a rational", i, multipliers[i]));
    const LinearRow &row = program.rows[i];
    const bool sign_ok =
        row.sense == RowSense::Equal || (row.sense == RowSense::AtLeast ? *y >= 0 : *y <= 0);
    if (!sign_ok)
      return fail({}, fmt::format("multiplier {} has the wrong sign for its constraint", i));
    for (const auto &[variable, coefficient] : row.terms) {
      if (variable < 0 || size_t(variable) >= reduced.size())
        return fail(
            {}, fmt::format("constraint {} names variable {} of {}", i, variable, reduced.size()));
      reduced[size_t(variable)] -= *y * coefficient;
    }
    bound += *y * row.rhs;
  }
  for (size_t j = 0; j < reduced.size(); ++j)
    if (reduced[j] < 0)
      return fail({}, fmt::format("variable {}'s multiplied constraints exceed its cost", j));
  if (bound < 0 || bound > std::numeric_limits<int64_t>::max() / 1'000'000'000'000)
    return fail({}, "the certificate proves a bound out of range (negative, or too large to "
                    "hold to 10^-12 in 64 bits)");
  LinearBound out;
  out.value = rounded_down(bound, out.exact);
  return out;
}

} // namespace syncoll
