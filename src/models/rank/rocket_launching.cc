#include "models/rank/rocket_launching.h"

#include "base/error.h"
#include "loss/l2_loss.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {
namespace {

constexpr size_t kBooster = 0, kLight = 1;  // the two tasks (model_tasks.h)
constexpr const char* kHintLoss = "hint_l2_loss";

}  // namespace

RocketLaunching::RocketLaunching(const protos::ModelConfig& model_config,
                                 const std::vector<feature::FeatureInfo>& features, std::vector<std::string> labels,
                                 std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::RocketLaunching& cfg = model_config_.rocket_launching();
  const std::string path = "model_config.rocket_launching";
  TORCH_CHECK(tasks_.size() == 2 && tasks_[kBooster].training_only, "RocketLaunching expects its booster and light tasks");
  init_input(features);
  group_ = first_group("RocketLaunching");
  int64_t in = embedding_group_->group_total_dim(group_);
  if (cfg.has_share_mlp()) {
    share_mlp_ = register_module("share_mlp", nn::MLP(in, to_mlp_options(cfg.share_mlp()), path + ".share_mlp"));
    in = share_mlp_->output_dim();
  }
  if (!cfg.has_booster_mlp()) throw ConfigError(path + ".booster_mlp: required");
  if (!cfg.has_light_mlp()) throw ConfigError(path + ".light_mlp: required");
  booster_mlp_ = register_module("booster_mlp", nn::MLP(in, to_mlp_options(cfg.booster_mlp()), path + ".booster_mlp"));
  booster_linear_ = register_module("booster_linear", torch::nn::Linear(booster_mlp_->output_dim(), num_class_));
  light_mlp_ = register_module("light_mlp", nn::MLP(in, to_mlp_options(cfg.light_mlp()), path + ".light_mlp"));
  light_linear_ = register_module("light_linear", torch::nn::Linear(light_mlp_->output_dim(), num_class_));

  cosine_ = cfg.feature_distillation_function() == protos::COSINE;
  // With feature_based_distillation, each light layer is distilled from the first booster layer
  // of its width.
  const auto& light = cfg.light_mlp().hidden_units();
  const auto& booster = cfg.booster_mlp().hidden_units();
  for (int i = 0; cfg.feature_based_distillation() && i < light.size(); ++i) {
    for (int j = 0; j < booster.size(); ++j) {
      if (light[i] == booster[j]) {
        distilled_layers_.emplace_back(static_cast<size_t>(i), static_cast<size_t>(j));
        break;
      }
    }
  }
}

TensorMap RocketLaunching::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor share = grouped.at(group_);
  if (share_mlp_) share = share_mlp_->forward(share);
  // The light net learns from the labels and the booster only: no gradient into the shared part.
  std::vector<torch::Tensor> light = light_mlp_->forward_hidden(share.detach());
  TensorMap predictions;
  task_output_to_prediction(kLight, nn::linear_forward(light.back(), light_linear_->weight, light_linear_->bias),
                            &predictions);
  if (!is_training()) return predictions;
  std::vector<torch::Tensor> booster = booster_mlp_->forward_hidden(share);
  task_output_to_prediction(
      kBooster, nn::linear_forward(booster.back(), booster_linear_->weight, booster_linear_->bias), &predictions);
  for (const auto& [i, j] : distilled_layers_) {
    predictions[fmt::format("light_{}", i)] = light[i];
    predictions[fmt::format("booster_{}", j)] = booster[j];
  }
  return predictions;
}

TensorMap RocketLaunching::extra_losses(const TensorMap& predictions, const sparse::Batch& batch) const {
  TensorMap out;
  if (!is_training()) return out;
  // The logits of both nets ("y" for a regression loss).
  auto logits = [&](const std::string& suffix) {
    auto it = predictions.find("logits" + suffix);
    return it != predictions.end() ? it->second : predictions.at("y" + suffix);
  };
  const torch::Tensor light = logits("_light"), booster = logits("_booster").detach();
  torch::Tensor weight = task_loss_weight(tasks_[kLight], batch);
  if (weight.defined()) weight = loss::normalize_sample_weights(weight.to(light.device()), light.scalar_type());
  // [B] or [B, C] rows weighted per sample.
  auto weighted = [&](const torch::Tensor& rows) {
    if (!weight.defined()) return rows;
    return rows.dim() == 2 ? rows * weight.unsqueeze(1) : rows * weight;
  };
  out[kHintLoss] = weighted((light - booster).square()).mean();
  namespace F = torch::nn::functional;
  for (const auto& [i, j] : distilled_layers_) {
    const torch::Tensor l = predictions.at(fmt::format("light_{}", i)).to(torch::kFloat32);
    const torch::Tensor b = predictions.at(fmt::format("booster_{}", j)).detach().to(torch::kFloat32);
    torch::Tensor value;
    if (cosine_) {
      const auto unit = F::NormalizeFuncOptions().p(2.0).dim(1);
      value = -0.1 * weighted((F::normalize(b, unit) * F::normalize(l, unit)).sum(1)).mean();
    } else {
      value = weighted((b - l).square().sum(1)).sum().sqrt();
    }
    out[fmt::format("similarity_{}_{}", i, j)] = value;
  }
  return out;
}

}  // namespace tzrec::models
