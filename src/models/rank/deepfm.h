// DeepFM (tzrec/models/deepfm.py). Feature groups: "wide" (usually WIDE), "deep", optional "fm".
//
//   y_wide = Σ over the wide group's [B, Σ dims] embedding columns          → [B, 1]
//   y_deep = deep_mlp(deep group)                                           → [B, H]
//   y_fm   = FM(fm group, or the deep group, reshaped [B, N, D])            → [B, D]
//   with final: output_mlp(final_mlp(cat[y_wide, y_fm, y_deep]))
//   without:    y_wide + Σ_d y_fm + output_mlp(y_deep)
// Submodules (state-dict prefixes): embedding_group, deep_mlp, final_mlp, output_mlp.
#pragma once

#include "models/model.h"
#include "nn/fm.h"
#include "nn/mlp.h"

namespace tzrec::models {

class DeepFM : public Model {
 public:
  DeepFM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::string fm_group_;  // "fm" when configured, else "deep"
  int64_t fm_num_features_ = 0;
  int64_t fm_dim_ = 0;
  nn::FactorizationMachine fm_{nullptr};
  nn::MLP deep_mlp_{nullptr};
  nn::MLP final_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
