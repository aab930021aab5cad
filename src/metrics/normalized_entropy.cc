#include "metrics/normalized_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

NormalizedEntropy::NormalizedEntropy(double eta) : eta_(eta) {
  if (!(eta >= 0.0 && eta < 0.5)) {
    throw ConfigError(fmt::format("normalized_entropy.eta: must be in [0, 0.5), got {}", eta));
  }
}

void NormalizedEntropy::update(const torch::Tensor& probs, const torch::Tensor& labels) {
  TORCH_CHECK(!synced_, "normalized_entropy: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(probs.sizes() == labels.sizes(), "normalized_entropy: probs ", probs.sizes(),
              " do not match labels ", labels.sizes());
  torch::Tensor p = probs.detach().to(torch::kCPU, torch::kFloat64).reshape({-1});
  torch::Tensor y = labels.detach().to(torch::kCPU, torch::kFloat64).reshape({-1});
  if (p.numel() == 0) return;
  if (!((p >= 0) & (p <= 1)).all().item<bool>()) {
    throw DataError("normalized_entropy: probabilities must be in [0, 1] (and not NaN)");
  }
  if (!((y >= 0) & (y <= 1)).all().item<bool>()) throw DataError("normalized_entropy: labels must be in [0, 1]");
  // [B] per-sample BCE with torch's log clamp at -100.
  torch::Tensor bce = -(y * torch::clamp_min(torch::log(p), -100.0) +
                        (1.0 - y) * torch::clamp_min(torch::log1p(-p), -100.0));
  sum_bce_ += bce.sum().item<double>();
  sum_label_ += y.sum().item<double>();
  count_ += p.numel();
}

void NormalizedEntropy::merge(const NormalizedEntropy& other) {
  TORCH_CHECK(!synced_, "normalized_entropy: merge() after sync(); call reset() before adding samples again");
  sum_bce_ += other.sum_bce_;
  sum_label_ += other.sum_label_;
  count_ += other.count_;
}

void NormalizedEntropy::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<double> state = {sum_bce_, sum_label_, static_cast<double>(count_)};
  detail::sum_across_ranks(pg, state, "normalized_entropy state");
  sum_bce_ = state[0];
  sum_label_ = state[1];
  count_ = static_cast<int64_t>(state[2]);
}

double NormalizedEntropy::compute() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(count_);
  const double base = std::clamp(sum_label_ / n, eta_, 1.0 - eta_);
  const double entropy = -(sum_label_ * std::log(base) + (n - sum_label_) * std::log1p(-base));
  return sum_bce_ / entropy;
}

void NormalizedEntropy::reset() {
  synced_ = false;
  sum_bce_ = 0.0;
  sum_label_ = 0.0;
  count_ = 0;
}

}  // namespace tzrec::metrics
