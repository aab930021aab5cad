#include "models/rank/dcn_v1.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DCNV1::DCNV1(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
             std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DCNV1& cfg = model_config_.dcn_v1();
  const std::string path = "model_config.dcn_v1";
  init_input(features);
  group_ = first_group("DCNV1");
  if (!cfg.has_cross()) throw ConfigError(path + ".cross: required");
  if (!cfg.has_deep()) throw ConfigError(path + ".deep: required");
  if (!cfg.has_final()) throw ConfigError(path + ".final: required");
  const int64_t feature_dim = embedding_group_->group_total_dim(group_);
  cross_ = register_module("cross", nn::Cross(feature_dim, cfg.cross().cross_num(), path + ".cross"));
  deep_ = register_module("deep", nn::MLP(feature_dim, to_mlp_options(cfg.deep()), path + ".deep"));
  final_dnn_ = register_module(
      "final_dnn", nn::MLP(cross_->output_dim() + deep_->output_dim(), to_mlp_options(cfg.final()), path + ".final"));
  output_linear_ = register_module(
      "output_linear", torch::nn::Linear(torch::nn::LinearOptions(final_dnn_->output_dim(), num_class_).bias(false)));
}

TensorMap DCNV1::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  const torch::Tensor& x = grouped.at(group_);       // [B, d]
  torch::Tensor cross_out = cross_->forward(x);       // [B, d]
  torch::Tensor deep_out = deep_->forward(x);         // [B, H]
  torch::Tensor h = final_dnn_->forward(torch::cat({cross_out, deep_out}, -1));
  // output_linear through nn::linear_forward (follows the mixed-precision mode).
  return output_to_prediction(nn::linear_forward(h, output_linear_->weight, torch::Tensor()));
}

}  // namespace tzrec::models
