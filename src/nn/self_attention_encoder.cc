#include "nn/self_attention_encoder.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/fp16_linear.h"
#include "nn/sequence_inputs.h"

namespace tzrec::nn {

MaskedMultiheadAttentionImpl::MaskedMultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads, double dropout)
    : embed_dim_(embed_dim), num_heads_(num_heads), dropout_(dropout) {
  TORCH_CHECK(embed_dim_ > 0 && num_heads_ > 0 && embed_dim_ % num_heads_ == 0,
              "MaskedMultiheadAttention: embed_dim ", embed_dim_, " must be a positive multiple of num_heads ",
              num_heads_);
  in_proj_weight_ = register_parameter("in_proj_weight", torch::empty({3 * embed_dim_, embed_dim_}));
  in_proj_bias_ = register_parameter("in_proj_bias", torch::zeros({3 * embed_dim_}));
  out_proj_ = register_module("out_proj", torch::nn::Linear(embed_dim_, embed_dim_));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight_);
  out_proj_->bias.zero_();
}

torch::Tensor MaskedMultiheadAttentionImpl::forward(const torch::Tensor& q, const torch::Tensor& k,
                                                    const torch::Tensor& v, const torch::Tensor& valid) {
  const int64_t batch = q.size(0);
  const int64_t steps = q.size(1);
  const int64_t head_dim = embed_dim_ / num_heads_;
  std::vector<torch::Tensor> w = in_proj_weight_.chunk(3, 0);
  std::vector<torch::Tensor> b = in_proj_bias_.chunk(3, 0);
  // Input projection i, split into heads: [B, T, A] → [B, H, T, h] (head j = channels [j·h, (j+1)·h)).
  auto project = [&](const torch::Tensor& x, size_t i) {
    return linear_forward(x, w[i], b[i]).reshape({batch, steps, num_heads_, head_dim}).transpose(1, 2);
  };
  torch::Tensor qh = project(q, 0);
  torch::Tensor kh = project(k, 1);
  torch::Tensor vh = project(v, 2);
  torch::Tensor scores = (qh / std::sqrt(static_cast<double>(head_dim))).matmul(kh.transpose(-2, -1));  // [B, H, T, T]
  // Keys at or beyond the length get weight 0. A row of length 0 masks nothing here (its outputs are
  // zeroed below), so no softmax row is all −inf and nothing turns NaN.
  torch::Tensor masked_keys = valid.logical_not().logical_and(valid.any(1, /*keepdim=*/true));  // [B, T]
  scores = scores.to(torch::kFloat).masked_fill(masked_keys.view({batch, 1, 1, steps}),
                                                -std::numeric_limits<float>::infinity());
  torch::Tensor probs = torch::dropout(torch::softmax(scores, -1), dropout_, is_training());
  torch::Tensor heads = probs.to(vh.scalar_type()).matmul(vh);  // [B, H, T, h]
  torch::Tensor out = linear_forward(heads.transpose(1, 2).reshape({batch, steps, embed_dim_}), out_proj_->weight,
                                     out_proj_->bias);  // [B, T, A]
  // Padded query rows: TorchEasyRec's attn_mask masks all their keys (NaN in torch, 0 after its nan_to_num).
  return out.masked_fill(valid.logical_not().unsqueeze(2), 0);
}

SelfAttentionEncoderImpl::SelfAttentionEncoderImpl(int64_t sequence_dim, int64_t /*query_dim*/, std::string input,
                                                   SelfAttentionEncoderOptions options,
                                                   const std::string& config_path)
    : sequence_dim_(sequence_dim),
      multihead_attn_dim_(options.multihead_attn_dim),
      input_(std::move(input)),
      max_seq_length_(options.max_seq_length) {
  if (options.num_heads <= 0) {
    throw ConfigError(fmt::format("{}.num_heads: {}; the self-attention needs at least one head (default 8)",
                                  config_path, options.num_heads));
  }
  if (multihead_attn_dim_ <= 0) {
    throw ConfigError(fmt::format("{}.multihead_attn_dim: {}; must be a positive multiple of num_heads (default 512)",
                                  config_path, multihead_attn_dim_));
  }
  if (multihead_attn_dim_ % options.num_heads != 0) {
    throw ConfigError(fmt::format(
        "{}.multihead_attn_dim: {} is not divisible by num_heads ({}); make it a multiple of num_heads, each head "
        "gets multihead_attn_dim / num_heads channels",
        config_path, multihead_attn_dim_, options.num_heads));
  }
  if (!(options.dropout >= 0.0 && options.dropout <= 1.0)) {
    throw ConfigError(fmt::format("{}.dropout: {} is not a probability; give a value in [0, 1]", config_path,
                                  options.dropout));
  }
  query_ = register_module("_query", torch::nn::Linear(sequence_dim_, multihead_attn_dim_));
  key_ = register_module("_key", torch::nn::Linear(sequence_dim_, multihead_attn_dim_));
  value_ = register_module("_value", torch::nn::Linear(sequence_dim_, multihead_attn_dim_));
  multihead_attn_ = register_module(
      "_multihead_attn", MaskedMultiheadAttention(multihead_attn_dim_, options.num_heads, options.dropout));
}

torch::Tensor SelfAttentionEncoderImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  SequenceInputs in = read_sequence_inputs(grouped, "SelfAttentionEncoder", input_, sequence_dim_, /*query_dim=*/-1,
                                           max_seq_length_);
  const int64_t batch = in.sequence.size(0);
  const int64_t steps = in.sequence.size(1);
  // Nothing to attend to (every row empty): zeros, without running the layers.
  if (steps == 0) return torch::zeros({batch, multihead_attn_dim_}, in.sequence.options());
  // in.length is clamped to the kept steps, which gives the same mask as the full length.
  torch::Tensor valid =
      torch::arange(steps, in.length.options().dtype(torch::kLong)).unsqueeze(0) < in.length.unsqueeze(1);  // [B, T]
  torch::Tensor attended = multihead_attn_->forward(linear_forward(in.sequence, query_->weight, query_->bias),
                                                    linear_forward(in.sequence, key_->weight, key_->bias),
                                                    linear_forward(in.sequence, value_->weight, value_->bias), valid);
  attended = torch::nan_to_num(attended, 0.0);
  // TorchEasyRec divides by the length as given, not clamped to max_seq_length.
  const torch::Tensor& length = grouped.at(input_ + ".sequence_length");
  return attended.sum(1) / length.clamp_min(1).unsqueeze(1);
}

}  // namespace tzrec::nn
