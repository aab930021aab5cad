#include "models/multi_task/mmoe.h"

#include <optional>

#include "base/error.h"
#include "models/config_convert.h"

namespace tzrec::models {

MMoE::MMoE(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::MMoE& cfg = model_config_.mmoe();
  const std::string path = "model_config.mmoe";
  init_input(features);
  group_ = first_group("MMoE");
  if (!cfg.has_expert_mlp()) throw ConfigError(path + ".expert_mlp: required");
  std::optional<nn::MLPOptions> gate;
  if (cfg.has_gate_mlp()) gate = to_mlp_options(cfg.gate_mlp());
  mmoe_ = register_module("mmoe", nn::MMoE(embedding_group_->group_total_dim(group_), to_mlp_options(cfg.expert_mlp()),
                                           cfg.num_expert(), static_cast<int64_t>(tasks_.size()), gate, path));
  towers_ = register_task_towers(cfg.task_towers(), std::vector<int64_t>(tasks_.size(), mmoe_->output_dim()));
}

TensorMap MMoE::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  std::vector<torch::Tensor> task_inputs = mmoe_->forward(grouped.at(group_));  // per task [B, D]
  TensorMap predictions;
  for (size_t t = 0; t < towers_.size(); ++t) {
    task_output_to_prediction(t, towers_[t]->forward(task_inputs[t]), &predictions);
  }
  return predictions;
}

}  // namespace tzrec::models
