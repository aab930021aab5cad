#include "datagen/hidden_model.h"

#include <algorithm>
#include <cmath>

namespace tzrec::datagen {

namespace {

constexpr uint64_t kSaltLabel = 0x1abe1ed5eed00001ULL;
constexpr double kSignal = 2.0;
constexpr double kPositiveRate = 0.3;
constexpr double kFloatNoise = 0.3;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

HiddenModel::HiddenModel(const ColumnPlan& plan, uint64_t seed) : plan_(&plan) {
  const size_t n = plan.columns.size();
  scores_.resize(n);
  bias_.assign(n, 0.0);
  for (size_t c = 0; c < n; ++c) {
    const ColumnSpec& label = plan.columns[c];
    if (label.role != Role::kLabel) continue;
    const int outputs = label.label_kind == LabelKind::kClass ? std::max(label.num_class, 2) : 1;
    for (int k = 0; k < outputs; ++k) {
      Score s;
      s.weights.assign(n, std::vector<double>(kHiddenDim, 0.0));
      for (size_t i = 0; i < n; ++i) {
        if (plan.columns[i].role != Role::kInput) continue;
        const uint64_t h = mix(mix(seed, kSaltLabel, fnv1a64(label.name)), k, fnv1a64(plan.columns[i].name));
        for (int d = 0; d < kHiddenDim; ++d) s.weights[i][d] = normal_from(mix(h, d));
      }
      scores_[c].push_back(std::move(s));
    }
  }
}

double HiddenModel::raw(const Score& s, const std::vector<Contribution>& c) const {
  double v = 0.0;
  for (size_t i = 0; i < c.size(); ++i) {
    const auto& w = s.weights[i];
    for (int d = 0; d < kHiddenDim; ++d) v += w[d] * c[i][d];
  }
  return v;
}

void HiddenModel::calibrate(const std::vector<std::vector<Contribution>>& samples) {
  if (samples.empty()) return;
  for (size_t c = 0; c < scores_.size(); ++c) {
    for (auto& s : scores_[c]) {
      double sum = 0.0;
      double sum2 = 0.0;
      for (const auto& row : samples) {
        const double v = raw(s, row);
        sum += v;
        sum2 += v * v;
      }
      const double n = static_cast<double>(samples.size());
      s.mean = sum / n;
      const double var = std::max(sum2 / n - s.mean * s.mean, 0.0);
      s.scale = var > 1e-12 ? 1.0 / std::sqrt(var) : 1.0;
    }
    const ColumnSpec& label = plan_->columns[c];
    if (label.role != Role::kLabel || label.label_kind != LabelKind::kBinary) continue;
    // mean(sigmoid(kSignal * z + b)) increases with b: bisection to the target rate.
    std::vector<double> z;
    z.reserve(samples.size());
    for (const auto& row : samples) z.push_back((raw(scores_[c][0], row) - scores_[c][0].mean) * scores_[c][0].scale);
    double lo = -20.0;
    double hi = 20.0;
    for (int it = 0; it < 50; ++it) {
      const double mid = 0.5 * (lo + hi);
      double mean = 0.0;
      for (double v : z) mean += sigmoid(kSignal * v + mid);
      mean /= static_cast<double>(z.size());
      (mean < kPositiveRate ? lo : hi) = mid;
    }
    bias_[c] = 0.5 * (lo + hi);
  }
}

double HiddenModel::label(int column, const std::vector<Contribution>& contributions, Rng& rng) const {
  const ColumnSpec& spec = plan_->columns[column];
  const auto& scores = scores_[column];
  auto z = [&](const Score& s) { return (raw(s, contributions) - s.mean) * s.scale; };
  switch (spec.label_kind) {
    case LabelKind::kBinary:
      return rng.unit() < sigmoid(kSignal * z(scores[0]) + bias_[column]) ? 1.0 : 0.0;
    case LabelKind::kFloat:
      return z(scores[0]) + kFloatNoise * rng.normal();
    case LabelKind::kClass: {
      int best = 0;
      double best_value = -1e300;
      for (size_t k = 0; k < scores.size(); ++k) {
        const double gumbel = -std::log(-std::log(rng.unit()));
        const double v = kSignal * z(scores[k]) + gumbel;
        if (v > best_value) {
          best_value = v;
          best = static_cast<int>(k);
        }
      }
      return best;
    }
  }
  return 0.0;
}

}  // namespace tzrec::datagen
