#include "embedding/fused_row_optimizer.h"

#include <algorithm>
#include <cmath>

#include "base/simd_clones.h"
#include "base/vector_sqrt.h"

namespace tzrec::embedding {
namespace {

// Element block of the loops that need a square root (taken by base/vector_sqrt.h over a block
// buffer).
constexpr int64_t kBlock = 64;

// Sum of x[d]^2 with 16 independent partial sums, so that the loop vectorises without -ffast-math.
inline float sum_squares(int64_t D, const float* x) {
  float acc[16] = {0};
  int64_t d = 0;
  for (; d + 16 <= D; d += 16) {
    for (int k = 0; k < 16; ++k) acc[k] += x[d + k] * x[d + k];
  }
  float s = 0;
  for (int k = 0; k < 16; ++k) s += acc[k];
  for (; d < D; ++d) s += x[d] * x[d];
  return s;
}

// a / b, or 0 when b is 0 (a zero row: FBGEMM would produce NaN).
inline float safe_ratio(float a, float b) { return b > 0 ? a / b : 0.0f; }

TZREC_SIMD_CLONES
void update_sgd(const RowUpdateScalars& s, int64_t D, float* __restrict w, const float* __restrict g) {
  const float lr = s.lr;
  for (int64_t d = 0; d < D; ++d) w[d] -= lr * g[d];
}

TZREC_SIMD_CLONES
void update_adagrad(const RowUpdateScalars& s, int64_t D, float* __restrict w,
                    const float* __restrict g, float* __restrict m1) {
  const float lr = s.lr, eps = s.eps;
  float root[kBlock];
  for (int64_t d0 = 0; d0 < D; d0 += kBlock) {
    const int64_t n = std::min(kBlock, D - d0);
    float* __restrict wb = w + d0;
    const float* __restrict gb = g + d0;
    float* __restrict mb = m1 + d0;
    for (int64_t k = 0; k < n; ++k) {
      const float m = mb[k] + gb[k] * gb[k];
      mb[k] = m;
      root[k] = m;
    }
    sqrt_inplace(n, root);
    for (int64_t k = 0; k < n; ++k) wb[k] -= lr * gb[k] / (root[k] + eps);
  }
}

TZREC_SIMD_CLONES
void update_rowwise_adagrad(const RowUpdateScalars& s, int64_t D, float* __restrict w,
                            float* __restrict g, float* __restrict m1) {
  const float wd = s.weight_decay;
  float sq;
  if (s.weight_decay_mode == WeightDecayMode::kL2) {
    float acc[16] = {0};
    int64_t d = 0;
    for (; d + 16 <= D; d += 16) {
      for (int k = 0; k < 16; ++k) {
        const float gd = g[d + k] + wd * w[d + k];
        acc[k] += gd * gd;
      }
    }
    sq = 0;
    for (int k = 0; k < 16; ++k) sq += acc[k];
    for (; d < D; ++d) {
      const float gd = g[d] + wd * w[d];
      sq += gd * gd;
    }
  } else {
    sq = sum_squares(D, g);
  }
  const float m = m1[0] + sq / static_cast<float>(D);
  m1[0] = m;
  const float mult = s.lr / (std::sqrt(m) + s.eps);
  float correction = 1.0f;
  if (s.weight_decay_mode == WeightDecayMode::kL2) correction = 1.0f - mult * wd;
  if (s.weight_decay_mode == WeightDecayMode::kDecouple) correction = 1.0f - s.lr * wd;
  for (int64_t d = 0; d < D; ++d) w[d] = correction * w[d] - mult * g[d];
}

// The Adam direction shared by adam and lamb: updates m1, m2 and writes
// r = (m1/bc1) / (sqrt(m2/bc2) + eps) + wd*w into g (scratch, no longer needed as the gradient).
TZREC_SIMD_CLONES
void adam_direction(const RowUpdateScalars& s, int64_t D, const float* __restrict w,
                    float* __restrict g, float* __restrict m1, float* __restrict m2) {
  const float b1 = s.beta1, b2 = s.beta2, eps = s.eps, wd = s.weight_decay;
  const float ibc1 = s.inv_bias_correction1, ibc2 = s.inv_bias_correction2;
  float root[kBlock];
  for (int64_t d0 = 0; d0 < D; d0 += kBlock) {
    const int64_t n = std::min(kBlock, D - d0);
    const float* __restrict wb = w + d0;
    float* __restrict gb = g + d0;
    float* __restrict mb1 = m1 + d0;
    float* __restrict mb2 = m2 + d0;
    for (int64_t k = 0; k < n; ++k) {
      const float m = b1 * mb1[k] + (1.0f - b1) * gb[k];
      const float v = b2 * mb2[k] + (1.0f - b2) * gb[k] * gb[k];
      mb1[k] = m;
      mb2[k] = v;
      root[k] = v * ibc2;
    }
    sqrt_inplace(n, root);
    for (int64_t k = 0; k < n; ++k) gb[k] = (mb1[k] * ibc1) / (root[k] + eps) + wd * wb[k];
  }
}

// The same for partial_rowwise_adam / _lamb, whose m2 is one value per row (mean of g^2).
TZREC_SIMD_CLONES
void partial_rowwise_adam_direction(const RowUpdateScalars& s, int64_t D, const float* __restrict w,
                                    float* __restrict g, float* __restrict m1,
                                    float* __restrict m2) {
  const float b1 = s.beta1, b2 = s.beta2, wd = s.weight_decay;
  const float v = b2 * m2[0] + (1.0f - b2) * (sum_squares(D, g) / static_cast<float>(D));
  m2[0] = v;
  const float inv_denom = 1.0f / (std::sqrt(v * s.inv_bias_correction2) + s.eps);
  const float ibc1 = s.inv_bias_correction1;
  for (int64_t d = 0; d < D; ++d) {
    const float m = b1 * m1[d] + (1.0f - b1) * g[d];
    m1[d] = m;
    g[d] = (m * ibc1) * inv_denom + wd * w[d];
  }
}

// Adam tail: w -= lr * r.
TZREC_SIMD_CLONES
void apply_step(float lr, int64_t D, float* __restrict w, const float* __restrict r) {
  for (int64_t d = 0; d < D; ++d) w[d] -= lr * r[d];
}

// LAMB tail: w -= lr * |w|/|r| * r (trust ratio from the pre-update w).
TZREC_SIMD_CLONES
void apply_trust_ratio(float lr, int64_t D, float* __restrict w, const float* __restrict r) {
  const float ratio = safe_ratio(std::sqrt(sum_squares(D, w)), std::sqrt(sum_squares(D, r)));
  const float step = lr * ratio;
  for (int64_t d = 0; d < D; ++d) w[d] -= step * r[d];
}

TZREC_SIMD_CLONES
void update_lars_sgd(const RowUpdateScalars& s, int64_t D, float* __restrict w,
                     const float* __restrict g, float* __restrict m1) {
  const float wd = s.weight_decay, mom = s.momentum;
  const float w_norm = std::sqrt(sum_squares(D, w));
  const float g_norm = std::sqrt(sum_squares(D, g));
  const float a = s.lr * s.eta * safe_ratio(w_norm, g_norm + wd * w_norm);
  for (int64_t d = 0; d < D; ++d) {
    const float m = mom * m1[d] + a * (g[d] + wd * w[d]);
    m1[d] = m;
    w[d] -= m;
  }
}

TZREC_SIMD_CLONES
void update_adadelta(const RowUpdateScalars& s, int64_t D, float* __restrict w, const float* __restrict g,
                     float* __restrict m1, float* __restrict m2) {
  const float rho = s.beta1, eps = s.eps, wd = s.weight_decay, lr = s.lr;
  for (int64_t d = 0; d < D; ++d) {
    const float gd = g[d] + wd * w[d];
    const float sq = rho * m1[d] + (1.0f - rho) * gd * gd;
    m1[d] = sq;
    const float delta = std::sqrt(m2[d] + eps) / std::sqrt(sq + eps) * gd;
    m2[d] = rho * m2[d] + (1.0f - rho) * delta * delta;
    w[d] -= lr * delta;
  }
}

TZREC_SIMD_CLONES
void update_rmsprop(const RowUpdateScalars& s, int64_t D, float* __restrict w, const float* __restrict g,
                    float* __restrict m1) {
  const float alpha = s.beta1, eps = s.eps, wd = s.weight_decay, lr = s.lr;
  for (int64_t d = 0; d < D; ++d) {
    const float gd = g[d] + wd * w[d];
    const float sq = alpha * m1[d] + (1.0f - alpha) * gd * gd;
    m1[d] = sq;
    w[d] -= lr * gd / (std::sqrt(sq) + eps);
  }
}

}  // namespace

OptimizerStateLayout state_layout(FusedOptimizerKind kind) {
  using K = FusedOptimizerKind;
  using W = StateWidth;
  switch (kind) {
    case K::kSgd: return {W::kNone, W::kNone, false};
    case K::kAdagrad: return {W::kFull, W::kNone, false};
    case K::kRowwiseAdagrad: return {W::kRow, W::kNone, false};
    case K::kAdam: return {W::kFull, W::kFull, true};
    case K::kLamb: return {W::kFull, W::kFull, true};
    case K::kPartialRowwiseAdam: return {W::kFull, W::kRow, true};
    case K::kPartialRowwiseLamb: return {W::kFull, W::kRow, true};
    case K::kLarsSgd: return {W::kFull, W::kNone, false};
    case K::kAdadelta: return {W::kFull, W::kFull, false};
    case K::kRmsprop: return {W::kFull, W::kNone, false};
  }
  return {};
}

std::string optimizer_name(FusedOptimizerKind kind) {
  using K = FusedOptimizerKind;
  switch (kind) {
    case K::kSgd: return "sgd";
    case K::kAdagrad: return "adagrad";
    case K::kRowwiseAdagrad: return "rowwise_adagrad";
    case K::kAdam: return "adam";
    case K::kLamb: return "lamb";
    case K::kPartialRowwiseAdam: return "partial_rowwise_adam";
    case K::kPartialRowwiseLamb: return "partial_rowwise_lamb";
    case K::kLarsSgd: return "lars_sgd";
    case K::kAdadelta: return "adadelta";
    case K::kRmsprop: return "rmsprop";
  }
  return "unknown";
}

double initial_momentum1(const FusedOptimizerOptions& options) {
  const bool adagrad = options.kind == FusedOptimizerKind::kAdagrad ||
                       options.kind == FusedOptimizerKind::kRowwiseAdagrad;
  return adagrad ? options.initial_accumulator_value : 0.0;
}

RowUpdateScalars make_row_update_scalars(const FusedOptimizerOptions& options, double lr,
                                         int64_t step) {
  RowUpdateScalars s;
  s.kind = options.kind;
  s.lr = static_cast<float>(lr);
  s.eps = static_cast<float>(options.eps);
  s.beta1 = static_cast<float>(options.beta1);
  s.beta2 = static_cast<float>(options.beta2);
  s.weight_decay = static_cast<float>(options.weight_decay);
  s.momentum = static_cast<float>(options.momentum);
  s.eta = static_cast<float>(options.eta);
  s.weight_decay_mode = options.weight_decay_mode;
  if (state_layout(options.kind).has_step) {
    const double t = static_cast<double>(step < 1 ? 1 : step);
    s.inv_bias_correction1 = static_cast<float>(1.0 / (1.0 - std::pow(options.beta1, t)));
    s.inv_bias_correction2 = static_cast<float>(1.0 / (1.0 - std::pow(options.beta2, t)));
  }
  return s;
}

void apply_row_update(const RowUpdateScalars& s, int64_t D, float* w, float* g, float* m1, float* m2) {
  using K = FusedOptimizerKind;
  switch (s.kind) {
    case K::kSgd: update_sgd(s, D, w, g); return;
    case K::kAdagrad: update_adagrad(s, D, w, g, m1); return;
    case K::kRowwiseAdagrad: update_rowwise_adagrad(s, D, w, g, m1); return;
    case K::kAdam:
      adam_direction(s, D, w, g, m1, m2);
      apply_step(s.lr, D, w, g);
      return;
    case K::kLamb:
      adam_direction(s, D, w, g, m1, m2);
      apply_trust_ratio(s.lr, D, w, g);
      return;
    case K::kPartialRowwiseAdam:
      partial_rowwise_adam_direction(s, D, w, g, m1, m2);
      apply_step(s.lr, D, w, g);
      return;
    case K::kPartialRowwiseLamb:
      partial_rowwise_adam_direction(s, D, w, g, m1, m2);
      apply_trust_ratio(s.lr, D, w, g);
      return;
    case K::kLarsSgd: update_lars_sgd(s, D, w, g, m1); return;
    case K::kAdadelta: update_adadelta(s, D, w, g, m1, m2); return;
    case K::kRmsprop: update_rmsprop(s, D, w, g, m1); return;
  }
}

}  // namespace tzrec::embedding
