#include "models/rank/wide_and_deep.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

WideAndDeep::WideAndDeep(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                         std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::WideAndDeep& cfg = model_config_.wide_and_deep();
  init_input(features, checked_wide_embedding_dim(cfg.wide_embedding_dim(), "model_config.wide_and_deep"),
             cfg.wide_init_fn());
  require_group("WideAndDeep", "wide", protos::WIDE);
  require_group("WideAndDeep", "deep", protos::DEEP);
  if (!cfg.has_deep()) throw ConfigError("model_config.wide_and_deep.deep: required");

  deep_mlp_ = register_module(
      "deep_mlp", nn::MLP(embedding_group_->group_total_dim("deep"), to_mlp_options(cfg.deep()),
                          "model_config.wide_and_deep.deep"));
  int64_t final_dim = deep_mlp_->output_dim();
  if (cfg.has_final()) {
    final_mlp_ = register_module(
        "final_mlp", nn::MLP(1 + final_dim, to_mlp_options(cfg.final()), "model_config.wide_and_deep.final"));
    final_dim = final_mlp_->output_dim();
  }
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_dim, num_class_));
}

TensorMap WideAndDeep::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor y_wide = grouped.at("wide").sum(1, /*keepdim=*/true);  // [B, 1]
  torch::Tensor y_deep = deep_mlp_->forward(grouped.at("deep"));        // [B, H]
  // output_mlp through nn::linear_forward (follows the mixed-precision mode).
  auto output_linear = [this](const torch::Tensor& x) {
    return nn::linear_forward(x, output_mlp_->weight, output_mlp_->bias);
  };
  torch::Tensor y;
  if (final_mlp_) {
    y = output_linear(final_mlp_->forward(torch::cat({y_wide, y_deep}, 1)));
  } else {
    y = y_wide + output_linear(y_deep);
  }
  return output_to_prediction(y);
}

}  // namespace tzrec::models
