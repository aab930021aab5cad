#include "models/rank/deepfm.h"

#include <set>

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DeepFM::DeepFM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
               std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DeepFM& cfg = model_config_.deepfm();
  init_input(features, checked_wide_embedding_dim(cfg.wide_embedding_dim(), "model_config.deepfm"),
             cfg.wide_init_fn());
  require_group("DeepFM", "wide", protos::WIDE);
  require_group("DeepFM", "deep", protos::DEEP);
  if (!cfg.has_deep()) throw ConfigError("model_config.deepfm.deep: required");
  fm_ = register_module("fm", nn::FactorizationMachine());

  // The FM reads group "fm", or "deep" without one, as [B, N, D].
  fm_group_ = embedding_group_->has_group("fm") ? "fm" : "deep";
  if (fm_group_ == "fm") require_group("DeepFM", "fm", protos::DEEP);
  fm_dim_ = common_embedding_dim(fm_group_, "FM");
  fm_num_features_ = static_cast<int64_t>(embedding_group_->group_feature_dims(fm_group_).size());

  deep_mlp_ = register_module(
      "deep_mlp", nn::MLP(embedding_group_->group_total_dim("deep"), to_mlp_options(cfg.deep()),
                          "model_config.deepfm.deep"));
  int64_t final_dim = deep_mlp_->output_dim();
  if (cfg.has_final()) {
    final_mlp_ = register_module(
        "final_mlp", nn::MLP(1 + fm_dim_ + final_dim, to_mlp_options(cfg.final()), "model_config.deepfm.final"));
    final_dim = final_mlp_->output_dim();
  }
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_dim, num_class_));
}

TensorMap DeepFM::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor y_wide = grouped.at("wide").sum(1, /*keepdim=*/true);  // [B, 1]
  const torch::Tensor& deep = grouped.at("deep");                       // [B, deep_dim]
  torch::Tensor y_deep = deep_mlp_->forward(deep);                       // [B, H]
  torch::Tensor fm_in = grouped.at(fm_group_).reshape({-1, fm_num_features_, fm_dim_});  // [B, N, D]
  torch::Tensor y_fm = fm_->forward(fm_in);                                               // [B, D]
  // output_mlp through nn::linear_forward (follows the mixed-precision mode).
  auto output_linear = [this](const torch::Tensor& x) {
    return nn::linear_forward(x, output_mlp_->weight, output_mlp_->bias);
  };
  torch::Tensor y;
  if (final_mlp_) {
    y = output_linear(final_mlp_->forward(torch::cat({y_wide, y_fm, y_deep}, 1)));
  } else {
    y = y_wide + y_fm.sum(1, /*keepdim=*/true) + output_linear(y_deep);
  }
  return output_to_prediction(y);
}

}  // namespace tzrec::models
