#include "models/rank/xdeepfm.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

XDeepFM::XDeepFM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                 std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::xDeepFM& cfg = model_config_.xdeepfm();
  const std::string path = "model_config.xdeepfm";
  wide_dim_ = checked_wide_embedding_dim(cfg.wide_embedding_dim(), path);
  init_input(features, wide_dim_, cfg.wide_init_fn());
  require_group("xDeepFM", "wide", protos::WIDE);
  require_group("xDeepFM", "deep", protos::DEEP);
  if (!cfg.has_cin()) throw ConfigError(path + ".cin: required, e.g. cin { cin_layer_size: [64, 64] }");
  if (!cfg.has_deep()) throw ConfigError(path + ".deep: required");
  if (!cfg.has_final()) throw ConfigError(path + ".final: required");
  deep_ = register_module(
      "deep", nn::MLP(embedding_group_->group_total_dim("deep"), to_mlp_options(cfg.deep()), path + ".deep"));

  // The CIN reads the WIDE group as [B, F, wide_embedding_dim].
  wide_num_ = static_cast<int64_t>(embedding_group_->group_feature_dims("wide").size());
  std::vector<int64_t> layers(cfg.cin().cin_layer_size().begin(), cfg.cin().cin_layer_size().end());
  cin_ = register_module("cin", nn::CIN(wide_num_, layers, path + ".cin"));
  final_ = register_module("final", nn::MLP(deep_->output_dim() + cin_->output_dim(), to_mlp_options(cfg.final()),
                                            path + ".final"));
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_->output_dim(), num_class_));
}

TensorMap XDeepFM::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor y_cin = cin_->forward(grouped.at("wide").reshape({-1, wide_num_, wide_dim_}));  // [B, Σ H_k]
  torch::Tensor y_deep = deep_->forward(grouped.at("deep"));                                      // [B, H]
  torch::Tensor y = final_->forward(torch::cat({y_cin, y_deep}, 1));
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
