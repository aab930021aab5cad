// Ranks for the benchmarks' skewed id batches (header-only, no torch): uniform, or Zipf-like.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace tzrec::bench {

// Ranks in [0, n): uniform (s == 0) or Zipf-like with exponent s (continuous bounded Pareto
// inverse, P(r) ∝ (r + 1)^-s, s != 1).
struct RankSampler {
  int64_t n;
  double s;
  double a = 0;
  explicit RankSampler(int64_t n_, double s_) : n(n_), s(s_) {
    if (s > 0) a = std::pow(static_cast<double>(n), 1.0 - s) - 1.0;
  }
  int64_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    if (s <= 0) return std::min<int64_t>(n - 1, static_cast<int64_t>(u * static_cast<double>(n)));
    const double x = std::pow(a * u + 1.0, 1.0 / (1.0 - s));
    return std::clamp<int64_t>(static_cast<int64_t>(x) - 1, 0, n - 1);
  }
};

}  // namespace tzrec::bench
