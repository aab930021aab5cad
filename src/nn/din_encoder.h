// DIN target attention over a sequence group (TorchEasyRec tzrec/modules/sequence.py DINEncoder;
// config message tzrec.protos.DINEncoder).
//
// Inputs, from the group's tensors (see forward): query q [B, Dq], sequence s [B, T, D] right-padded
// with zeros, lengths len [B]. With max_seq_length > 0, s keeps its first max_seq_length steps and
// len is clamped to it.
//   q' = q padded on the right with zeros to D (Dq ≤ D)
//   x  = [q', s, q' − s, q' ⊙ s] per step                          [B, T, 4D]
//   a  = linear(mlp(x))                                            [B, T, 1]
//   w  = softmax over t of (t < len ? a : −2³¹ + 1)                [B, T]
//   out = Σ_t w_t s_t                                              [B, D]
// An empty row (len 0) weighs its zero padding uniformly and gives 0; an all-empty batch (T = 0)
// gives zeros. The attention MLP runs on padded steps too, so its training-mode BatchNorm
// statistics cover all B × T positions, as in TorchEasyRec. Without BatchNorm in training, the
// attention MLP runs on the valid steps only (packed, N = Σ lengths rows instead of B × T): a padded
// step's logit is masked before the softmax, so its MLP output reaches neither the encoder's output
// nor any gradient, and leaving it out gives the same values and gradients with about
// N / (B · T) of the work (a batch of histories filling half of T on average: half).
//
// The first layer of the attention MLP (weight W [H, 4D] = [W_q | W_s | W_d | W_p], bias b) is
// computed without building x (docs/tzrec-compatibility.md §4, DINEncoder: same parameters, same
// values up to float rounding):
//   W·x + b = ((W_q + W_d)·q' + b)  +  [W_s − W_d | W_p]·[s, q' ⊙ s]
//             per row [B, H]            per step: [B, T, 2D] inputs instead of 4D
// (columns of W_q, W_d, W_p beyond Dq multiply q' = 0 and are left out). The blocks are built from
// W in the forward pass, so autograd gives W its [H, 4D] gradient. From that pre-activation the MLP
// runs unchanged (MLP::forward_from_first_linear: BatchNorm, activation, dropout, later layers);
// Linear → ReLU without a norm runs as one autograd node (din_encoder.cc) that builds the step
// input [s, q' ⊙ s] chunk by chunk in cache, adds the per-row term as a bias, and never holds the
// [B, T, D + Dq] input or its gradient whole. Under fp16 emulation (mixed_precision FP16 on the CPU) the
// layer runs on x as written, so that its fp16 rounding is the emulated GPU's.
//
// State-dict names (relative to the encoder):
//   mlp.mlp.<i>.perceptron.…   MLP(4D, attn_mlp) with dim 3 (nn/mlp.h: BatchNorm at perceptron.2)
//   linear.weight [1, H], linear.bias [1]   (H = attn_mlp.hidden_units.back())
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

struct DINEncoderOptions {
  MLPOptions attn_mlp;         // its dim is overridden to 3
  int64_t max_seq_length = 0;  // ≤ 0: use every step
};

class DINEncoderImpl : public torch::nn::Module {
 public:
  // sequence_dim D and query_dim Dq: the widths of "<input>.sequence" and "<input>.query". input:
  // the sequence group's name. config_path names the DINEncoder message in errors (e.g.
  // "model_config.multi_tower_din.din_towers[0]"). Throws tzrec::ConfigError for Dq > D and for bad
  // attn_mlp options (path "<config_path>.attn_mlp").
  DINEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input, DINEncoderOptions options,
                 const std::string& config_path = "DINEncoder");
  // grouped holds "<input>.query" [B, Dq] float, "<input>.sequence" [B, T, D] float and
  // "<input>.sequence_length" [B] int32/int64 → [B, D]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
  int64_t output_dim() const { return sequence_dim_; }
  const std::string& input() const { return input_; }

  // The attention MLP's output [B, T, attn_mlp.hidden_units.back()] for query [B, Dq] and sequence
  // [B, T, D] (T > 0): the split first layer above (split = false: the MLP on x = [q', s, q' − s,
  // q' ⊙ s] as written, which forward uses under fp16 emulation). With `rows` [N] (int64), the
  // sequence is N rows [N, T', D] and row i attends with query[rows[i]] (the packed valid steps).
  torch::Tensor attention_mlp(const torch::Tensor& query, const torch::Tensor& sequence, bool split = true,
                              const torch::Tensor& rows = {});

 private:
  int64_t sequence_dim_ = 0;
  int64_t query_dim_ = 0;
  std::string input_;
  int64_t max_seq_length_ = 0;
  MLP mlp_{nullptr};
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(DINEncoder);

}  // namespace tzrec::nn
