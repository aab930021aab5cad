#include "nn/task_tower.h"

#include "nn/fp16_linear.h"

namespace tzrec::nn {

TaskTowerImpl::TaskTowerImpl(int64_t in_features, int64_t num_class, const std::optional<MLPOptions>& mlp,
                             const std::string& config_path) {
  int64_t linear_in = in_features;
  if (mlp) {
    tower_mlp_ = register_module("tower_mlp", MLP(in_features, *mlp, config_path + ".mlp"));
    linear_in = tower_mlp_->output_dim();
  }
  linear_ = register_module("linear", torch::nn::Linear(linear_in, num_class));
}

torch::Tensor TaskTowerImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = tower_mlp_ ? tower_mlp_->forward(x) : x;
  return linear_forward(h, linear_->weight, linear_->bias);
}

}  // namespace tzrec::nn
