// The contextualized MLPs of the generative models (TorchEasyRec's
// tzrec/modules/gr/contextualize_mlps.py; config GRContextualizedMLP): project sequence item
// embeddings seq [L, Din] (jagged by seq_offsets [B + 1]) to [L, Dout], optionally conditioned on
// the row's contextual features ctx [B, Dc].
//   simple_mlp        "_mlp": Linear(Din, hidden) → SwishLayerNorm(hidden) → Linear(hidden, Dout)
//                     → LayerNorm(Dout) ("_mlp.0.weight", "_mlp.1.weight", ...); ctx unused
//   parameterized_mlp per row b: s = "_dense_features_compress"(dropout(ctx_b)) [hidden];
//                     W_b = "_attn_weights_norm"(reshape("_attn_raw_weights.0"(s), [Din, Dout]))
//                     (a LayerNorm over the whole [Din, Dout] matrix);
//                     out rows = seq rows of b @ W_b + "_res_weights"(s)
//                     ("_res_weights": Linear(hidden, hidden) → SwishLayerNorm → Linear(hidden, Dout))
// Linear weights xavier-uniform, biases zero (TorchEasyRec's init_linear_xavier_weights_zero_bias).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn::gr {

class ContextualizedMLP : public torch::nn::Module {
 public:
  // seq [L, Din], seq_offsets [B + 1], ctx [B, Dc] (may be undefined for simple_mlp) → [L, Dout]
  virtual torch::Tensor forward(const torch::Tensor& seq, const torch::Tensor& seq_offsets,
                                const torch::Tensor& ctx) = 0;
};

struct ContextualizedMLPOptions {
  std::string type;  // "simple_mlp" | "parameterized_mlp"
  int64_t hidden_dim = 0;
  double contextual_dropout_ratio = 0.3;  // parameterized_mlp
};

// contextual_dim: Dc, the width of the contextual features (0 when the model has none; then
// parameterized_mlp is a ConfigError naming config_path).
std::shared_ptr<ContextualizedMLP> make_contextualized_mlp(const ContextualizedMLPOptions& options,
                                                           int64_t contextual_dim, int64_t input_dim,
                                                           int64_t output_dim, const std::string& config_path);

}  // namespace tzrec::nn::gr
