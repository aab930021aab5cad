// DC2VR's intervention (tzrec/modules/intervention.py: RotateLayer, Intervention), with the
// parameter names that torch.nn.utils.parametrizations.orthogonal gives TorchEasyRec's layers.
//
// RotateLayer(n, k), n > k: x [B, n] → x · W [B, k], W [n, k] with orthonormal columns, kept
// orthogonal while training as torch's orthogonal parametrization does for a tall matrix (its
// "householder" map with trivialization):
//   parametrizations.weight.original  [n, k]  the trained parameter X (starts at −I)
//   parametrizations.weight.0.base    [n, n]  an orthogonal buffer (starts as the completion of
//                                             an orthogonal_-initialised W to an n × n basis)
//   W = base · (householder_product(A, τ) · diag(sign(X_jj) as int)), A = strictly lower part of
//   X, τ_j = 2 / (1 + ‖A_:j‖²); the diagonal of X carries no gradient.
// Intervention(base_dim, source_dim, low_rank_dim, dropout_ratio):
//   out = dropout(((base · W_b) − (detach(source) · W_s)) · W_bᵀ + base) → [B, base_dim]
//   with base_rotate_layer (W_b) and source_rotate_layer (W_s).
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn {

// torch's _Orthogonal: holds the buffer "base".
class OrthogonalMapImpl : public torch::nn::Module {
 public:
  explicit OrthogonalMapImpl(int64_t n);
  // X [n, k] (n ≥ k) → the orthonormal W [n, k].
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor base;  // [n, n]
};
TORCH_MODULE(OrthogonalMap);

// torch's ParametrizationList for "weight": the parameter "original" and the map "0".
class WeightParametrizationImpl : public torch::nn::Module {
 public:
  WeightParametrizationImpl(int64_t n, int64_t k);
  torch::Tensor forward() { return map->forward(original); }
  torch::Tensor original;  // [n, k]
  OrthogonalMap map{nullptr};
};
TORCH_MODULE(WeightParametrization);

class RotateLayerImpl : public torch::nn::Module {
 public:
  // TORCH_CHECK base_dim > low_rank_dim (callers check the config first).
  RotateLayerImpl(int64_t base_dim, int64_t low_rank_dim);
  // W [base_dim, low_rank_dim]
  torch::Tensor weight() { return weight_->forward(); }
  // x [B, base_dim] → [B, low_rank_dim]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  WeightParametrization weight_{nullptr};
};
TORCH_MODULE(RotateLayer);

class InterventionImpl : public torch::nn::Module {
 public:
  InterventionImpl(int64_t base_dim, int64_t source_dim, int64_t low_rank_dim, double dropout_ratio);
  // base [B, base_dim], source [B, source_dim] (no gradient flows into it) → [B, base_dim]
  torch::Tensor forward(const torch::Tensor& base, const torch::Tensor& source);
  int64_t output_dim() const { return base_dim_; }

 private:
  int64_t base_dim_;
  RotateLayer base_rotate_layer_{nullptr};
  RotateLayer source_rotate_layer_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Intervention);

}  // namespace tzrec::nn
