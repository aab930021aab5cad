#include "models/match/match_tower.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

MatchTowerImpl::MatchTowerImpl(std::vector<std::string> inputs, const protos::MLP* mlp, const std::string& path,
                               embedding::EmbeddingGroup own_group, const embedding::EmbeddingGroupImpl& dims_source,
                               const protos::ModelConfig& model_config, const MatchOptions& options)
    : inputs_(std::move(inputs)), cosine_(options.cosine) {
  if (own_group) embedding_group = register_module("embedding_group", std::move(own_group));
  dropouts_.init(*this, model_config, inputs_, [&](const std::string& g) { return dims_source.group_feature_dims(g); });
  if (mlp == nullptr) throw ConfigError(path + ".mlp: required; e.g. mlp { hidden_units: [256, 128] }");
  int64_t in = 0;
  for (const std::string& g : inputs_) in += dims_source.group_total_dim(g);
  mlp_ = register_module("mlp", nn::MLP(in, to_mlp_options(*mlp), path + ".mlp"));
  if (options.output_dim > 0) output_ = register_module("output", torch::nn::Linear(mlp_->output_dim(), options.output_dim));
}

int64_t MatchTowerImpl::output_dim() const { return output_ ? output_->weight.size(0) : mlp_->output_dim(); }

torch::Tensor MatchTowerImpl::forward(std::map<std::string, torch::Tensor> grouped,
                                      std::map<std::string, torch::Tensor>* dropped) {
  dropouts_.apply(grouped);
  std::vector<torch::Tensor> parts;
  for (const std::string& g : inputs_) parts.push_back(grouped.at(g));
  torch::Tensor out = mlp_->forward(parts.size() == 1 ? parts[0] : torch::cat(parts, 1));
  // The output layer through nn::linear_forward (follows the mixed-precision mode).
  if (output_) out = nn::linear_forward(out, output_->weight, output_->bias);
  if (cosine_) out = torch::nn::functional::normalize(out, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(1));
  if (dropped != nullptr) *dropped = std::move(grouped);
  return out;
}

torch::Tensor MatchTowerImpl::forward(const sparse::Batch& batch, std::map<std::string, torch::Tensor>* dropped) {
  TORCH_CHECK(embedding_group, "MatchTower: no embedding group of its own");
  return forward(embedding_group->forward(batch), dropped);
}

}  // namespace tzrec::models
