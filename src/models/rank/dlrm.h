// DLRM (tzrec/models/dlrm.py; docs/tzrec-compatibility.md §4). Feature groups: "dense" (DEEP,
// usually raw features) and "sparse" (DEEP, all embeddings of one dim D); with a single feature
// group, that group is the sparse one and there is no dense part.
//
//   dense_out = dense_mlp(dense group)                          → [B, D] (last width must be D)
//   F         = [dense_out, sparse embeddings] as [B, 1 + N, D]  (without dense: [B, N, D])
//   inter     = InteractionArch(F): strict upper triangle of F Fᵀ → [B, M(M−1)/2]
//   y = output_mlp(final_mlp(cat[inter, dense_out, sparse group (when arch_with_sparse)]))
// (TorchEasyRec's concat order: interactions first.)
// Submodules (state-dict prefixes): embedding_group, dense_mlp, interaction (no parameters),
// final_mlp, output_mlp.
#pragma once

#include "models/rank/dense_sparse_model.h"
#include "nn/interaction_arch.h"
#include "nn/mlp.h"

namespace tzrec::models {

class DLRM : public DenseSparseModel {
 public:
  DLRM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
       std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  bool arch_with_sparse_ = true;
  nn::InteractionArch interaction_{nullptr};
  nn::MLP final_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
