// The positional encoder of the generative models (TorchEasyRec's HSTUPositionalEncoder,
// tzrec/modules/gr/positional_encoder.py and tzrec/ops/_pytorch/pt_position.py; config
// GRPositionalEncoder). Adds to every item of the jagged sequence x [L, D] (scaled by √D) a learned
// position embedding and, with use_time_encoding, a learned time-gap embedding.
//
// For sequence b of n items (n includes the c contextual items in front), with t = 0 .. n − 1,
// h = n − num_targets[b] and P = num_position_buckets:
//   without time encoding: position min(t, min(h, P − 1))
//   with time encoding:    position min(c + (h − min(t, h)), P − 1) (no targets: c + n − t),
//                          and t itself for t < c (the contextual items);
//                          time bucket ⌊clamp(f(max(q − ts_t, 1e-6) / increments) / N, 0, 1) · N⌋
//                          with f = sqrt | log, N = num_time_buckets and q the query time: the
//                          row's given query time, else its last item's timestamp (0 for an empty
//                          row). Computed in float32, as TorchEasyRec.
// State dict: "_position_embeddings_weight" [P, D] ~ U(±√(1/P)); with time encoding
// "_timestamp_embeddings_weight" [N + 1, D] ~ U(±√(1/N)).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn::gr {

struct PositionalEncoderOptions {
  int64_t num_position_buckets = 0;
  int64_t num_time_buckets = 0;
  bool use_time_encoding = false;
  std::string time_bucket_fn = "sqrt";  // "sqrt" | "log"
  double time_bucket_increments = 60.0;
};

class PositionalEncoderImpl : public torch::nn::Module {
 public:
  // embedding_dim: D; contextual_seq_len: c.
  PositionalEncoderImpl(int64_t embedding_dim, int64_t contextual_seq_len, PositionalEncoderOptions options);
  // seq_offsets [B + 1]; seq_timestamps [L] (any numeric dtype); seq_embeddings [L, D];
  // num_targets [B] or undefined; query_time [B] / [B, 1] or undefined → [L, D]
  torch::Tensor forward(const torch::Tensor& seq_offsets, const torch::Tensor& seq_timestamps,
                        const torch::Tensor& seq_embeddings, const torch::Tensor& num_targets,
                        const torch::Tensor& query_time = {});

 private:
  int64_t embedding_dim_, contextual_seq_len_;
  PositionalEncoderOptions options_;
  torch::Tensor position_weight_, timestamp_weight_;
};
TORCH_MODULE(PositionalEncoder);

}  // namespace tzrec::nn::gr
