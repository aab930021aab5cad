#include "models/rank/dlrm.h"

#include <set>

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DLRM::DLRM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DLRM& cfg = model_config_.dlrm();
  const std::string path = "model_config.dlrm";
  init_input(features);
  const std::vector<std::string> groups = embedding_group_->group_names();
  if (groups.empty()) throw ConfigError("model_config.feature_groups: DLRM needs a feature group named 'sparse'");
  // As TorchEasyRec: one group is the sparse group whatever its name (and has no dense part);
  // otherwise the groups "sparse" and, optionally, "dense".
  const bool single = groups.size() == 1;
  sparse_group_ = single ? groups.front() : "sparse";
  if (!single) require_group("DLRM", "sparse", protos::DEEP);
  arch_with_sparse_ = cfg.arch_with_sparse();

  if (!single && embedding_group_->has_group("dense")) {
    if (!cfg.has_dense_mlp()) {
      throw ConfigError(path + ".dense_mlp: required with a 'dense' feature group (its last hidden unit must equal "
                               "the embedding_dim of the 'sparse' group)");
    }
    dense_mlp_ = register_module("dense_mlp", nn::MLP(embedding_group_->group_total_dim("dense"),
                                                      to_mlp_options(cfg.dense_mlp()), path + ".dense_mlp"));
  } else if (cfg.has_dense_mlp()) {
    log::warning("{}.dense_mlp is ignored: there is no 'dense' feature group next to the sparse group '{}' (as in "
                 "TorchEasyRec)",
                 path, sparse_group_);
  }

  sparse_dim_ = common_embedding_dim(sparse_group_, "DLRM's sparse group");
  sparse_num_ = static_cast<int64_t>(embedding_group_->group_feature_dims(sparse_group_).size());
  if (dense_mlp_ && dense_mlp_->output_dim() != sparse_dim_) {
    throw ConfigError(fmt::format(
        "{}.dense_mlp.hidden_units: the last hidden unit must equal the embedding dimension of the 'sparse' group "
        "({}), got {}",
        path, sparse_dim_, dense_mlp_->output_dim()));
  }
  interaction_ = register_module("interaction", nn::InteractionArch(sparse_num_ + (dense_mlp_ ? 1 : 0)));
  int64_t final_in = interaction_->output_dim();
  if (dense_mlp_) final_in += dense_mlp_->output_dim();
  if (arch_with_sparse_) final_in += sparse_num_ * sparse_dim_;
  if (!cfg.has_final()) throw ConfigError(path + ".final: required");
  final_mlp_ = register_module("final_mlp", nn::MLP(final_in, to_mlp_options(cfg.final()), path + ".final"));
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_mlp_->output_dim(), num_class_));
}

TensorMap DLRM::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  const torch::Tensor& sparse = grouped.at(sparse_group_);                 // [B, N·D]
  torch::Tensor feat = sparse.reshape({-1, sparse_num_, sparse_dim_});    // [B, N, D]
  torch::Tensor dense;
  if (dense_mlp_) {
    dense = dense_mlp_->forward(grouped.at("dense"));                      // [B, D]
    feat = torch::cat({dense.unsqueeze(1), feat}, 1);                     // [B, 1 + N, D]
  }
  std::vector<torch::Tensor> parts = {interaction_->forward(feat)};
  if (dense_mlp_) parts.push_back(dense);
  if (arch_with_sparse_) parts.push_back(sparse);
  torch::Tensor y = final_mlp_->forward(torch::cat(parts, 1));
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
