#include "feature/expr_functions.h"

#include <algorithm>
#include <cmath>

#include "base/stable_hash.h"

namespace tzrec::feature {
namespace expr_fn {

constexpr double kPi = 3.141592653589793238462643;
constexpr double kE = 2.718281828459045235360287;
constexpr double kEarthRadiusKm = 6371.0;
constexpr double kDegree = kPi / 180.0;

double round_half_away(double x) { return std::round(x); }

double f_isnan(const double* a, int) { return std::isnan(a[0]) ? 1.0 : 0.0; }
double f_sin(const double* a, int) { return std::sin(a[0]); }
double f_cos(const double* a, int) { return std::cos(a[0]); }
double f_tan(const double* a, int) { return std::tan(a[0]); }
double f_asin(const double* a, int) { return std::asin(a[0]); }
double f_acos(const double* a, int) { return std::acos(a[0]); }
double f_atan(const double* a, int) { return std::atan(a[0]); }
double f_sinh(const double* a, int) { return std::sinh(a[0]); }
double f_cosh(const double* a, int) { return std::cosh(a[0]); }
double f_tanh(const double* a, int) { return std::tanh(a[0]); }
double f_asinh(const double* a, int) { return std::asinh(a[0]); }
double f_acosh(const double* a, int) { return std::acosh(a[0]); }
double f_atanh(const double* a, int) { return std::atanh(a[0]); }
double f_log2(const double* a, int) { return std::log2(a[0]); }
double f_log10(const double* a, int) { return std::log10(a[0]); }
double f_log(const double* a, int) { return std::log(a[0]); }
double f_exp(const double* a, int) { return std::exp(a[0]); }
double f_sqrt(const double* a, int) { return std::sqrt(a[0]); }
double f_sign(const double* a, int) { return a[0] < 0 ? -1.0 : (a[0] > 0 ? 1.0 : 0.0); }
double f_abs(const double* a, int) { return std::fabs(a[0]); }
double f_rint(const double* a, int) { return std::floor(a[0] + 0.5); }  // muParser's rint
double f_floor(const double* a, int) { return std::floor(a[0]); }
double f_ceil(const double* a, int) { return std::ceil(a[0]); }
double f_trunc(const double* a, int) { return std::trunc(a[0]); }
double f_round(const double* a, int) { return round_half_away(a[0]); }
double f_roundp(const double* a, int) {
  const double scale = std::pow(10.0, a[1]);
  return round_half_away(a[0] * scale) / scale;
}
double f_mod(const double* a, int) { return std::fmod(a[0], a[1]); }
double f_sigmoid(const double* a, int) { return 1.0 / (1.0 + std::exp(-a[0])); }

// Great-circle distances between (lng1, lat1) and (lng2, lat2), in degrees.
double f_sphere_dist(const double* a, int) {
  const double lat1 = a[1] * kDegree, lat2 = a[3] * kDegree, dlng = (a[2] - a[0]) * kDegree;
  const double c = std::sin(lat1) * std::sin(lat2) + std::cos(lat1) * std::cos(lat2) * std::cos(dlng);
  return kEarthRadiusKm * std::acos(std::clamp(c, -1.0, 1.0));
}
double f_haversine(const double* a, int) {
  const double lat1 = a[1] * kDegree, lat2 = a[3] * kDegree;
  const double s_lat = std::sin((lat2 - lat1) / 2), s_lng = std::sin((a[2] - a[0]) * kDegree / 2);
  const double h = s_lat * s_lat + std::cos(lat1) * std::cos(lat2) * s_lng * s_lng;
  return 2 * kEarthRadiusKm * std::asin(std::min(1.0, std::sqrt(h)));
}

double f_min(const double* a, int n) { return *std::min_element(a, a + n); }
double f_max(const double* a, int n) { return *std::max_element(a, a + n); }
double f_sum(const double* a, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i];
  return s;
}
double f_avg(const double* a, int n) { return f_sum(a, n) / n; }

double mean(const double* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s / static_cast<double>(n);
}
double squared_deviations(const double* x, size_t n) {
  const double m = mean(x, n);
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += (x[i] - m) * (x[i] - m);
  return s;
}

double v_len(const double*, size_t n) { return static_cast<double>(n); }
double v_squared_norm(const double* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i] * x[i];
  return s;
}
double v_l2_norm(const double* x, size_t n) { return std::sqrt(v_squared_norm(x, n)); }
double v_variance(const double* x, size_t n) { return squared_deviations(x, n) / static_cast<double>(n); }
double v_pop_variance(const double* x, size_t n) { return squared_deviations(x, n) / static_cast<double>(n - 1); }
double v_std_dev(const double* x, size_t n) { return std::sqrt(v_variance(x, n)); }
double v_pop_std_dev(const double* x, size_t n) { return std::sqrt(v_pop_variance(x, n)); }
double v_reduce_min(const double* x, size_t n) { return *std::min_element(x, x + n); }
double v_reduce_max(const double* x, size_t n) { return *std::max_element(x, x + n); }
double v_reduce_sum(const double* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
double v_reduce_mean(const double* x, size_t n) { return mean(x, n); }
double v_reduce_prod(const double* x, size_t n) {
  double p = 1;
  for (size_t i = 0; i < n; ++i) p *= x[i];
  return p;
}

double p_dot(const double* a, const double* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
double p_euclid_dist(const double* a, const double* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}
// Pearson's correlation coefficient.
double p_corr(const double* a, const double* b, size_t n) {
  const double ma = mean(a, n), mb = mean(b, n);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

using K = ExprFunctionKind;

ExprFunction elementwise(const char* name, int min_args, int max_args, ExprScalarFn fn) {
  return ExprFunction{name, K::kElementwise, min_args, max_args, fn, nullptr, nullptr};
}
ExprFunction vector(const char* name, ExprVectorFn fn) { return ExprFunction{name, K::kVector, 1, 1, nullptr, fn, nullptr}; }
ExprFunction vector_pair(const char* name, ExprVectorPairFn fn) {
  return ExprFunction{name, K::kVectorPair, 2, 2, nullptr, nullptr, fn};
}

}  // namespace expr_fn

const std::vector<ExprFunction>& expr_functions() {
  using namespace expr_fn;
  static const std::vector<ExprFunction> functions = {
      ExprFunction{"rnd", K::kRandom, 0, 0, nullptr, nullptr, nullptr},
      elementwise("isnan", 1, 1, f_isnan),
      elementwise("sin", 1, 1, f_sin),
      elementwise("cos", 1, 1, f_cos),
      elementwise("tan", 1, 1, f_tan),
      elementwise("asin", 1, 1, f_asin),
      elementwise("acos", 1, 1, f_acos),
      elementwise("atan", 1, 1, f_atan),
      elementwise("sinh", 1, 1, f_sinh),
      elementwise("cosh", 1, 1, f_cosh),
      elementwise("tanh", 1, 1, f_tanh),
      elementwise("asinh", 1, 1, f_asinh),
      elementwise("acosh", 1, 1, f_acosh),
      elementwise("atanh", 1, 1, f_atanh),
      elementwise("log2", 1, 1, f_log2),
      elementwise("log10", 1, 1, f_log10),
      elementwise("log", 1, 1, f_log),
      elementwise("ln", 1, 1, f_log),
      elementwise("exp", 1, 1, f_exp),
      elementwise("sqrt", 1, 1, f_sqrt),
      elementwise("sign", 1, 1, f_sign),
      elementwise("abs", 1, 1, f_abs),
      elementwise("rint", 1, 1, f_rint),
      elementwise("floor", 1, 1, f_floor),
      elementwise("ceil", 1, 1, f_ceil),
      elementwise("trunc", 1, 1, f_trunc),
      elementwise("round", 1, 1, f_round),
      elementwise("roundp", 2, 2, f_roundp),
      elementwise("mod", 2, 2, f_mod),
      elementwise("sigmoid", 1, 1, f_sigmoid),
      elementwise("sphere_dist", 4, 4, f_sphere_dist),
      elementwise("haversine", 4, 4, f_haversine),
      elementwise("min", 1, -1, f_min),
      elementwise("max", 1, -1, f_max),
      elementwise("sum", 1, -1, f_sum),
      elementwise("avg", 1, -1, f_avg),
      vector("len", v_len),
      vector("l2_norm", v_l2_norm),
      vector("squared_norm", v_squared_norm),
      vector_pair("dot", p_dot),
      vector_pair("euclid_dist", p_euclid_dist),
      vector_pair("corr", p_corr),
      vector("std_dev", v_std_dev),
      vector("pop_std_dev", v_pop_std_dev),
      vector("variance", v_variance),
      vector("pop_variance", v_pop_variance),
      vector("reduce_min", v_reduce_min),
      vector("reduce_max", v_reduce_max),
      vector("reduce_sum", v_reduce_sum),
      vector("reduce_mean", v_reduce_mean),
      vector("reduce_prod", v_reduce_prod),
  };
  return functions;
}

const ExprFunction* find_expr_function(std::string_view name) {
  for (const ExprFunction& f : expr_functions()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

bool find_expr_constant(std::string_view name, double* value) {
  if (name == "_pi") {
    *value = expr_fn::kPi;
    return true;
  }
  if (name == "_e") {
    *value = expr_fn::kE;
    return true;
  }
  return false;
}

double expr_random(uint64_t* state) {
  const uint64_t z = splitmix64(*state);
  *state += kGolden64;
  return unit_from_bits(z);
}

}  // namespace tzrec::feature
