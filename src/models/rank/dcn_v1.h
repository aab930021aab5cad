// DCNV1, Deep & Cross Network (tzrec/models/dcn.py). Input: the first feature group, x: [B, d].
//
//   y = output_linear(final_dnn(cat[cross(x), deep(x)]))      cross(x): [B, d], deep(x): [B, H]
//   cross: nn::Cross with cross.cross_num layers (nn/cross.h); output_linear has no bias.
// Submodules (state-dict prefixes, as tzrec's DCNV1): embedding_group, cross (w.<l>.weight, b.<l>),
// deep (MLP from `deep`), final_dnn (MLP from `final`), output_linear (Linear(…, num_class,
// bias=False): "output_linear.weight" only).
#pragma once

#include "models/model.h"
#include "nn/cross.h"
#include "nn/mlp.h"

namespace tzrec::models {

class DCNV1 : public Model {
 public:
  DCNV1(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
        std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::string group_;  // the first feature group
  nn::Cross cross_{nullptr};
  nn::MLP deep_{nullptr};
  nn::MLP final_dnn_{nullptr};
  torch::nn::Linear output_linear_{nullptr};
};

}  // namespace tzrec::models
