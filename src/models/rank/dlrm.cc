#include "models/rank/dlrm.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DLRM::DLRM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : DenseSparseModel(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DLRM& cfg = model_config_.dlrm();
  const std::string path = "model_config.dlrm";
  init_input(features);
  init_dense_sparse("DLRM", path, cfg.has_dense_mlp() ? &cfg.dense_mlp() : nullptr,
                    /*refuse_sequence_encoders=*/false);
  arch_with_sparse_ = cfg.arch_with_sparse();
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
  torch::Tensor dense;
  torch::Tensor feat = feature_vectors(grouped, &dense);  // [B, (1 +) N, D]
  std::vector<torch::Tensor> parts = {interaction_->forward(feat)};
  if (dense_mlp_) parts.push_back(dense);
  if (arch_with_sparse_) parts.push_back(grouped.at(sparse_group_));
  torch::Tensor y = final_mlp_->forward(torch::cat(parts, 1));
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
