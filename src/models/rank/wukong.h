// WuKong (tzrec/models/wukong.py; docs/tzrec-compatibility.md §2.3). Feature groups: the sparse
// group (the only group whatever its name, else "sparse"; every feature an embedding of one dim D)
// and, next to it, an optional "dense" group through dense_mlp (its last width must be D):
//
//   X = [dense_mlp(dense) as one more feature, sparse embeddings] → [B, F, D]
//   X = wukong_layers[l](X) for each layer (nn/wukong_layer.h)     → [B, F_l, D]
//   y = output_mlp(final_mlp(flatten(X)))
// Submodules (state-dict prefixes): embedding_group, dense_mlp, _wukong_layers.<l>, final_mlp,
// output_mlp.
#pragma once

#include <vector>

#include "models/rank/dense_sparse_model.h"
#include "nn/wukong_layer.h"

namespace tzrec::models {

class WuKong : public DenseSparseModel {
 public:
  WuKong(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::vector<nn::WuKongLayer> layers_;
  nn::MLP final_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
