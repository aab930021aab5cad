#include "nn/gr/positional_encoder.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tzrec::nn::gr {

PositionalEncoderImpl::PositionalEncoderImpl(int64_t embedding_dim, int64_t contextual_seq_len,
                                             PositionalEncoderOptions options)
    : embedding_dim_(embedding_dim), contextual_seq_len_(contextual_seq_len), options_(std::move(options)) {
  TORCH_CHECK(options_.num_position_buckets > 0, "PositionalEncoder: num_position_buckets must be positive");
  const double pb = std::sqrt(1.0 / static_cast<double>(options_.num_position_buckets));
  position_weight_ = register_parameter("_position_embeddings_weight",
                                        torch::empty({options_.num_position_buckets, embedding_dim}).uniform_(-pb, pb));
  if (options_.use_time_encoding) {
    TORCH_CHECK(options_.num_time_buckets > 0, "PositionalEncoder: num_time_buckets must be positive");
    const double tb = std::sqrt(1.0 / static_cast<double>(options_.num_time_buckets));
    timestamp_weight_ = register_parameter(
        "_timestamp_embeddings_weight", torch::empty({options_.num_time_buckets + 1, embedding_dim}).uniform_(-tb, tb));
  }
}

torch::Tensor PositionalEncoderImpl::forward(const torch::Tensor& seq_offsets, const torch::Tensor& seq_timestamps,
                                             const torch::Tensor& seq_embeddings, const torch::Tensor& num_targets,
                                             const torch::Tensor& query_time) {
  auto offsets = seq_offsets.to(torch::kInt64).contiguous();
  const int64_t batch = offsets.size(0) - 1;
  const int64_t* off = offsets.data_ptr<int64_t>();
  const int64_t total = off[batch];
  TORCH_CHECK(seq_embeddings.size(0) == total, "PositionalEncoder: offsets do not match the embeddings");
  torch::Tensor targets;
  if (num_targets.defined()) targets = num_targets.to(torch::kInt64).contiguous();
  const int64_t max_pos = options_.num_position_buckets;
  const int64_t c = contextual_seq_len_;

  auto pos_index = torch::empty({total}, torch::kInt64);
  int64_t* pos = pos_index.data_ptr<int64_t>();
  torch::Tensor time_index;
  if (options_.use_time_encoding) time_index = torch::empty({total}, torch::kInt64);

  // Timestamps and the anchors in float32, as TorchEasyRec pads them into a float32 tensor.
  torch::Tensor ts_f, q_f;
  if (options_.use_time_encoding) {
    ts_f = seq_timestamps.reshape({-1}).to(torch::kFloat).contiguous();
    TORCH_CHECK(ts_f.size(0) == total, "PositionalEncoder: timestamps do not match the embeddings");
    if (query_time.defined()) q_f = query_time.reshape({-1}).to(torch::kFloat).contiguous();
  }
  const float nb = static_cast<float>(options_.num_time_buckets);
  const float inc = static_cast<float>(options_.time_bucket_increments);
  const bool use_log = options_.time_bucket_fn == "log";

  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = off[b + 1] - off[b];
    const int64_t nt = targets.defined() ? targets.data_ptr<int64_t>()[b] : 0;
    const int64_t h = n - nt;
    for (int64_t t = 0; t < n; ++t) {
      int64_t p;
      if (!options_.use_time_encoding) {
        p = std::min(t, std::min(h, max_pos - 1));
      } else if (t < c) {
        p = t;
      } else {
        p = (targets.defined() ? h - std::min(t, h) : n - t) + c;
        p = std::min(p, max_pos - 1);
      }
      pos[off[b] + t] = p;
    }
    if (options_.use_time_encoding) {
      const float* ts = ts_f.data_ptr<float>() + off[b];
      const float q = q_f.defined() ? q_f.data_ptr<float>()[b] : (n > 0 ? ts[n - 1] : 0.0f);
      int64_t* ti = time_index.data_ptr<int64_t>() + off[b];
      for (int64_t t = 0; t < n; ++t) {
        float gap = std::max(q - ts[t], 1e-6f) / inc;
        gap = use_log ? std::log(gap) : std::sqrt(gap);
        float frac = std::min(std::max(gap / 1.0f / nb, 0.0f), 1.0f);
        ti[t] = static_cast<int64_t>(frac * nb);  // truncation toward zero, as Tensor.int()
      }
    }
  }
  auto out = seq_embeddings * std::sqrt(static_cast<double>(embedding_dim_));
  auto added = position_weight_.index_select(0, pos_index);
  if (options_.use_time_encoding) added = added + timestamp_weight_.index_select(0, time_index);
  return out + added.to(out.scalar_type());
}

}  // namespace tzrec::nn::gr
