// Sum or mean of a sequence group's steps (TorchEasyRec tzrec/modules/sequence.py PoolingEncoder;
// config message tzrec.protos.PoolingEncoder). No parameters; the query is not used.
//
// Inputs, from the group's tensors (see forward): sequence s [B, T, D] right-padded with zeros,
// lengths len [B] (mean only). With max_seq_length > 0, s keeps its first max_seq_length steps.
//   sum:  out = Σ_t s_t                                            [B, D]
//   mean: out = Σ_t s_t / max(min(len, max_seq_length if > 0), 1)  [B, D]
// The sum relies on the padding being zero; an empty row (len 0) gives 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn {

struct PoolingEncoderOptions {
  std::string pooling_type = "mean";  // "mean" | "sum"
  int64_t max_seq_length = 0;         // ≤ 0: use every step
};

class PoolingEncoderImpl : public torch::nn::Module {
 public:
  // sequence_dim D: the width of "<input>.sequence"; query_dim is accepted for a signature common to
  // the sequence encoders and ignored. input: the sequence group's name. config_path names the
  // PoolingEncoder message in errors. Throws tzrec::ConfigError for a pooling_type other than
  // "mean" or "sum".
  PoolingEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input, PoolingEncoderOptions options,
                     const std::string& config_path = "PoolingEncoder");
  // grouped holds "<input>.sequence" [B, T, D] float and, for mean, "<input>.sequence_length" [B]
  // int32/int64 → [B, D]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
  int64_t output_dim() const { return sequence_dim_; }
  const std::string& input() const { return input_; }

 private:
  int64_t sequence_dim_ = 0;
  std::string input_;
  bool mean_ = true;
  int64_t max_seq_length_ = 0;
};
TORCH_MODULE(PoolingEncoder);

}  // namespace tzrec::nn
