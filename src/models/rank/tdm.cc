#include "models/rank/tdm.h"

#include <fmt/format.h>

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

TDM::TDM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::TDM& cfg = model_config_.tdm();
  const std::string path = "model_config.tdm";
  if (!tower.empty()) {
    if (tower != kEmbeddingTower || model_config_.feature_groups_size() != 1) {
      throw UsageError(fmt::format("tdm builds the scorer or its embedding package ('{}'), not '{}'",
                                   kEmbeddingTower, tower));
    }
    embedding_only_ = true;
    seq_group_ = model_config_.feature_groups(0).group_name();
    init_input(features);
    return;
  }
  for (const auto& g : model_config_.feature_groups()) {
    if (g.group_type() == protos::SEQUENCE) seq_group_ = g.group_name();
  }
  if (seq_group_.empty()) {
    throw ConfigError("model_config.feature_groups: tdm needs a feature group with group_type: SEQUENCE (the tree "
                      "node's item features and the user's history)");
  }
  if (!cfg.has_multiwindow_din()) {
    throw ConfigError(path + ".multiwindow_din: required, e.g. multiwindow_din { windows_len: [1, 2, 5] attn_mlp { "
                             "hidden_units: [36] } }");
  }
  if (!cfg.multiwindow_din().has_attn_mlp()) {
    throw ConfigError(path + ".multiwindow_din.attn_mlp: required, e.g. attn_mlp { hidden_units: [36] }");
  }
  if (!cfg.has_final()) throw ConfigError(path + ".final: required, e.g. final { hidden_units: [64, 32] }");
  init_input(features);
  const embedding::SequenceEmbeddingGroup sequences = embedding_group_->sequence_groups();
  TORCH_CHECK(sequences && sequences->has_group(seq_group_), "SEQUENCE group ", seq_group_, " not built");
  nn::MultiWindowDINEncoderOptions options;
  options.attn_mlp = to_mlp_options(cfg.multiwindow_din().attn_mlp());
  options.windows_len.assign(cfg.multiwindow_din().windows_len().begin(), cfg.multiwindow_din().windows_len().end());
  multiwindow_din_ = register_module(
      "multiwindow_din",
      nn::MultiWindowDINEncoder(sequences->sequence_dim(seq_group_), sequences->query_dim(seq_group_), seq_group_,
                                std::move(options), path + ".multiwindow_din"));
  int64_t total_dim = multiwindow_din_->output_dim();
  for (const std::string& g : embedding_group_->group_names()) {
    non_seq_groups_.push_back(g);
    total_dim += embedding_group_->group_total_dim(g);
  }
  deep_mlp_ = register_module("deep_mlp", nn::MLP(total_dim, to_mlp_options(cfg.final()), path + ".final"));
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(deep_mlp_->output_dim(), num_class_));
}

TensorMap TDM::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  if (embedding_only_) return {{"item_emb", grouped.at(seq_group_)}};  // [B, Dq]
  std::vector<torch::Tensor> inputs{multiwindow_din_->forward(grouped)};  // [B, D·(L+1)]
  for (const std::string& g : non_seq_groups_) inputs.push_back(grouped.at(g));
  torch::Tensor y = deep_mlp_->forward(torch::cat(inputs, 1));
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
