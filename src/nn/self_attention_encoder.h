// Multi-head self-attention over a sequence group, mean-pooled over its steps (TorchEasyRec
// tzrec/modules/sequence.py SelfAttentionEncoder; config message tzrec.protos.SelfAttentionEncoder).
// The query is not used.
//
// Inputs, from the group's tensors (see forward): sequence s [B, T, D] right-padded with zeros,
// lengths len [B]. With max_seq_length > 0, s keeps its first max_seq_length steps (T below is the
// kept count). A = multihead_attn_dim, H = num_heads, h = A / H.
//   Q = _query(s), K = _key(s), V = _value(s)                      [B, T, A]   (Linear D → A)
//   q, k, v = Q W_q^T + b_q, K W_k^T + b_k, V W_v^T + b_v, split into H heads of h
//             (W_q | W_k | W_v = the three row blocks of _multihead_attn.in_proj_weight)
//   p_{t,u} = softmax over u < len of q_t · k_u / √h                (per head; dropout in training)
//   o_t = out_proj(concat over heads of Σ_u p_{t,u} v_u) for t < len, 0 for t ≥ len   [B, T, A]
//   out = Σ_t nan_to_num(o_t) / max(len, 1)                         [B, A]
// This is torch.nn.MultiheadAttention with TorchEasyRec's boolean attn_mask (query t and key u both
// below len), which masks every key of a padded query row: torch gives that row NaN and
// TorchEasyRec's nan_to_num turns it into 0. The forward values are the same here, but the padded
// rows are zeroed directly instead of passing through NaN: in torch those NaN rows make the
// gradients of every parameter NaN as soon as one row of the batch is shorter than T (0 · NaN in
// the backward of out_proj and of the value product), here they are finite.
// Quirk kept from TorchEasyRec: max_seq_length cuts the steps but not len, so a row longer than
// max_seq_length sums max_seq_length outputs and still divides by its full length.
// An empty row (len 0) gives 0; an all-empty batch (T = 0) gives zeros.
//
// State-dict names (relative to the encoder; PyTorch's nn.Linear / nn.MultiheadAttention names):
//   _query.weight [A, D], _query.bias [A]   (likewise _key, _value)
//   _multihead_attn.in_proj_weight [3A, A], _multihead_attn.in_proj_bias [3A]
//   _multihead_attn.out_proj.weight [A, A], _multihead_attn.out_proj.bias [A]
// Initialisation as PyTorch's: the three Linears and out_proj.weight as nn.Linear, in_proj_weight
// Xavier-uniform, in_proj_bias and out_proj.bias zero.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn {

struct SelfAttentionEncoderOptions {
  int64_t multihead_attn_dim = 512;  // A; a multiple of num_heads
  int64_t num_heads = 8;             // H > 0
  double dropout = 0.0;              // on the attention weights, training only; in [0, 1]
  int64_t max_seq_length = 0;        // ≤ 0: use every step
};

// The parameters and the attention of torch.nn.MultiheadAttention(A, H, dropout, batch_first=True)
// for query = key = value length, with rows of padded queries zeroed (see above).
class MaskedMultiheadAttentionImpl : public torch::nn::Module {
 public:
  MaskedMultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads, double dropout);
  // q, k, v [B, T, A] (before the input projection); valid [B, T] bool (t < len) → [B, T, A]
  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& valid);

 private:
  int64_t embed_dim_ = 0;
  int64_t num_heads_ = 0;
  double dropout_ = 0.0;
  torch::Tensor in_proj_weight_;  // [3A, A]
  torch::Tensor in_proj_bias_;    // [3A]
  torch::nn::Linear out_proj_{nullptr};
};
TORCH_MODULE(MaskedMultiheadAttention);

class SelfAttentionEncoderImpl : public torch::nn::Module {
 public:
  // sequence_dim D: the width of "<input>.sequence"; query_dim is accepted for a signature common to
  // the sequence encoders and ignored. input: the sequence group's name. config_path names the
  // SelfAttentionEncoder message in errors. Throws tzrec::ConfigError for num_heads ≤ 0,
  // multihead_attn_dim ≤ 0 or not a multiple of num_heads, and dropout outside [0, 1].
  SelfAttentionEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input,
                           SelfAttentionEncoderOptions options,
                           const std::string& config_path = "SelfAttentionEncoder");
  // grouped holds "<input>.sequence" [B, T, D] float and "<input>.sequence_length" [B] int32/int64
  // → [B, multihead_attn_dim]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
  int64_t output_dim() const { return multihead_attn_dim_; }
  const std::string& input() const { return input_; }

 private:
  int64_t sequence_dim_ = 0;
  int64_t multihead_attn_dim_ = 0;
  std::string input_;
  int64_t max_seq_length_ = 0;
  torch::nn::Linear query_{nullptr};
  torch::nn::Linear key_{nullptr};
  torch::nn::Linear value_{nullptr};
  MaskedMultiheadAttention multihead_attn_{nullptr};
};
TORCH_MODULE(SelfAttentionEncoder);

}  // namespace tzrec::nn
