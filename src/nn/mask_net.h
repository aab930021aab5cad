// MaskNet's MaskBlock and MaskNetModule (tzrec/modules/masknet.py; docs/tzrec-compatibility.md §4):
// instance-guided masks over the feature embedding.
//
// MaskBlock(input_dim, mask_input_dim):
//   weights = mask_generator(mask_input)   Linear(mask_input_dim, agg) → ReLU → Linear(agg, input_dim)
//   out     = ffn(feature_input ⊙ weights) Linear(input_dim, hidden_dim) → LayerNorm → ReLU
//   agg = int(input_dim · reduction_ratio) when reduction_ratio ≠ 0, else aggregation_dim
//   (TorchEasyRec: reduction_ratio, 1.0 by default, wins over aggregation_dim).
//   State-dict names: mask_generator.0, mask_generator.2, ffn.0 (Linear), ffn.1 (LayerNorm).
// MaskNetModule(feature_dim):
//   ln = ln_emb(x)  (LayerNorm(feature_dim))
//   parallel: concat_i mask_blocks[i](ln, x)                  → [B, n · hidden_dim]
//   serial:   h = mask_blocks[0](ln, x); h = mask_blocks[i](h, x) → [B, hidden_dim]
//   then top_mlp (optional).
//   State-dict names: ln_emb, mask_blocks.<i>.…, top_mlp.mlp.<j>.perceptron.….
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

struct MaskBlockOptions {
  double reduction_ratio = 1.0;  // 0: use aggregation_dim
  int64_t aggregation_dim = 0;
  int64_t hidden_dim = 0;
};

struct MaskNetOptions {
  int64_t n_mask_blocks = 0;
  MaskBlockOptions mask_block;
  std::optional<MLPOptions> top_mlp;
  bool use_parallel = true;
};

class MaskBlockImpl : public torch::nn::Module {
 public:
  // config_path names the MaskBlock message in errors (e.g. "model_config.mask_net.mask_net_module.mask_block").
  // Throws tzrec::ConfigError when both reduction_ratio and aggregation_dim are 0, the aggregation
  // dim comes out < 1, or hidden_dim < 1.
  MaskBlockImpl(int64_t input_dim, int64_t mask_input_dim, const MaskBlockOptions& options,
                const std::string& config_path = "MaskBlock");
  // feature_input: [B, input_dim], mask_input: [B, mask_input_dim] → [B, hidden_dim]
  torch::Tensor forward(const torch::Tensor& feature_input, const torch::Tensor& mask_input);
  int64_t output_dim() const { return hidden_dim_; }
  int64_t aggregation_dim() const { return aggregation_dim_; }

 private:
  int64_t aggregation_dim_ = 0;
  int64_t hidden_dim_ = 0;
  torch::nn::Linear mask_in_{nullptr}, mask_out_{nullptr}, ffn_linear_{nullptr};  // in the Sequentials
  torch::nn::LayerNorm ffn_norm_{nullptr};
};
TORCH_MODULE(MaskBlock);

class MaskNetModuleImpl : public torch::nn::Module {
 public:
  // config_path names the MaskNetModule message (e.g. "model_config.dbmtl.mask_net"). Throws
  // tzrec::ConfigError for n_mask_blocks < 1 and for bad block or MLP options.
  MaskNetModuleImpl(int64_t feature_dim, const MaskNetOptions& options,
                    const std::string& config_path = "MaskNetModule");
  // x: [B, feature_dim] → [B, output_dim()]
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_dim() const { return output_dim_; }

 private:
  bool use_parallel_ = true;
  torch::nn::LayerNorm ln_emb_{nullptr};
  std::vector<MaskBlock> blocks_;
  MLP top_mlp_{nullptr};
  int64_t output_dim_ = 0;
};
TORCH_MODULE(MaskNetModule);

}  // namespace tzrec::nn
