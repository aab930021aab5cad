// Dot-product attention of the query over a sequence group (TorchEasyRec tzrec/modules/sequence.py
// SimpleAttention; config message tzrec.protos.SimpleAttention). No parameters.
//
// Inputs, from the group's tensors (see forward): query q [B, D], sequence s [B, T, D] right-padded
// with zeros, lengths len [B]. With max_seq_length > 0, s keeps its first max_seq_length steps and
// len is clamped to it.
//   a_t = s_t · q                                                  [B, T]
//   w   = softmax over t of (t < len ? a_t : −2³¹ + 1)             [B, T]
//   out = Σ_t w_t s_t                                              [B, D]
// An empty row (len 0) weighs its zero padding uniformly and gives 0; T = 0 gives zeros.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn {

struct SimpleAttentionOptions {
  int64_t max_seq_length = 0;  // ≤ 0: use every step
};

class SimpleAttentionImpl : public torch::nn::Module {
 public:
  // sequence_dim D and query_dim Dq: the widths of "<input>.sequence" and "<input>.query". input:
  // the sequence group's name. config_path names the SimpleAttention message in errors. Throws
  // tzrec::ConfigError when Dq != D.
  SimpleAttentionImpl(int64_t sequence_dim, int64_t query_dim, std::string input, SimpleAttentionOptions options,
                      const std::string& config_path = "SimpleAttention");
  // grouped holds "<input>.query" [B, D] float, "<input>.sequence" [B, T, D] float and
  // "<input>.sequence_length" [B] int32/int64 → [B, D]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
  int64_t output_dim() const { return sequence_dim_; }
  const std::string& input() const { return input_; }

 private:
  int64_t sequence_dim_ = 0;
  std::string input_;
  int64_t max_seq_length_ = 0;
};
TORCH_MODULE(SimpleAttention);

}  // namespace tzrec::nn
