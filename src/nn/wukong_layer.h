// WuKong's building blocks (tzrec/modules/interaction.py: LinearCompressBlock,
// FactorizationMachineBlock, WuKongLayer), over feature embeddings X [B, F, D], with TorchEasyRec's
// parameter names.
//
// LinearCompressBlock(F, F'):      weight [F, F'] (Kaiming-uniform as torch's default init of a
//                                  [F, F'] tensor: fan_in F'); out = (Xᵀ W)ᵀ → [B, F', D]
// FactorizationMachineBlock(D, F, F_out, C, mlp):
//                                  weight [F, C] (Kaiming-uniform), norm LayerNorm(F·C),
//                                  mlp MLP(F·C, mlp), feature_out_liner Linear(mlp.out, F_out·D)
//                                  (tzrec's spelling); out = view(feature_out_liner(mlp(norm(
//                                  flatten(X (Xᵀ W))))), [B, F_out, D]): an optimised FM whose
//                                  pairwise products are compressed to C columns first.
// WuKongLayer(D, F, lcb, fmb, C, mlp):
//                                  lcb, fmb, norm LayerNorm(D), and residual_projection: a
//                                  LinearCompressBlock(F, fmb + lcb) when F ≠ fmb + lcb (else the
//                                  identity, no parameters); out = norm(cat[fmb(X), lcb(X)] +
//                                  residual_projection(X)) → [B, fmb + lcb, D].
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

class LinearCompressBlockImpl : public torch::nn::Module {
 public:
  LinearCompressBlockImpl(int64_t feature_num_in, int64_t feature_num_out);
  // x: [B, feature_num_in, D] → [B, feature_num_out, D]
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;  // [feature_num_in, feature_num_out]
};
TORCH_MODULE(LinearCompressBlock);

class FactorizationMachineBlockImpl : public torch::nn::Module {
 public:
  FactorizationMachineBlockImpl(int64_t input_dim, int64_t feature_num_in, int64_t feature_num_out,
                                int64_t compressed_feature_num, const MLPOptions& feature_num_mlp,
                                const std::string& config_path);
  // x: [B, feature_num_in, input_dim] → [B, feature_num_out, input_dim]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int64_t input_dim_, feature_num_in_, feature_num_out_, compressed_feature_num_;
  torch::Tensor weight_;  // [feature_num_in, compressed_feature_num]
  torch::nn::LayerNorm norm_{nullptr};
  MLP mlp_{nullptr};
  torch::nn::Linear feature_out_liner_{nullptr};
};
TORCH_MODULE(FactorizationMachineBlock);

struct WuKongLayerOptions {
  int64_t lcb_feature_num = 0;
  int64_t fmb_feature_num = 0;
  int64_t compressed_feature_num = 16;
  MLPOptions feature_num_mlp;
};

class WuKongLayerImpl : public torch::nn::Module {
 public:
  // config_path names the layer's config message in errors (the feature_num_mlp's MLP checks).
  WuKongLayerImpl(int64_t input_dim, int64_t feature_num, const WuKongLayerOptions& options,
                  const std::string& config_path);
  // x: [B, feature_num, input_dim] → [B, output_feature_num(), input_dim]
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_feature_num() const { return options_.lcb_feature_num + options_.fmb_feature_num; }

 private:
  WuKongLayerOptions options_;
  LinearCompressBlock lcb_{nullptr};
  FactorizationMachineBlock fmb_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  LinearCompressBlock residual_projection_{nullptr};  // null when feature_num == output_feature_num()
};
TORCH_MODULE(WuKongLayer);

}  // namespace tzrec::nn
