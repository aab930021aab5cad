#include "nn/fusion_mtl_tower.h"

namespace tzrec::nn {

FusionMTLTowerImpl::FusionMTLTowerImpl(int64_t in_features, const std::optional<MLPOptions>& mlp,
                                       std::vector<FusionTask> tasks, const std::string& config_path)
    : tasks_(std::move(tasks)) {
  int64_t linear_in = in_features;
  if (mlp.has_value()) {
    tower_mlp_ = register_module("tower_mlp", MLP(in_features, *mlp, config_path + ".mlp"));
    linear_in = tower_mlp_->output_dim();
  }
  int64_t out = 0;
  for (const FusionTask& t : tasks_) out += t.num_class;
  linear_ = register_module("linear", torch::nn::Linear(linear_in, out));
  torch::NoGradGuard no_grad;
  for (const auto& m : modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::LinearImpl>()) {
      torch::nn::init::xavier_uniform_(linear->weight);
      if (linear->bias.defined()) linear->bias.zero_();
    }
  }
}

std::map<std::string, torch::Tensor> FusionMTLTowerImpl::forward(const torch::Tensor& user, const torch::Tensor& item) {
  auto features = user * item;
  if (tower_mlp_) features = tower_mlp_->forward(features);
  auto out = linear_->forward(features);
  std::map<std::string, torch::Tensor> result;
  int64_t start = 0;
  for (const FusionTask& t : tasks_) {
    result[t.name] = out.slice(1, start, start + t.num_class);
    start += t.num_class;
  }
  return result;
}

}  // namespace tzrec::nn
