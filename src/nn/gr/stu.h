// The sequential transduction unit of the HSTU generative models (TorchEasyRec's STULayer and
// STUStack in tzrec/modules/gr/stu.py, config message STU) on jagged sequences.
//
// STULayer: x [L, D] (float32 or bfloat16; rows x_offsets[b] .. x_offsets[b+1] are sequence b),
// num_targets [B] (the last num_targets[b] rows of sequence b are targets; undefined: none)
// → [L, D] in x's dtype:
//   normed = layer_norm(x; "_input_norm_weight", "_input_norm_bias", eps 1e-6)   (in float32)
//   u | v | q | k = normed @ "_uvqk_weight" [D, (2·hidden + 2·attention) · H] + "_uvqk_beta"
//                   (widths hidden·H, hidden·H, attention·H, attention·H; u = silu(u))
//   attn = hstu_mha(q [L, H, attention], k, v [L, H, hidden]) [L, H · hidden] with attn_alpha,
//          causal, num_targets (when target_aware), max_attn_len, contextual_seq_len,
//          scaling_seqlen, or the Semi-Local Attention intervals when sla_k1 or sla_k2 > 0
//   n = layer_norm(attn) over H · hidden, or group_norm(attn as [L, H, hidden], H groups) when
//       use_group_norm ("_output_norm_weight", "_output_norm_bias": [H · hidden] or [H]; eps 1e-6)
//   y = dropout(cat(u, attn, u · n), output_dropout_ratio)   (in float32, training only)
//   out = x + y @ "_output_weight" [3 · hidden · H, D]
// The dropout mask comes from a counter-based hash seeded by torch's default generator
// (torch::manual_seed reproduces it; its stream differs from torch::dropout's).
// Parameters initialised as TorchEasyRec: both weights xavier-uniform, "_uvqk_beta" and the norm
// biases zero, the norm weights one.
//
// STUStack: layers "_stu_layers.<i>." in order; with truncate_split_layer s and truncate_tail_len
// T (both > 0), before layer s each sequence [contextual | history | targets] keeps its contextual
// rows, its last T history rows and its targets (compute_stu_truncation_plan), and the stack
// returns the new offsets and max_seq_len with the plan, to cut parallel jagged tensors (e.g.
// timestamps) the same way.
//
// Not here: the key/value cache and cached_forward of TorchEasyRec's serving delta path, and the
// reuse of one layer's SLA intervals by the next (rebuilt per layer: the same values).
// recompute_normed_x / recompute_uvqk / recompute_y / sort_by_length trade memory or speed in
// TorchEasyRec's GPU kernels and leave values unchanged: accepted and ignored.
// Bad options or inputs are programmer errors (TORCH_CHECK): the caller converts and validates the
// STU config.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace tzrec::nn::gr {

struct STUOptions {
  int64_t embedding_dim = 0;
  int64_t num_heads = 0;
  int64_t hidden_dim = 0;
  int64_t attention_dim = 0;
  double output_dropout_ratio = 0.3;
  int64_t max_attn_len = 0;  // 0: no window
  double attn_alpha = 0.0;   // 0: 1 / sqrt(attention_dim)
  bool use_group_norm = false;
  bool causal = true;        // only true is supported (as TorchEasyRec's hstu_mha)
  bool target_aware = true;  // false: num_targets is not passed to the attention
  int64_t contextual_seq_len = 0;
  int64_t sla_k1 = 0;
  int64_t sla_k2 = 0;
  int64_t scaling_seqlen = -1;  // -1: the max_seq_len of each call
  // No effect on values (see above).
  bool recompute_normed_x = true;
  bool recompute_uvqk = true;
  bool recompute_y = true;
  bool sort_by_length = true;
};

class STULayerImpl : public torch::nn::Module {
 public:
  explicit STULayerImpl(const STUOptions& options);
  // x [L, D], x_offsets [B + 1] (integer), every length ≤ max_seq_len, num_targets [B] or
  // undefined → [L, D].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& x_offsets, int64_t max_seq_len,
                        const torch::Tensor& num_targets);

  const STUOptions& options() const { return options_; }
  double attn_alpha() const { return attn_alpha_; }

 private:
  STUOptions options_;
  double attn_alpha_;
  torch::Tensor uvqk_weight_, uvqk_beta_, input_norm_weight_, input_norm_bias_;
  torch::Tensor output_weight_, output_norm_weight_, output_norm_bias_;
};
TORCH_MODULE(STULayer);

// TorchEasyRec's compute_stu_truncation_plan, as row indices: per sequence of length n with
// contextual prefix C and t targets (0 without num_targets), history U = n − C − t, the first
// max(U − truncate_tail_len, 0) history rows are dropped.
struct STUTruncationPlan {
  torch::Tensor new_lengths;    // [B] int64
  torch::Tensor new_x_offsets;  // [B + 1] int64
  int64_t new_max_seq_len = 0;  // max(new_lengths), 0 for B = 0
  int64_t pre_max_seq_len = 0;
  int64_t contextual_seq_len = 0;
  torch::Tensor kept_rows;  // [Σ new_lengths] int64: the input rows kept, in order
};

STUTruncationPlan compute_stu_truncation_plan(const torch::Tensor& x_offsets, const torch::Tensor& num_targets,
                                              int64_t max_seq_len, int64_t truncate_tail_len,
                                              int64_t contextual_seq_len = 0);
// Rows of any jagged tensor x [L, ...] laid out like the plan's input → [Σ new_lengths, ...]
// (differentiable).
torch::Tensor apply_stu_truncation_plan(const torch::Tensor& x, const STUTruncationPlan& plan);

struct STUStackOutput {
  torch::Tensor x;          // [L', D]
  torch::Tensor x_offsets;  // [B + 1] int64 after truncation (the input offsets without)
  int64_t max_seq_len = 0;
  std::optional<STUTruncationPlan> plan;  // set when the stack truncated
};

class STUStackImpl : public torch::nn::Module {
 public:
  // truncate_split_layer and truncate_tail_len: both 0 (no truncation) or both > 0 with
  // 0 < truncate_split_layer < layers.size().
  explicit STUStackImpl(const std::vector<STUOptions>& layers, int64_t truncate_split_layer = 0,
                        int64_t truncate_tail_len = 0);
  STUStackOutput forward(const torch::Tensor& x, const torch::Tensor& x_offsets, int64_t max_seq_len,
                         const torch::Tensor& num_targets);

  size_t size() const { return layers_.size(); }
  STULayer layer(size_t i) const { return layers_.at(i); }

 private:
  std::vector<STULayer> layers_;
  int64_t truncate_split_layer_, truncate_tail_len_;
};
TORCH_MODULE(STUStack);

}  // namespace tzrec::nn::gr
