#include "optim/grad_scaler.h"

#include <cmath>

#include "base/error.h"

namespace tzrec::optim {
namespace {

constexpr const char* kPath = "train_config.grad_scaler";

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  if (!(options_.init_scale > 0) || !std::isfinite(static_cast<float>(options_.init_scale))) {
    throw ConfigError(fmt::format("{}.init_scale: must be > 0 and finite in float32, got {} (the default is 65536)",
                                  kPath, options_.init_scale));
  }
  if (!(options_.growth_factor > 1) || !std::isfinite(options_.growth_factor)) {
    throw ConfigError(fmt::format("{}.growth_factor: must be > 1 and finite, got {} (the default is 2)", kPath,
                                  options_.growth_factor));
  }
  if (!(options_.backoff_factor > 0 && options_.backoff_factor < 1)) {
    throw ConfigError(fmt::format("{}.backoff_factor: must be in (0, 1), got {} (the default is 0.5)", kPath,
                                  options_.backoff_factor));
  }
  if (options_.growth_interval < 1) {
    throw ConfigError(fmt::format("{}.growth_interval: must be >= 1, got {} (the default is 2000)", kPath,
                                  options_.growth_interval));
  }
  scale_ = static_cast<float>(options_.init_scale);
}

torch::Tensor GradScaler::scale(const torch::Tensor& loss) const {
  // torch multiplies by its float32 scale tensor.
  return loss * torch::tensor(scale_, loss.options().dtype(torch::kFloat32));
}

bool GradScaler::unscale(const std::vector<torch::Tensor>& params) const {
  // torch: inv_scale = scale.double().reciprocal().float().
  const float inv_scale = static_cast<float>(1.0 / static_cast<double>(scale_));
  torch::NoGradGuard no_grad;
  bool found_inf = false;
  for (const torch::Tensor& p : params) {
    torch::Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!found_inf && !torch::isfinite(g).all().item<bool>()) found_inf = true;
    g.mul_(inv_scale);
  }
  return found_inf;
}

void GradScaler::update(bool found_inf) {
  // torch's _amp_update_scale_: new scale computed in double from the float32 scale, stored float32.
  if (found_inf) {
    scale_ = static_cast<float>(static_cast<double>(scale_) * options_.backoff_factor);
    growth_tracker_ = 0;
    return;
  }
  const int64_t successful = growth_tracker_ + 1;
  // torch tests ==; >= also ends the count of a tracker restored from a longer growth_interval.
  if (successful >= options_.growth_interval) {
    const float grown = static_cast<float>(static_cast<double>(scale_) * options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  } else {
    growth_tracker_ = successful;
  }
}

std::map<std::string, torch::Tensor> GradScaler::state_dict() const {
  return {{kScaleKey, torch::tensor(scale_, torch::kFloat32)},
          {kGrowthTrackerKey, torch::tensor(growth_tracker_, torch::kInt64)}};
}

void GradScaler::load_state_dict(const std::map<std::string, torch::Tensor>& state) {
  auto get = [&](const char* key) {
    auto it = state.find(key);
    if (it == state.end() || !it->second.defined() || it->second.numel() != 1) {
      throw CheckpointError(fmt::format("grad scaler state '{}' is {} in the checkpoint; expected one value", key,
                                        it == state.end() ? "missing" : "malformed"));
    }
    return it->second;
  };
  const float scale = get(kScaleKey).to(torch::kFloat32).item<float>();
  const int64_t tracker = get(kGrowthTrackerKey).to(torch::kInt64).item<int64_t>();
  if (!(scale > 0) || !std::isfinite(scale)) {
    throw CheckpointError(fmt::format("grad scaler state '{}' is {}; a loss scale must be finite and > 0",
                                      kScaleKey, scale));
  }
  if (tracker < 0) {
    throw CheckpointError(fmt::format("grad scaler state '{}' is {}; it counts steps and must be >= 0",
                                      kGrowthTrackerKey, tracker));
  }
  scale_ = scale;
  growth_tracker_ = tracker;
}

}  // namespace tzrec::optim
