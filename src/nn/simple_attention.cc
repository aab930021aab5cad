#include "nn/simple_attention.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::nn {

SimpleAttentionImpl::SimpleAttentionImpl(int64_t sequence_dim, int64_t query_dim, std::string input,
                                         SimpleAttentionOptions options, const std::string& config_path)
    : sequence_dim_(sequence_dim), input_(std::move(input)), max_seq_length_(options.max_seq_length) {
  if (query_dim != sequence_dim_) {
    throw ConfigError(fmt::format(
        "{}: SimpleAttention needs the query of sequence group \"{}\" as wide as its sequence, got {} vs {}: "
        "give the query features the same total embedding_dim as the sequence features, or use a "
        "din_encoder (which pads a narrower query)",
        config_path, input_, query_dim, sequence_dim_));
  }
}

torch::Tensor SimpleAttentionImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  auto get = [&](const char* suffix) -> const torch::Tensor& {
    auto it = grouped.find(input_ + suffix);
    TORCH_CHECK(it != grouped.end(), "SimpleAttention: no tensor \"", input_, suffix, "\" among the group's inputs");
    return it->second;
  };
  const torch::Tensor& query = get(".query");      // [B, D]
  torch::Tensor sequence = get(".sequence");       // [B, T, D]
  torch::Tensor length = get(".sequence_length");  // [B]
  const int64_t batch = sequence.size(0);
  TORCH_CHECK(sequence.dim() == 3 && sequence.size(2) == sequence_dim_, "SimpleAttention \"", input_,
              "\": sequence must be [B, T, ", sequence_dim_, "], got ", sequence.sizes());
  TORCH_CHECK(query.dim() == 2 && query.size(0) == batch && query.size(1) == sequence_dim_, "SimpleAttention \"",
              input_, "\": query must be [", batch, ", ", sequence_dim_, "], got ", query.sizes());
  TORCH_CHECK(length.dim() == 1 && length.size(0) == batch, "SimpleAttention \"", input_,
              "\": sequence_length must be [", batch, "], got ", length.sizes());
  if (max_seq_length_ > 0) {
    sequence = sequence.slice(1, 0, max_seq_length_);
    length = length.clamp_max(max_seq_length_);
  }
  const int64_t steps = sequence.size(1);
  torch::Tensor logits = sequence.matmul(query.unsqueeze(2)).squeeze(2);  // [B, T]
  // −2³¹ + 1 overflows fp16 to −inf (a NaN softmax for an empty row): mask in fp32 at least.
  if (logits.scalar_type() == torch::kHalf || logits.scalar_type() == torch::kBFloat16) {
    logits = logits.to(torch::kFloat);
  }
  torch::Tensor valid = torch::arange(steps, length.options().dtype(torch::kLong)).unsqueeze(0) <
                        length.unsqueeze(1);                                                  // [B, T]
  logits = logits.masked_fill(valid.logical_not(), kPaddingLogit);
  return torch::softmax(logits, -1).unsqueeze(1).matmul(sequence).squeeze(1);  // [B, 1, T] × [B, T, D] → [B, D]
}

}  // namespace tzrec::nn
