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
  towers_ = register_module("towers", torch::nn::ModuleDict());
  int64_t total_tower_dim = 0;
  for (int i = 0; i < cfg.towers_size(); ++i) {
    const protos::Tower& tower = cfg.towers(i);
    const std::string path = fmt::format("model_config.multi_tower.towers[{}]", i);
    const std::string& group = tower.input();
    if (!embedding_group_->has_group(group)) {
      throw ConfigError(fmt::format("{}.input: unknown feature group '{}'", path, group));
    }
    if (towers_->contains(group)) {
      throw ConfigError(fmt::format("{}.input: group '{}' already has a tower", path, group));
    }
    if (!tower.has_mlp()) throw ConfigError(fmt::format("{}.mlp: required", path));
    nn::MLP mlp(embedding_group_->group_total_dim(group), to_mlp_options(tower.mlp()), path + ".mlp");
    using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
    towers_->update(std::vector<Entry>{{group, mlp.ptr()}});
    tower_mlps_.emplace_back(group, mlp);
    total_tower_dim += mlp->output_dim();
  }
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
  std::vector<torch::Tensor> outputs;
  outputs.reserve(tower_mlps_.size());
  for (auto& [group, mlp] : tower_mlps_) outputs.push_back(mlp->forward(grouped.at(group)));  // [B, H_i]
  torch::Tensor y = torch::cat(outputs, -1);  // [B, Σ H_i]
  if (final_mlp_) y = final_mlp_->forward(y);
  // output_mlp through nn::linear_forward (follows the mixed-precision mode).
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
