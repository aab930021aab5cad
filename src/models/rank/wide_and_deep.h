// WideAndDeep (tzrec/models/wide_and_deep.py). Feature groups: "wide" (WIDE) and "deep" (DEEP).
//
//   y_wide = Σ over the wide group's [B, Σ wide_embedding_dim] embedding columns   → [B, 1]
//            (one wide_embedding_dim-d table per wide feature, as DeepFM)
//   y_deep = deep_mlp(deep group)                                                 → [B, H]
//   with final: output_mlp(final_mlp(cat[y_wide, y_deep]))
//   without:    y_wide + output_mlp(y_deep)
// Submodules (state-dict prefixes, as tzrec): embedding_group, deep_mlp, final_mlp (only with
// `final`), output_mlp (Linear(…, num_class) with bias).
#pragma once

#include "models/model.h"
#include "nn/mlp.h"

namespace tzrec::models {

class WideAndDeep : public Model {
 public:
  WideAndDeep(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
              std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  nn::MLP deep_mlp_{nullptr};
  nn::MLP final_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
