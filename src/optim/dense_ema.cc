#include "optim/dense_ema.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"

namespace tzrec::optim {

DenseEma::DenseEma(std::vector<std::pair<std::string, torch::Tensor>> named_params, double decay)
    : params_(std::move(named_params)), decay_(decay) {
  if (!(decay >= 0 && decay <= 1)) {
    throw ConfigError(fmt::format(
        "train_config.dense_optimizer.ema.decay: {} is not in [0, 1]; use e.g. decay: 0.999", decay));
  }
  torch::NoGradGuard no_grad;
  std::set<std::string> names;
  for (const auto& [name, p] : params_) {
    TORCH_CHECK(names.insert(name).second, "DenseEma: parameter ", name, " given twice");
    TORCH_CHECK(name != kNAveragedKey, "DenseEma: a parameter is called ", kNAveragedKey);
    shadows_.push_back(p.detach().clone());
  }
}

void DenseEma::update() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor p = params_[i].second.detach();
    if (n_averaged_ == 0) {
      shadows_[i].copy_(p);
    } else if (shadows_[i].is_floating_point() || shadows_[i].is_complex()) {
      shadows_[i].lerp_(p, 1.0 - decay_);  // torch._foreach_lerp_ in get_ema_multi_avg_fn
    } else {
      shadows_[i].copy_(shadows_[i] * decay_ + p * (1.0 - decay_));
    }
  }
  ++n_averaged_;
}

std::map<std::string, torch::Tensor> DenseEma::state_dict() const {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i) out.emplace(params_[i].first, shadows_[i]);
  out.emplace(kNAveragedKey, torch::tensor(n_averaged_, torch::kInt64));
  return out;
}

void DenseEma::load_state_dict(const std::map<std::string, torch::Tensor>& state) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < params_.size(); ++i) index.emplace(params_[i].first, i);
  for (const auto& [key, value] : state) {
    if (key == kNAveragedKey) continue;
    auto it = index.find(key);
    if (it == index.end()) {
      throw CheckpointError(fmt::format(
          "dense EMA state '{}' matches no dense parameter of this model; the checkpoint was written "
          "with a different model",
          key));
    }
    const torch::Tensor& p = params_[it->second].second;
    if (value.sizes() != p.sizes()) {
      throw CheckpointError(fmt::format("dense EMA state '{}' has shape [{}] in the checkpoint, expected [{}]",
                                        key, fmt::join(value.sizes(), ", "), fmt::join(p.sizes(), ", ")));
    }
  }
  auto count = state.find(kNAveragedKey);
  if (count == state.end() || count->second.numel() != 1) {
    throw CheckpointError(fmt::format("dense EMA state '{}' is missing from the checkpoint", kNAveragedKey));
  }
  for (const auto& [name, p] : params_) {
    if (state.count(name) == 0) {
      throw CheckpointError(fmt::format(
          "dense EMA state '{}' is missing from the checkpoint; it was written without "
          "dense_optimizer.ema or with a different model",
          name));
    }
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    shadows_[i].copy_(state.at(params_[i].first).to(shadows_[i].device(), shadows_[i].scalar_type()));
  }
  n_averaged_ = count->second.to(torch::kInt64).item<int64_t>();
}

void DenseEma::swap_with_params() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor p = params_[i].second.detach();
    torch::Tensor temporary = p.clone();
    p.copy_(shadows_[i]);
    shadows_[i].copy_(temporary);
  }
}

}  // namespace tzrec::optim
