// ExprProgram: operators, precedence, broadcasting and vector functions of expr_feature's
// expression language. Expected values: muParser's own tests for the precedences and associativity
// TorchEasyRec's operator table takes from it (muParserTest.cpp: "2^2^3" = 256, "-2^2" = -4,
// "3+-3^2" = -6, "-(-2^2)" = 4, "(-3)^2" = 9, "3+4*2/(1-5)^2^3" = 3.0001220703125,
// "1+2-3*4/5^6" = 2.99923, "1^2/3*4-5+6" = 2.33333333, "b^-1" = 0.5 for b = 2), TorchEasyRec's
// docs (the example "u_age == i_age ? 1 : 0", the precedence levels of its table), and the rest by
// hand (the arithmetic is written next to each value).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "feature/expr_program.h"

namespace tzrec::feature {
namespace expr_program_test {

using Values = std::vector<double>;

const std::vector<std::string> kNames = {"a", "b", "c"};

// The value(s) of `text` with a, b, c bound to `vars` (missing ones are 0).
Values eval(const std::string& text, const std::vector<Values>& vars = {},
            double fill = std::numeric_limits<double>::quiet_NaN()) {
  ExprProgram p(text, kNames, fill);
  std::vector<Values> bound = vars;
  bound.resize(kNames.size(), Values{0.0});
  std::vector<ExprArg> args;
  for (const auto& v : bound) args.push_back(ExprArg{v.data(), v.size()});
  ExprProgram::Scratch s;
  Values out;
  p.evaluate(args.data(), &s, &out);
  return out;
}

double eval1(const std::string& text, const std::vector<Values>& vars = {}) {
  const Values v = eval(text, vars);
  EXPECT_EQ(v.size(), 1u) << text;
  return v.empty() ? std::nan("") : v[0];
}

TEST(ExprProgram, ArithmeticAndPrecedence) {
  EXPECT_EQ(eval1("1+2*3"), 7);
  EXPECT_EQ(eval1("(1+2)*3"), 9);
  EXPECT_EQ(eval1("10-4-3"), 3);  // left-associative
  EXPECT_EQ(eval1("8/4/2"), 1);
  EXPECT_EQ(eval1("7/2"), 3.5);   // no integer division
  EXPECT_EQ(eval1("2^3"), 8);
  EXPECT_EQ(eval1("2^2^3"), 256);  // right-associative: 2^(2^3)
  EXPECT_DOUBLE_EQ(eval1("3+4*2/(1-5)^2^3"), 3.0001220703125);
  EXPECT_NEAR(eval1("1+2-3*4/5^6"), 2.99923, 1e-5);
  EXPECT_NEAR(eval1("1^2/3*4-5+6"), 2.33333333, 1e-7);
  EXPECT_EQ(eval1(" 1 +\t2 "), 3);
}

TEST(ExprProgram, UnaryMinusBindsWeakerThanPower) {
  EXPECT_EQ(eval1("-2^2"), -4);
  EXPECT_EQ(eval1("3+-3^2"), -6);
  EXPECT_EQ(eval1("(-3)^2"), 9);
  EXPECT_EQ(eval1("-(-2^2)"), 4);
  EXPECT_EQ(eval1("b^-1", {{0}, {2}}), 0.5);
  EXPECT_EQ(eval1("2*-3"), -6);
  EXPECT_EQ(eval1("--2"), 2);
  EXPECT_EQ(eval1("+2"), 2);
  EXPECT_EQ(eval1("-a*b", {{3}, {4}}), -12);
  EXPECT_EQ(eval1("-(a+b)^2", {{1}, {2}}), -9);  // muParser's "-(a+b)^2" = -9
}

TEST(ExprProgram, Numbers) {
  EXPECT_EQ(eval1(".5"), 0.5);
  EXPECT_EQ(eval1("1e3"), 1000);
  EXPECT_DOUBLE_EQ(eval1("1.5E-1"), 0.15);
  EXPECT_EQ(eval1("2."), 2);
  EXPECT_DOUBLE_EQ(eval1("_pi"), 3.141592653589793);
  EXPECT_DOUBLE_EQ(eval1("_e"), 2.718281828459045);
}

TEST(ExprProgram, ComparisonsGiveOneOrZero) {
  EXPECT_EQ(eval1("1<2"), 1);
  EXPECT_EQ(eval1("2<2"), 0);
  EXPECT_EQ(eval1("2<=2"), 1);
  EXPECT_EQ(eval1("3>4"), 0);
  EXPECT_EQ(eval1("4>3"), 1);
  EXPECT_EQ(eval1("3>=4"), 0);
  EXPECT_EQ(eval1("2==2"), 1);
  EXPECT_EQ(eval1("2!=2"), 0);
  EXPECT_EQ(eval1("1+1==2"), 1);   // + binds tighter than ==
  EXPECT_EQ(eval1("3<2==0"), 1);   // one level, left-associative: (3<2)==0
}

TEST(ExprProgram, LogicalAndBitwiseOperators) {
  EXPECT_EQ(eval1("1 && 0"), 0);
  EXPECT_EQ(eval1("2 && 0.5"), 1);  // any non-zero value is true
  EXPECT_EQ(eval1("0 || 0"), 0);
  EXPECT_EQ(eval1("0 || 0.5"), 1);
  EXPECT_EQ(eval1("6 & 3"), 2);
  EXPECT_EQ(eval1("6 | 3"), 7);
  EXPECT_EQ(eval1("5.9 & 3"), 1);  // 5 & 3
  // Precedence (TorchEasyRec's table): || 1 < && 2 < | 3 < & 4 < comparisons 5.
  EXPECT_EQ(eval1("1 || 0 && 0"), 1);  // 1 || (0 && 0); left to right would give 0
  EXPECT_EQ(eval1("1 && 0 | 2"), 1);   // 1 && (0 | 2); left to right would give 2
  EXPECT_EQ(eval1("1 | 2 & 0"), 1);    // 1 | (2 & 0); left to right would give 0
  EXPECT_EQ(eval1("2 & 2 == 2"), 0);   // 2 & (2 == 2) = 2 & 1; left to right would give 1
}

TEST(ExprProgram, Conditional) {
  // TorchEasyRec's docs example: "u_age == i_age ? 1 : 0" (here a and b).
  EXPECT_EQ(eval1("a == b ? 1 : 0", {{18}, {18}}), 1);
  EXPECT_EQ(eval1("a == b ? 1 : 0", {{18}, {20}}), 0);
  EXPECT_EQ(eval1("0 ? 1 : 0 ? 2 : 3"), 3);  // right-associative
  EXPECT_EQ(eval1("1 ? 1 : 0 ? 2 : 3"), 1);
  EXPECT_EQ(eval1("0 ? 1 : 2 + 3"), 5);      // lowest precedence
  EXPECT_EQ(eval1("(1 ? 2 : 3) * 4"), 8);
  EXPECT_EQ(eval1("a > 1 ? (b > 1 ? 10 : 20) : 30", {{2}, {0}}), 20);
}

TEST(ExprProgram, VectorsBroadcastElementWise) {
  const Values a = {1, 2, 3};
  EXPECT_EQ(eval("a*b", {a, {2}}), (Values{2, 4, 6}));
  EXPECT_EQ(eval("b-a", {a, {10}}), (Values{9, 8, 7}));
  EXPECT_EQ(eval("a+b", {a, {10, 20, 30}}), (Values{11, 22, 33}));
  EXPECT_EQ(eval("-a", {a}), (Values{-1, -2, -3}));
  EXPECT_EQ(eval("a>1", {a}), (Values{0, 1, 1}));
  EXPECT_EQ(eval("a>1 ? a : 0", {a}), (Values{0, 2, 3}));
  EXPECT_EQ(eval("max(a, 2)", {a}), (Values{2, 2, 3}));
  EXPECT_EQ(eval("sum(a, b, 1)", {a, {10, 20, 30}}), (Values{12, 23, 34}));
  EXPECT_EQ(eval("abs(-a)", {a}), a);
  // Different lengths: the shorter is padded with fill_missing (NaN unless set).
  const Values nan_padded = eval("a+b", {a, {1, 1}});
  ASSERT_EQ(nan_padded.size(), 3u);
  EXPECT_EQ(nan_padded[0], 2);
  EXPECT_EQ(nan_padded[1], 3);
  EXPECT_TRUE(std::isnan(nan_padded[2]));
  EXPECT_EQ(eval("a+b", {a, {1, 1}}, 0.0), (Values{2, 3, 3}));
  EXPECT_EQ(eval("a*b", {a, {5}}, 0.0), (Values{5, 10, 15}));  // one value is a scalar, not padded
}

TEST(ExprProgram, VectorFunctionsReduceToScalars) {
  EXPECT_EQ(eval1("dot(a, b)", {{1, 2, 3}, {4, 5, 6}}), 32);  // 4 + 10 + 18
  EXPECT_EQ(eval1("dot(a, 2)", {{1, 2, 3}}), 12);             // the scalar broadcasts
  EXPECT_EQ(eval1("dot(a, b)", {{2}, {3}}), 6);               // scalars are vectors of one
  EXPECT_EQ(eval1("euclid_dist(a, b)", {{0, 0}, {3, 4}}), 5);
  EXPECT_EQ(eval1("len(a)", {{1, 2, 3}}), 3);
  EXPECT_EQ(eval1("len(a)", {{7}}), 1);
  EXPECT_EQ(eval1("l2_norm(a)", {{3, 4}}), 5);
  EXPECT_EQ(eval1("squared_norm(a)", {{3, 4}}), 25);
  EXPECT_DOUBLE_EQ(eval1("corr(a, b)", {{1, 2, 3}, {2, 4, 6}}), 1);
  EXPECT_DOUBLE_EQ(eval1("corr(a, b)", {{1, 2, 3}, {3, 2, 1}}), -1);
  // The classic [2, 4, 4, 4, 5, 5, 7, 9]: sum of squared deviations 32, n 8.
  const Values x = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_EQ(eval1("std_dev(a)", {x}), 2);                            // sqrt(32 / 8)
  EXPECT_EQ(eval1("variance(a)", {x}), 4);                           // 32 / 8
  EXPECT_DOUBLE_EQ(eval1("pop_variance(a)", {x}), 32.0 / 7);          // 32 / (n - 1)
  EXPECT_DOUBLE_EQ(eval1("pop_std_dev(a)", {x}), std::sqrt(32.0 / 7));
  const Values y = {1, 2, 3, 4};
  EXPECT_EQ(eval1("reduce_min(a)", {y}), 1);
  EXPECT_EQ(eval1("reduce_max(a)", {y}), 4);
  EXPECT_EQ(eval1("reduce_sum(a)", {y}), 10);
  EXPECT_EQ(eval1("reduce_mean(a)", {y}), 2.5);
  EXPECT_EQ(eval1("reduce_prod(a)", {y}), 24);
  // Vector functions inside scalar arithmetic: the cosine of [1, 0] and [1, 1] is 1 / sqrt(2).
  EXPECT_DOUBLE_EQ(eval1("dot(a, b) / (l2_norm(a) * l2_norm(b))", {{1, 0}, {1, 1}}), 1 / std::sqrt(2.0));
  EXPECT_EQ(eval1("dot(a, b) + c", {{1, 2}, {3, 4}, {100}}), 111);
  // Different lengths: padded with fill_missing (NaN unless set: the dot product is NaN).
  EXPECT_TRUE(std::isnan(eval1("dot(a, b)", {{1, 2, 3}, {1, 1}})));
  EXPECT_EQ(eval("dot(a, b)", {{1, 2, 3}, {1, 1}}, 0.0), (Values{3}));
  EXPECT_EQ(eval("dot(a, b)", {{1, 2, 3}, {1, 1}}, 1.0), (Values{6}));
}

TEST(ExprProgram, IeeeResultsForDomainErrors) {
  EXPECT_TRUE(std::isinf(eval1("1/0")));
  EXPECT_TRUE(std::isnan(eval1("sqrt(-1)")));
  EXPECT_EQ(eval1("isnan(sqrt(-1))"), 1);
  EXPECT_EQ(eval1("isnan(sqrt(-1)) ? 0 : 1"), 0);
}

TEST(ExprProgram, ScalarAndVectorPathsAgree) {
  // A row of scalars runs on the double stack; the same values as vectors of one element each
  // element-wise must give the same numbers on the vector path (forced by a 2-vector in c).
  const std::string text = "a > b ? sigmoid(a - b) * 2^-1 : max(a, b, 3) + dot(a, b) - (1 || 0) + (6 & 3)";
  for (const Values& ab : {Values{1, 2}, Values{5, 2}, Values{-1, -1}}) {
    const double scalar = eval1(text, {{ab[0]}, {ab[1]}});
    const Values vec = eval(text + " + 0 * len(c)", {{ab[0]}, {ab[1]}, {1, 1}});
    ASSERT_EQ(vec.size(), 1u);
    EXPECT_DOUBLE_EQ(vec[0], scalar) << ab[0] << " " << ab[1];
  }
}

TEST(ExprProgram, UsesAndRandom) {
  ExprProgram p("a + rnd()", kNames);
  EXPECT_TRUE(p.uses(0));
  EXPECT_FALSE(p.uses(1));
  EXPECT_TRUE(p.uses_random());
  EXPECT_FALSE(ExprProgram("a + b", kNames).uses_random());
  // rnd() is in [0, 1) and a function of the stream's state: the same state, the same draws.
  const Values a = {0};
  const ExprArg args[3] = {{a.data(), 1}, {a.data(), 1}, {a.data(), 1}};
  ExprProgram::Scratch s;
  Values x, y, z;
  p.evaluate(args, &s, &x, 42);
  p.evaluate(args, &s, &y, 42);
  p.evaluate(args, &s, &z, 43);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  for (double v : {x[0], z[0]}) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

}  // namespace expr_program_test
}  // namespace tzrec::feature
