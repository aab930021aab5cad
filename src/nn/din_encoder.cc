#include "nn/din_encoder.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/sequence_inputs.h"
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
  SequenceInputs in = read_sequence_inputs(grouped, "DINEncoder", input_, sequence_dim_, query_dim_, max_seq_length_);
  const int64_t batch = in.sequence.size(0);
  const int64_t steps = in.sequence.size(1);
  // Nothing to attend to (every row empty): the weighted sum of no steps. The MLP, and so its
  // BatchNorm statistics, is skipped for such a batch.
  if (steps == 0) return torch::zeros({batch, sequence_dim_}, in.sequence.options());
  torch::Tensor query = in.query;
  if (query_dim_ < sequence_dim_) query = torch::constant_pad_nd(query, {0, sequence_dim_ - query_dim_});
  torch::Tensor queries = query.unsqueeze(1).expand({batch, steps, sequence_dim_});  // [B, T, D]
  torch::Tensor attn_input = torch::cat({queries, in.sequence, queries - in.sequence, queries * in.sequence}, -1);
  torch::Tensor logits = linear_forward(mlp_->forward(attn_input), linear_->weight, linear_->bias);  // [B, T, 1]
  return attention_pool(logits.squeeze(2), in.length, in.sequence);
}

}  // namespace tzrec::nn
