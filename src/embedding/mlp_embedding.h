// MLPEmbedding: TorchEasyRec's MLP embedding of dense features, one linear map without bias
// (docs/tzrec-compatibility.md §5.11). D = embedding_dim.
//   value_dim 1:  N features, e_n = x_n · w_n (w_n: [D]); output [B, N · D], e_0, e_1, ... in
//                 feature order.
//   value_dim V > 1: one feature, e = x · W (x [B, V], W: [V, D]); output [B, D].
//
// Parameters (TorchEasyRec's split state dict): "proj_w_<f>.weight", [D] per feature (value_dim 1,
// in feature order) ~ N(0, 2 / (1 + D)), or [V, D] ~ N(0, 2 / (V + D)) (glorot normal).
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/feature_weight.h"

namespace tzrec::embedding {

class MLPEmbeddingImpl : public torch::nn::Module {
 public:
  // feature_names: the features, in the order of the input's columns; exactly one when
  // value_dim > 1.
  MLPEmbeddingImpl(std::vector<std::string> feature_names, int64_t embedding_dim, int64_t value_dim);

  // dense_input [B, N] (value_dim 1) or [B, V] (value_dim V > 1) float32 → [B, N · embedding_dim].
  torch::Tensor forward(const torch::Tensor& dense_input);

  const std::vector<std::string>& feature_names() const { return feature_names_; }
  int64_t embedding_dim() const { return embedding_dim_; }

 private:
  std::vector<std::string> feature_names_;
  int64_t embedding_dim_;
  int64_t value_dim_;
  std::vector<FeatureWeight> proj_w_;  // per feature
};
TORCH_MODULE(MLPEmbedding);

}  // namespace tzrec::embedding
