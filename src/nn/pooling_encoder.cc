#include "nn/pooling_encoder.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::nn {

PoolingEncoderImpl::PoolingEncoderImpl(int64_t sequence_dim, int64_t /*query_dim*/, std::string input,
                                       PoolingEncoderOptions options, const std::string& config_path)
    : sequence_dim_(sequence_dim),
      input_(std::move(input)),
      mean_(options.pooling_type == "mean"),
      max_seq_length_(options.max_seq_length) {
  if (options.pooling_type != "mean" && options.pooling_type != "sum") {
    throw ConfigError(fmt::format("{}.pooling_type: \"{}\" is not supported; use \"mean\" or \"sum\"", config_path,
                                  options.pooling_type));
  }
}

torch::Tensor PoolingEncoderImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  auto get = [&](const char* suffix) -> const torch::Tensor& {
    auto it = grouped.find(input_ + suffix);
    TORCH_CHECK(it != grouped.end(), "PoolingEncoder: no tensor \"", input_, suffix, "\" among the group's inputs");
    return it->second;
  };
  torch::Tensor sequence = get(".sequence");  // [B, T, D]
  TORCH_CHECK(sequence.dim() == 3 && sequence.size(2) == sequence_dim_, "PoolingEncoder \"", input_,
              "\": sequence must be [B, T, ", sequence_dim_, "], got ", sequence.sizes());
  if (max_seq_length_ > 0) sequence = sequence.slice(1, 0, max_seq_length_);
  torch::Tensor pooled = sequence.sum(1);  // [B, D]
  if (!mean_) return pooled;
  torch::Tensor length = get(".sequence_length");  // [B]
  TORCH_CHECK(length.dim() == 1 && length.size(0) == sequence.size(0), "PoolingEncoder \"", input_,
              "\": sequence_length must be [", sequence.size(0), "], got ", length.sizes());
  if (max_seq_length_ > 0) length = length.clamp_max(max_seq_length_);
  return pooled / length.clamp_min(1).unsqueeze(1);
}

}  // namespace tzrec::nn
