// xDeepFM (tzrec/models/xdeepfm.py; docs/tzrec-compatibility.md §4). Feature groups: "wide"
// (WIDE: every feature a wide_embedding_dim-d embedding, default 16) and "deep".
//
//   y_cin  = CIN(wide group reshaped [B, F, wide_embedding_dim])  → [B, Σ cin_layer_size]
//   y_deep = deep(deep group)                                     → [B, H]
//   y      = output_mlp(final(cat[y_cin, y_deep]))
// (no separate wide-sum term, unlike DeepFM).
// Submodules (state-dict prefixes): embedding_group, deep, cin (cin_layers.<k>, Conv1d), final,
// output_mlp.
#pragma once

#include "models/model.h"
#include "nn/cin.h"
#include "nn/mlp.h"

namespace tzrec::models {

class XDeepFM : public Model {
 public:
  XDeepFM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
          std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  int64_t wide_num_ = 0;  // F
  int64_t wide_dim_ = 0;  // wide_embedding_dim
  nn::MLP deep_{nullptr};
  nn::CIN cin_{nullptr};
  nn::MLP final_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
