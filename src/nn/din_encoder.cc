#include "nn/din_encoder.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {

DINEncoderImpl::DINEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input, DINEncoderOptions options,
                               const std::string& config_path)
    : sequence_dim_(sequence_dim),
      query_dim_(query_dim),
      input_(std::move(input)),
      max_seq_length_(options.max_seq_length) {
  if (query_dim_ > sequence_dim_) {
    throw ConfigError(fmt::format(
        "{}: the query of sequence group \"{}\" is wider ({}) than its sequence ({}); DINEncoder pads a "
        "narrower query with zeros but cannot shrink one: give the group's query features a total "
        "embedding_dim no larger than its sequence features'",
        config_path, input_, query_dim_, sequence_dim_));
  }
  options.attn_mlp.dim = 3;
  mlp_ = register_module("mlp", MLP(4 * sequence_dim_, std::move(options.attn_mlp), config_path + ".attn_mlp"));
  linear_ = register_module("linear", torch::nn::Linear(mlp_->output_dim(), 1));
}

torch::Tensor DINEncoderImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  auto get = [&](const char* suffix) -> const torch::Tensor& {
    auto it = grouped.find(input_ + suffix);
    TORCH_CHECK(it != grouped.end(), "DINEncoder: no tensor \"", input_, suffix, "\" among the group's inputs");
    return it->second;
  };
  torch::Tensor query = get(".query");                // [B, Dq]
  torch::Tensor sequence = get(".sequence");          // [B, T, D]
  torch::Tensor length = get(".sequence_length");     // [B]
  const int64_t batch = sequence.size(0);
  TORCH_CHECK(sequence.dim() == 3 && sequence.size(2) == sequence_dim_, "DINEncoder \"", input_,
              "\": sequence must be [B, T, ", sequence_dim_, "], got ", sequence.sizes());
  TORCH_CHECK(query.dim() == 2 && query.size(0) == batch && query.size(1) == query_dim_, "DINEncoder \"", input_,
              "\": query must be [", batch, ", ", query_dim_, "], got ", query.sizes());
  TORCH_CHECK(length.dim() == 1 && length.size(0) == batch, "DINEncoder \"", input_,
              "\": sequence_length must be [", batch, "], got ", length.sizes());
  if (max_seq_length_ > 0) {
    sequence = sequence.slice(1, 0, max_seq_length_);
    length = length.clamp_max(max_seq_length_);
  }
  const int64_t steps = sequence.size(1);
  // Nothing to attend to (every row empty): the weighted sum of no steps. The MLP, and so its
  // BatchNorm statistics, is skipped for such a batch.
  if (steps == 0) return torch::zeros({batch, sequence_dim_}, sequence.options());

  if (query_dim_ < sequence_dim_) query = torch::constant_pad_nd(query, {0, sequence_dim_ - query_dim_});
  torch::Tensor queries = query.unsqueeze(1).expand({batch, steps, sequence_dim_});  // [B, T, D]
  torch::Tensor attn_input = torch::cat({queries, sequence, queries - sequence, queries * sequence}, -1);
  torch::Tensor logits = linear_forward(mlp_->forward(attn_input), linear_->weight, linear_->bias);  // [B, T, 1]
  logits = logits.transpose(1, 2);                                                                   // [B, 1, T]
  // −2³¹ + 1 overflows fp16 to −inf (a NaN softmax for an empty row): mask in fp32 at least.
  if (logits.scalar_type() == torch::kHalf || logits.scalar_type() == torch::kBFloat16) {
    logits = logits.to(torch::kFloat);
  }
  torch::Tensor valid = torch::arange(steps, length.options().dtype(torch::kLong)).unsqueeze(0) <
                        length.unsqueeze(1);                                                  // [B, T]
  logits = logits.masked_fill(valid.logical_not().unsqueeze(1), kPaddingLogit);              // [B, 1, T]
  return torch::softmax(logits, -1).matmul(sequence).squeeze(1);                             // [B, D]
}

}  // namespace tzrec::nn
