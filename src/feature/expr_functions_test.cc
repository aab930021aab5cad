// The built-in functions of expr_feature, each called through a compiled expression. Expected
// values: TorchEasyRec's docs (docs/source/feature/feature.md, "ExprFeature": roundp(3.14159,2) =
// 3.14, mod(7,3) = 1, round half away from zero, trunc, floor, ceil, std_dev / variance dividing by
// n and pop_* by n - 1), muParser for rint (floor(x + 0.5)) and sign, and by hand or from the C
// library's definitions (values computed with Python's math module where noted).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "feature/expr_functions.h"
#include "feature/expr_program.h"

namespace tzrec::feature {
namespace expr_functions_test {

double eval1(const std::string& text) {
  ExprProgram p(text, {});
  ExprProgram::Scratch s;
  std::vector<double> out;
  p.evaluate(nullptr, &s, &out);
  EXPECT_EQ(out.size(), 1u) << text;
  return out.empty() ? std::nan("") : out[0];
}

const double kPi = 3.141592653589793;

TEST(ExprFunctions, TheDocumentedListIsComplete) {
  // TorchEasyRec's two tables (built-in functions, then vector functions), in order.
  const std::vector<std::string> documented = {
      "rnd",   "isnan",  "sin",         "cos",       "tan",   "asin",        "acos",         "atan",
      "sinh",  "cosh",   "tanh",        "asinh",     "acosh", "atanh",       "log2",         "log10",
      "log",   "ln",     "exp",         "sqrt",      "sign",  "abs",         "rint",         "floor",
      "ceil",  "trunc",  "round",       "roundp",    "mod",   "sigmoid",     "sphere_dist",  "haversine",
      "min",   "max",    "sum",         "avg",       "len",   "l2_norm",     "squared_norm", "dot",
      "euclid_dist", "corr", "std_dev", "pop_std_dev", "variance", "pop_variance", "reduce_min", "reduce_max",
      "reduce_sum", "reduce_mean", "reduce_prod"};
  std::vector<std::string> names;
  for (const ExprFunction& f : expr_functions()) names.push_back(f.name);
  EXPECT_EQ(names, documented);
  EXPECT_EQ(find_expr_function("cot"), nullptr);  // a muParser function TorchEasyRec does not list
}

TEST(ExprFunctions, Trigonometric) {
  EXPECT_DOUBLE_EQ(eval1("sin(_pi/2)"), 1);
  EXPECT_DOUBLE_EQ(eval1("cos(0)"), 1);
  EXPECT_DOUBLE_EQ(eval1("tan(_pi/4)"), 1);
  EXPECT_DOUBLE_EQ(eval1("asin(1)"), kPi / 2);
  EXPECT_DOUBLE_EQ(eval1("acos(1)"), 0);
  EXPECT_DOUBLE_EQ(eval1("atan(1)"), kPi / 4);
  // Python's math.sinh(1), cosh(1), tanh(1), asinh(1), acosh(2), atanh(0.5).
  EXPECT_DOUBLE_EQ(eval1("sinh(1)"), 1.1752011936438014);
  EXPECT_DOUBLE_EQ(eval1("cosh(1)"), 1.5430806348152437);
  EXPECT_DOUBLE_EQ(eval1("tanh(1)"), 0.7615941559557649);
  EXPECT_DOUBLE_EQ(eval1("asinh(1)"), 0.881373587019543);
  EXPECT_DOUBLE_EQ(eval1("acosh(2)"), 1.3169578969248166);
  EXPECT_DOUBLE_EQ(eval1("atanh(0.5)"), 0.5493061443340548);
}

TEST(ExprFunctions, LogarithmsAndPowers) {
  EXPECT_DOUBLE_EQ(eval1("log2(8)"), 3);
  EXPECT_DOUBLE_EQ(eval1("log10(1000)"), 3);
  EXPECT_DOUBLE_EQ(eval1("log(_e)"), 1);  // natural logarithm, as ln
  EXPECT_DOUBLE_EQ(eval1("ln(_e^2)"), 2);
  EXPECT_DOUBLE_EQ(eval1("exp(1)"), 2.718281828459045);
  EXPECT_DOUBLE_EQ(eval1("sqrt(16)"), 4);
  EXPECT_DOUBLE_EQ(eval1("sigmoid(0)"), 0.5);
  EXPECT_DOUBLE_EQ(eval1("sigmoid(2)"), 1 / (1 + std::exp(-2.0)));
}

TEST(ExprFunctions, SignsAndRounding) {
  EXPECT_EQ(eval1("isnan(0)"), 0);
  EXPECT_EQ(eval1("isnan(0/0)"), 1);
  EXPECT_EQ(eval1("sign(-3)"), -1);
  EXPECT_EQ(eval1("sign(0)"), 0);
  EXPECT_EQ(eval1("sign(2)"), 1);
  EXPECT_EQ(eval1("abs(-2.5)"), 2.5);
  EXPECT_EQ(eval1("rint(2.4)"), 2);
  EXPECT_EQ(eval1("rint(2.5)"), 3);   // muParser: floor(x + 0.5)
  EXPECT_EQ(eval1("rint(-2.5)"), -2);
  EXPECT_EQ(eval1("floor(-1.5)"), -2);
  EXPECT_EQ(eval1("ceil(-1.5)"), -1);
  EXPECT_EQ(eval1("trunc(-1.7)"), -1);
  EXPECT_EQ(eval1("trunc(1.7)"), 1);
  EXPECT_EQ(eval1("round(2.5)"), 3);  // half away from zero
  EXPECT_EQ(eval1("round(-2.5)"), -3);
  EXPECT_EQ(eval1("round(2.4)"), 2);
  EXPECT_DOUBLE_EQ(eval1("roundp(3.14159, 2)"), 3.14);  // the docs' example
  EXPECT_DOUBLE_EQ(eval1("roundp(2.5, 0)"), 3);
  EXPECT_EQ(eval1("mod(7, 3)"), 1);                     // the docs' example
  EXPECT_EQ(eval1("mod(-7, 3)"), -1);                   // fmod: the sign of x
  EXPECT_DOUBLE_EQ(eval1("mod(5.5, 2)"), 1.5);
}

TEST(ExprFunctions, VariadicFunctions) {
  EXPECT_EQ(eval1("min(3, 1, 2)"), 1);
  EXPECT_EQ(eval1("max(3, 1, 2)"), 3);
  EXPECT_EQ(eval1("sum(3, 1, 2)"), 6);
  EXPECT_EQ(eval1("avg(3, 1, 2)"), 2);
  EXPECT_EQ(eval1("min(5)"), 5);
  EXPECT_EQ(eval1("avg(1, 2)"), 1.5);
}

TEST(ExprFunctions, GpsDistancesInKilometres) {
  // One degree of latitude on a sphere of 6371 km: 6371 * pi / 180.
  EXPECT_DOUBLE_EQ(eval1("haversine(0, 0, 0, 1)"), 6371 * kPi / 180);
  EXPECT_NEAR(eval1("sphere_dist(0, 0, 0, 1)"), 6371 * kPi / 180, 1e-6);
  EXPECT_NEAR(eval1("haversine(0, 0, 90, 0)"), 6371 * kPi / 2, 1e-9);
  // Beijing (116.4074, 39.9042) to Shanghai (121.4737, 31.2304), Python's math module with the
  // same formulas: 1067.3101709271293 km.
  EXPECT_NEAR(eval1("haversine(116.4074, 39.9042, 121.4737, 31.2304)"), 1067.3101709271293, 1e-9);
  EXPECT_NEAR(eval1("sphere_dist(116.4074, 39.9042, 121.4737, 31.2304)"), 1067.3101709271293, 1e-6);
  EXPECT_EQ(eval1("haversine(10, 20, 10, 20)"), 0);
}

TEST(ExprFunctions, ConstantsAndRandomStream) {
  double v = 0;
  EXPECT_TRUE(find_expr_constant("_pi", &v));
  EXPECT_DOUBLE_EQ(v, kPi);
  EXPECT_TRUE(find_expr_constant("_e", &v));
  EXPECT_FALSE(find_expr_constant("pi", &v));
  uint64_t state = 7;
  std::set<double> seen;
  for (int i = 0; i < 1000; ++i) {
    const double r = expr_random(&state);
    ASSERT_GE(r, 0.0);
    ASSERT_LT(r, 1.0);
    seen.insert(r);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace expr_functions_test
}  // namespace tzrec::feature
