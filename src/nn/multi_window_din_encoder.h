// DIN-style attention summed over consecutive time windows of a sequence group (TorchEasyRec
// tzrec/modules/sequence.py MultiWindowDINEncoder; config message tzrec.protos.MultiWindowDINEncoder).
//
// Inputs, from the group's tensors (see forward): query q [B, Dq], sequence s [B, T, D] right-padded
// with zeros, lengths len [B]. windows_len w_0 … w_{L−1} split the first
// S = Σ w_i steps into L consecutive windows; window i covers steps [c_i, c_i + w_i), c_i = Σ_{j<i} w_j.
// There is no max_seq_length (the message has none).
//   q' = q padded on the right with zeros to D (Dq ≤ D)
//   x  = [s, q' ⊙ s, q'] per step                                  [B, T, 3D]
//   a  = prelu(linear(mlp(x)))                                     [B, T, 1]   (no softmax)
//   u_t = (t < len ? a_t : 0) · s_t                                [B, T, D]
//   r_i = Σ_{t in window i} u_t / max(min(len − c_i, w_i), 1)     [B, L, D]
//   out = [r_0, …, r_{L−1}, q'] flattened                          [B, D·(L+1)]
// Steps t ≥ S belong to no window and are dropped (TorchEasyRec pads the time axis to S with
// F.pad, whose negative padding for T > S truncates); a window reaching past T sums the steps it
// has. The divisor is computed from the true lengths, so a row longer than S divides its last
// window by w_{L−1} even though steps beyond S were dropped. The attention MLP still runs on all B × T
// steps (training-mode BatchNorm statistics cover them all, as in TorchEasyRec). An empty row
// (len 0) gives zero windows followed by q'; a batch with T = 0 skips the MLP and gives the same.
//
// State-dict names (relative to the encoder):
//   windows_len [L], cumsum_windows_len [L]  int64 buffers: w_i and c_i
//   mlp.mlp.<i>.perceptron.…   MLP(3D, attn_mlp) with dim 3 (nn/mlp.h: BatchNorm at perceptron.2)
//   linear.weight [1, H], linear.bias [1]   (H = attn_mlp.hidden_units.back())
//   active.weight [1]                       PReLU, one slope, initialised to 0.25
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

struct MultiWindowDINEncoderOptions {
  MLPOptions attn_mlp;               // its dim is overridden to 3
  std::vector<int64_t> windows_len;  // steps per window, from step 0 on; non-empty, each > 0
};

class MultiWindowDINEncoderImpl : public torch::nn::Module {
 public:
  // sequence_dim D and query_dim Dq: the widths of "<input>.sequence" and "<input>.query". input:
  // the sequence group's name. config_path names the MultiWindowDINEncoder message in errors. Throws
  // tzrec::ConfigError for Dq > D, an empty windows_len or a window ≤ 0 (path
  // "<config_path>.windows_len"), and for bad attn_mlp options (path "<config_path>.attn_mlp").
  MultiWindowDINEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input,
                            MultiWindowDINEncoderOptions options,
                            const std::string& config_path = "MultiWindowDINEncoder");
  // grouped holds "<input>.query" [B, Dq] float, "<input>.sequence" [B, T, D] float and
  // "<input>.sequence_length" [B] int32/int64 → [B, D·(L+1)]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
  int64_t output_dim() const { return sequence_dim_ * (static_cast<int64_t>(windows_.size()) + 1); }
  const std::string& input() const { return input_; }

 private:
  int64_t sequence_dim_ = 0;
  int64_t query_dim_ = 0;
  std::string input_;
  std::vector<int64_t> windows_;  // windows_len, on the host (the window slices)
  torch::Tensor windows_len_;         // buffer "windows_len"
  torch::Tensor cumsum_windows_len_;  // buffer "cumsum_windows_len"
  MLP mlp_{nullptr};
  torch::nn::Linear linear_{nullptr};
  torch::nn::PReLU active_{nullptr};
};
TORCH_MODULE(MultiWindowDINEncoder);

}  // namespace tzrec::nn
