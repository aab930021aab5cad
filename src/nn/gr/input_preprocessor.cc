#include "nn/gr/input_preprocessor.h"

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/gr/contextual_preprocessor.h"
#include "nn/gr/jagged.h"
#include "nn/gr/uih_preprocessor.h"

namespace tzrec::nn::gr {

void InputPreprocessor::init_contextual(int64_t contextual_feature_dim, int64_t max_contextual_seq_len,
                                        int64_t output_dim, std::string contextual_group) {
  max_contextual_seq_len_ = max_contextual_seq_len;
  contextual_feature_dim_ = contextual_feature_dim;
  output_dim_ = output_dim;
  contextual_group_ = std::move(contextual_group);
  if (max_contextual_seq_len_ <= 0) return;
  const double std = std::sqrt(2.0 / static_cast<double>(contextual_feature_dim + output_dim));
  contextual_weights_ = register_parameter(
      "_batched_contextual_linear_weights",
      torch::empty({max_contextual_seq_len, contextual_feature_dim, output_dim}).normal_(0.0, std));
  contextual_bias_ =
      register_parameter("_batched_contextual_linear_bias", torch::zeros({max_contextual_seq_len, 1, output_dim}));
}

const torch::Tensor& InputPreprocessor::input(const std::map<std::string, torch::Tensor>& grouped,
                                              const std::string& key) {
  auto it = grouped.find(key);
  TORCH_CHECK(it != grouped.end(), "generative model input '", key, "' is missing from the embedding groups");
  return it->second;
}

torch::Tensor InputPreprocessor::contextual_input(const std::map<std::string, torch::Tensor>& grouped) const {
  if (max_contextual_seq_len_ <= 0) return {};
  return input(grouped, contextual_group_);
}

torch::Tensor InputPreprocessor::project_contextual(const torch::Tensor& ctx) const {
  // [C, B, Dc] @ [C, Dc, D] + [C, 1, D] → [C, B, D] → [B, C, D]
  auto x = ctx.view({-1, max_contextual_seq_len_, contextual_feature_dim_}).transpose(0, 1);
  return torch::baddbmm(contextual_bias_.to(ctx.scalar_type()), x, contextual_weights_.to(ctx.scalar_type()))
      .transpose(0, 1);
}

void InputPreprocessor::prepend_contextual(const torch::Tensor& contextual, PreprocessedSequences* s) const {
  if (max_contextual_seq_len_ <= 0) return;
  const int64_t batch = s->seq_lengths.size(0);
  auto ctx_offsets = fixed_offsets(batch, max_contextual_seq_len_);
  s->seq_embeddings = concat_2d_jagged(contextual.reshape({-1, output_dim_}), s->seq_embeddings, ctx_offsets,
                                       s->seq_offsets);
  auto zeros = torch::zeros({batch * max_contextual_seq_len_, 1}, s->seq_timestamps.options());
  s->seq_timestamps =
      concat_2d_jagged(zeros, s->seq_timestamps.unsqueeze(-1), ctx_offsets, s->seq_offsets).squeeze(-1);
  s->max_seq_len += max_contextual_seq_len_;
  s->total_uih_len += max_contextual_seq_len_ * batch;
  s->seq_lengths = s->seq_lengths + max_contextual_seq_len_;
  s->seq_offsets = complete_cumsum(s->seq_lengths);
}

std::shared_ptr<InputPreprocessor> make_input_preprocessor(const InputPreprocessorOptions& options,
                                                           const InputPreprocessorDims& dims,
                                                           const std::string& config_path) {
  const std::string sub = config_path + "." + options.type;
  if (options.has_action_encoder && !options.has_action_mlp) {
    throw ConfigError(fmt::format("{}.action_mlp: must be set together with action_encoder", sub));
  }
  if (options.type == "contextual_preprocessor" || options.type == "contextual_interleave_preprocessor") {
    if (options.type == "contextual_interleave_preprocessor" && options.enable_interleaving &&
        !options.has_action_encoder) {
      throw ConfigError(fmt::format("{}.action_encoder: interleaving (enable_interleaving, on by default) needs an "
                                    "action encoder and action_mlp",
                                    sub));
    }
    return std::make_shared<ContextualPreprocessor>(options, dims, sub);
  }
  if (options.type == "uih_preprocessor") return std::make_shared<UIHPreprocessor>(options, dims, sub);
  throw ConfigError(fmt::format("{}: set contextual_preprocessor, contextual_interleave_preprocessor or "
                                "uih_preprocessor",
                                config_path));
}

}  // namespace tzrec::nn::gr
