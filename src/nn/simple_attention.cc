#include "nn/simple_attention.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/sequence_inputs.h"

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
  SequenceInputs in =
      read_sequence_inputs(grouped, "SimpleAttention", input_, sequence_dim_, sequence_dim_, max_seq_length_);
  torch::Tensor logits = in.sequence.matmul(in.query.unsqueeze(2)).squeeze(2);  // [B, T]
  return attention_pool(logits, in.length, in.sequence);
}

}  // namespace tzrec::nn
