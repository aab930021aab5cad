// AutoDisEmbedding: TorchEasyRec's AutoDis embedding of N one-value dense features
// (docs/tzrec-compatibility.md §5.11; "An Embedding Learning Framework for Numerical Features in
// CTR Prediction", arXiv:2012.08986). Per feature n, with C = num_channels, D = embedding_dim:
//   h      = leaky_relu(x_n · w_n)                     w_n: proj_w [C],   h [B, C] (slope 0.01)
//   x̄      = h · M_nᵀ + keep_prob · h                  M_n: proj_m [C, C] (x̄_i = Σ_j M_n[i, j] h_j)
//   x̂      = softmax(x̄ / temperature) over C
//   e_n    = x̂ · E_n                                   E_n: meta_emb [C, D], e_n [B, D]
// Output [B, N · D]: e_0, e_1, ... in feature order.
//
// Parameters (TorchEasyRec's split state dict, one entry per feature f, in feature order):
//   "meta_emb_<f>.weight" [C, D] ~ N(0, 1)
//   "proj_w_<f>.weight"   [C]    ~ N(0, 2 / (1 + C))  (std sqrt(2 / (1 + C)))
//   "proj_m_<f>.weight"   [C, C] ~ N(0, 1 / C)        (std sqrt(1 / C))
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/feature_weight.h"

namespace tzrec::embedding {

class AutoDisEmbeddingImpl : public torch::nn::Module {
 public:
  // feature_names: the N features, in the order of the input's columns. temperature and keep_prob
  // as configured (float32 values widened).
  AutoDisEmbeddingImpl(std::vector<std::string> feature_names, int64_t embedding_dim, int64_t num_channels,
                       double temperature, double keep_prob);

  // dense_input [B, N] float32 → [B, N · embedding_dim].
  torch::Tensor forward(const torch::Tensor& dense_input);

  const std::vector<std::string>& feature_names() const { return feature_names_; }
  int64_t embedding_dim() const { return embedding_dim_; }

 private:
  std::vector<std::string> feature_names_;
  int64_t embedding_dim_;
  int64_t num_channels_;
  double temperature_;
  double keep_prob_;
  std::vector<FeatureWeight> meta_emb_, proj_w_, proj_m_;  // per feature
};
TORCH_MODULE(AutoDisEmbedding);

}  // namespace tzrec::embedding
