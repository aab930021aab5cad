// RocketLaunching (tzrec/models/rocket_launching.py; docs/tzrec-compatibility.md §4, §7.1): a
// light net and a booster net over a shared bottom, trained together; only the light net
// predicts outside training (and is what export serves).
//
//   share = share_mlp(first group) (or the group itself)
//   light: light_linear(light_mlp(share.detach()))  → predictions "*_light"
//   booster (training only): booster_linear(booster_mlp(share)) → predictions "*_booster"
// The configured losses apply to both nets (names "<loss>_booster", "<loss>_light"); in training
// "hint_l2_loss" = mean squared difference of the light logits from the detached booster logits,
// and with feature_based_distillation "similarity_<i>_<j>" pulls light layer i towards the
// detached booster layer j of the same width (the first such j): COSINE
// −0.1 · mean(⟨b̂, l̂⟩ · w), otherwise sqrt(Σ ‖b − l‖² · w) (w: normalised sample weights, 1
// without). Submodules: embedding_group, share_mlp, booster_mlp, booster_linear, light_mlp,
// light_linear.
#pragma once

#include <utility>
#include <vector>

#include "models/model.h"
#include "nn/mlp.h"

namespace tzrec::models {

class RocketLaunching : public Model {
 public:
  RocketLaunching(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                  std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 protected:
  TensorMap extra_losses(const TensorMap& predictions, const sparse::Batch& batch) const override;

 private:
  std::string group_;
  bool cosine_ = true;  // feature_distillation_function COSINE; otherwise the Euclidean distance
  // (light layer, booster layer) of equal width; empty without feature_based_distillation.
  std::vector<std::pair<size_t, size_t>> distilled_layers_;
  nn::MLP share_mlp_{nullptr};
  nn::MLP booster_mlp_{nullptr};
  torch::nn::Linear booster_linear_{nullptr};
  nn::MLP light_mlp_{nullptr};
  torch::nn::Linear light_linear_{nullptr};
};

}  // namespace tzrec::models
