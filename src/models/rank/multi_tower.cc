#include "models/rank/multi_tower.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

MultiTower::MultiTower(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                       std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::MultiTower& cfg = model_config_.multi_tower();
  init_input(features);
  if (cfg.towers_size() == 0) {
    throw ConfigError("model_config.multi_tower.towers: needs at least one tower");
  }
  towers_ = GroupTowers(*this, embedding_group_, cfg.towers(), "model_config.multi_tower.towers");
  const int64_t total_tower_dim = towers_.output_dim();
  int64_t final_dim = total_tower_dim;
  if (cfg.has_final()) {
    final_mlp_ = register_module("final_mlp", nn::MLP(total_tower_dim, to_mlp_options(cfg.final()),
                                                      "model_config.multi_tower.final"));
    final_dim = final_mlp_->output_dim();
  }
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_dim, num_class_));
}

TensorMap MultiTower::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor y = torch::cat(towers_.forward(grouped), -1);  // [B, Σ H_i]
  if (final_mlp_) y = final_mlp_->forward(y);
  // output_mlp through nn::linear_forward (follows the mixed-precision mode).
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
