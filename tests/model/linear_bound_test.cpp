// Linear-program lower bounds from dual multipliers: a right certificate proves the program's
// least value exactly, and a multiplier of the wrong sign, one that overprices a variable, or one
// that is not a rational proves nothing.
#include "model/linear_bound.h"

#include <gtest/gtest.h>

namespace syncoll {
namespace {

// min 3x + 2y  s.t.  x + y >= 4,  x - y <= 2,  x + 3y = 6  (x, y >= 0): on the line x = 6 - 3y
// the cost is 18 - 7y, and the first two rows hold y to exactly 1: x = 3, cost 11.
LinearProgram small() {
  LinearProgram lp;
  lp.cost = {3, 2};
  lp.rows.push_back({{{0, 1}, {1, 1}}, RowSense::AtLeast, 4});
  lp.rows.push_back({{{0, 1}, {1, -1}}, RowSense::AtMost, 2});
  lp.rows.push_back({{{0, 1}, {1, 3}}, RowSense::Equal, 6});
  return lp;
}

TEST(LinearBoundTest, ARightCertificateProvesTheLeastValue) {
  // Columns: x takes y1 + y2 + y3 <= 3, y takes y1 - y2 + 3 y3 <= 2. With y1 = 7/2, y2 = 0,
  // y3 = -1/2 both hold with equality, and the bound is 4 (7/2) + 6 (-1/2) = 11.
  auto bound = check_linear_bound(small(), {"7/2", "0", "-1/2"});
  ASSERT_TRUE(bound.has_value()) << bound.error().to_string();
  EXPECT_EQ(bound->value, (Fraction{11, 1}));
  EXPECT_TRUE(bound->exact);
  // A weaker certificate proves less, and is still right.
  auto weaker = check_linear_bound(small(), {"1", "0", "0"});
  ASSERT_TRUE(weaker.has_value());
  EXPECT_EQ(weaker->value, (Fraction{4, 1}));
}

TEST(LinearBoundTest, AWrongCertificateProvesNothing) {
  auto wrong_sign = check_linear_bound(small(), {"7/2", "1", "-1/2"});
  ASSERT_FALSE(wrong_sign.has_value());
  EXPECT_NE(wrong_sign.error().to_string().find("multiplier 1 has the wrong sign"),
            std::string::npos);
  auto overpriced = check_linear_bound(small(), {"4", "0", "-1/2"});
  ASSERT_FALSE(overpriced.has_value());
  EXPECT_NE(overpriced.error().to_string().find("variable 0's multiplied constraints exceed"),
            std::string::npos);
  EXPECT_FALSE(check_linear_bound(small(), {"x", "0", "0"}).has_value());
  EXPECT_FALSE(check_linear_bound(small(), {"1/0", "0", "0"}).has_value());
  EXPECT_FALSE(check_linear_bound(small(), {"1", "0"}).has_value());
}

TEST(LinearBoundTest, ABoundPast64BitsIsRoundedDown) {
  LinearProgram lp;
  lp.cost = {1};
  lp.rows.push_back({{{0, 3}}, RowSense::AtLeast, 1});
  // y = 1/3 proves 1/3 exactly; the same over a denominator past 64 bits is rounded down.
  EXPECT_EQ(check_linear_bound(lp, {"1/3"})->value, (Fraction{1, 3}));
  auto huge = check_linear_bound(lp, {"100000000000000000000/300000000000000000001"});
  ASSERT_TRUE(huge.has_value());
  EXPECT_FALSE(huge->exact);
  EXPECT_TRUE(less(huge->value, Fraction{1, 3}));
  EXPECT_TRUE(less(Fraction{333333333332, 1000000000000}, huge->value));
}

} // namespace
} // namespace syncoll
