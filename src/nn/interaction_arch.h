// InteractionArch (tzrec/modules/interaction.py, DLRM's feature interaction;
// docs/tzrec-compatibility.md §4): the pairwise dot products of N feature vectors, strict upper
// triangle.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn {

// No parameters. TorchEasyRec keeps triu_indices as a non-persistent buffer (not in the state
// dict); here the flat indices are a plain member for the same reason.
class InteractionArchImpl : public torch::nn::Module {
 public:
  explicit InteractionArchImpl(int64_t feature_num);
  // features: [B, N, D] (N = feature_num) → bmm(F, Fᵀ)[:, i, j] for i < j in row-major order
  // (torch.triu_indices(N, N, offset=1)): [B, N(N−1)/2].
  torch::Tensor forward(const torch::Tensor& features);
  int64_t output_dim() const { return feature_num_ * (feature_num_ - 1) / 2; }
  int64_t feature_num() const { return feature_num_; }

 private:
  int64_t feature_num_;
  torch::Tensor flat_index_;  // [N(N−1)/2] int64: i * N + j of the upper-triangle pairs
};
TORCH_MODULE(InteractionArch);

}  // namespace tzrec::nn
