#include "models/match/dssm_tower.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DSSMTowerImpl::DSSMTowerImpl(const protos::Tower& tower, const std::string& path, embedding::EmbeddingGroup own_group,
                             const embedding::EmbeddingGroupImpl& dims_source, const protos::ModelConfig& model_config,
                             const MatchOptions& options)
    : input_(tower.input()), cosine_(options.cosine) {
  if (own_group) embedding_group = register_module("embedding_group", std::move(own_group));
  dropouts_.init(*this, model_config, {input_},
                 [&](const std::string& g) { return dims_source.group_feature_dims(g); });
  if (!tower.has_mlp()) {
    throw ConfigError(path + ".mlp: required; e.g. mlp { hidden_units: [256, 128] }");
  }
  mlp_ = register_module("mlp", nn::MLP(dims_source.group_total_dim(input_), to_mlp_options(tower.mlp()),
                                        path + ".mlp"));
  if (options.output_dim > 0) output_ = register_module("output", torch::nn::Linear(mlp_->output_dim(), options.output_dim));
}

torch::Tensor DSSMTowerImpl::forward(std::map<std::string, torch::Tensor> grouped) {
  dropouts_.apply(grouped);
  torch::Tensor out = mlp_->forward(grouped.at(input_));
  // The output layer through nn::linear_forward (follows the mixed-precision mode).
  if (output_) out = nn::linear_forward(out, output_->weight, output_->bias);
  if (cosine_) out = torch::nn::functional::normalize(out, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(1));
  return out;
}

torch::Tensor DSSMTowerImpl::forward(const sparse::Batch& batch) {
  TORCH_CHECK(embedding_group, "DSSMTower: no embedding group of its own");
  return forward(embedding_group->forward(batch));
}

}  // namespace tzrec::models
