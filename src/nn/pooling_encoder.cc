#include "nn/pooling_encoder.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/sequence_inputs.h"

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
  SequenceInputs in = read_sequence_inputs(grouped, "PoolingEncoder", input_, sequence_dim_, /*query_dim=*/-1,
                                           max_seq_length_, /*with_length=*/mean_);
  torch::Tensor pooled = in.sequence.sum(1);  // [B, D]; padding is zero
  if (!mean_) return pooled;
  return pooled / in.length.clamp_min(1).unsqueeze(1);
}

}  // namespace tzrec::nn
