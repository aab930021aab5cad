#include "models/rank/dcn_v2.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DCNV2::DCNV2(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
             std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DCNV2& cfg = model_config_.dcn_v2();
  const std::string path = "model_config.dcn_v2";
  init_input(features);
  group_ = first_group("DCNV2");
  if (!cfg.has_cross()) throw ConfigError(path + ".cross: required");
  if (!cfg.has_final()) throw ConfigError(path + ".final: required");
  const int64_t feature_dim = embedding_group_->group_total_dim(group_);
  int64_t cross_dim = feature_dim;
  if (cfg.has_backbone()) {
    backbone_ = register_module("backbone", nn::MLP(feature_dim, to_mlp_options(cfg.backbone()), path + ".backbone"));
    cross_dim = backbone_->output_dim();
  }
  cross_ = register_module(
      "cross", nn::CrossV2(cross_dim, cfg.cross().cross_num(), cfg.cross().low_rank(), path + ".cross"));
  int64_t final_in = cross_->output_dim();
  if (cfg.has_deep()) {
    deep_ = register_module("deep", nn::MLP(feature_dim, to_mlp_options(cfg.deep()), path + ".deep"));
    final_in += deep_->output_dim();
  }
  final_ = register_module("final", nn::MLP(final_in, to_mlp_options(cfg.final()), path + ".final"));
  output_mlp_ = register_module(
      "output_mlp", torch::nn::Linear(torch::nn::LinearOptions(final_->output_dim(), num_class_).bias(false)));
}

TensorMap DCNV2::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  const torch::Tensor& x = grouped.at(group_);                  // [B, d]
  torch::Tensor h = backbone_ ? backbone_->forward(x) : x;       // [B, d']
  torch::Tensor net = cross_->forward(h);                        // [B, d']
  if (deep_) net = torch::cat({net, deep_->forward(x)}, -1);     // [B, d' + H]
  // output_mlp through nn::linear_forward (follows the mixed-precision mode).
  return output_to_prediction(nn::linear_forward(final_->forward(net), output_mlp_->weight, torch::Tensor()));
}

}  // namespace tzrec::models
