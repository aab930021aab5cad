#include "loss/softmax_rows.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "base/simd_clones.h"

namespace tzrec::loss {
namespace {

constexpr int kLanes = 16;              // independent partial maxima / sums: one AVX-512 vector
constexpr float kMinArg = -87.0f;       // e^-87 = 1.6e-38, just above the smallest normal float
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;  // ln 2 = kLn2Hi + kLn2Lo, kLn2Hi exact in 9 bits
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kRound = 12582912.0f;   // 1.5 · 2^23: adding it rounds |v| < 2^22 to an integer

inline uint32_t float_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline float bits_float(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// e^x = 2^k · e^r with k = round(x · log2 e), r = x − k · ln 2 in [−ln2/2, ln2/2]; e^r by its
// Taylor polynomial to degree 6 (truncation below 2^-23 on that range), 2^k by writing the
// exponent bits (k in [−126, 0] for x in [−87, 0]: a normal float).
__attribute__((always_inline)) inline float exp_impl(float x) {
  const float xc = x < kMinArg ? kMinArg : x;  // NaN passes through (the comparison is false)
  const float t = xc * kLog2e + kRound;
  const float k = t - kRound;
  const uint32_t ki = float_bits(t) - float_bits(kRound);  // k mod 2^32 (unsigned: NaN's bits wrap)
  float r = xc - k * kLn2Hi;
  r = r - k * kLn2Lo;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = bits_float((ki + 127u) << 23);  // 2^k
  return x < kMinArg ? 0.0f : p * scale;
}

}  // namespace

float exp_nonpositive(float x) { return exp_impl(x); }

TZREC_SIMD_CLONES
float softmax_row(const float* x, int64_t n, float* out, float scale) {
  // Row maximum: kLanes running maxima, then their maximum. It skips NaN; a NaN entry makes its
  // exp, hence the sum and the whole row, NaN (as in torch).
  float lane[kLanes];
  for (int k = 0; k < kLanes; ++k) lane[k] = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] = x[i + k] > lane[k] ? x[i + k] : lane[k];
  }
  float m = lane[0];
  for (int k = 1; k < kLanes; ++k) m = lane[k] > m ? lane[k] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;

  // e^{x − m} into out (the row is in L1 now), then summed in kLanes partial sums.
  for (int64_t j = 0; j < n; ++j) out[j] = exp_impl(x[j] - m);
  for (int k = 0; k < kLanes; ++k) lane[k] = 0.0f;
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] += out[i + k];
  }
  float sum = 0.0f;
  for (int k = 0; k < kLanes; ++k) sum += lane[k];
  for (; i < n; ++i) sum += out[i];

  const float inv = scale / sum;
  for (int64_t j = 0; j < n; ++j) out[j] *= inv;
  return std::log(sum) + m;
}

}  // namespace tzrec::loss
