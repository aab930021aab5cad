// The built-in functions and constants of expr_feature's expression language
// (docs/tzrec-compatibility.md §5.10, ExprFeature; TorchEasyRec's docs/source/feature/feature.md,
// "ExprFeature"). No torch.
//
// Three kinds of functions:
//   element-wise  scalars in, one scalar out; applied element by element when an argument is a
//                 vector (scalars broadcast; vectors of different lengths are padded with
//                 fill_missing): rnd, isnan, sin ... sigmoid (one argument), roundp, mod (two),
//                 sphere_dist, haversine (four), min, max, sum, avg (one or more)
//   vector        one vector in, one scalar out (a scalar is a vector of one element): len,
//                 l2_norm, squared_norm, std_dev, pop_std_dev, variance, pop_variance,
//                 reduce_min / max / sum / mean / prod
//   vector pair   two vectors in (padded to the longer with fill_missing; a scalar broadcasts),
//                 one scalar out: dot, euclid_dist, corr
//
// Decisions where TorchEasyRec names a function without pinning it (its docs list pyfg's
// functions, muParser's built-ins plus its own): rint is muParser's floor(x + 0.5); round rounds
// half away from zero; roundp(x, p) = round(x * 10^p) / 10^p; mod is fmod (the sign of x);
// sign(0) = 0; log and ln are the natural logarithm; sphere_dist (spherical law of cosines) and
// haversine take degrees (lng1, lat1, lng2, lat2) and return kilometres on a sphere of radius
// 6371 km; l2_norm is the Euclidean norm sqrt(sum x^2) and squared_norm sum x^2; std_dev and
// variance divide by n, pop_std_dev and pop_variance by n - 1 (the docs' naming).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::feature {

enum class ExprFunctionKind : uint8_t { kElementwise, kVector, kVectorPair, kRandom };

// Element-wise function of `argc` scalars.
using ExprScalarFn = double (*)(const double* args, int argc);
// Vector function: x[0, n) -> scalar.
using ExprVectorFn = double (*)(const double* x, size_t n);
// Vector pair function: a and b of the same length n (already padded) -> scalar.
using ExprVectorPairFn = double (*)(const double* a, const double* b, size_t n);

struct ExprFunction {
  const char* name;
  ExprFunctionKind kind;
  int min_args;  // arguments: [min_args, max_args]; max_args -1: any number
  int max_args;
  ExprScalarFn scalar = nullptr;          // kElementwise
  ExprVectorFn vector = nullptr;          // kVector
  ExprVectorPairFn vector_pair = nullptr;  // kVectorPair
};

// The function called `name`, or nullptr.
const ExprFunction* find_expr_function(std::string_view name);
// All functions, in the docs' order (for hints and tests).
const std::vector<ExprFunction>& expr_functions();
// The built-in constants _pi and _e; false when `name` is not one.
bool find_expr_constant(std::string_view name, double* value);

// rnd(): the next number in [0, 1) of a splitmix64 stream whose state is *state.
double expr_random(uint64_t* state);

}  // namespace tzrec::feature
