#include "nn/gr/contextualized_mlp.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/gr/jagged.h"
#include "nn/gr/norms.h"

namespace tzrec::nn::gr {

namespace {

torch::nn::Linear xavier_linear(int64_t in, int64_t out) {
  torch::nn::Linear linear(in, out);
  init_linear_xavier_zero_bias(linear);
  return linear;
}

class SimpleContextualizedMLP : public ContextualizedMLP {
 public:
  SimpleContextualizedMLP(int64_t input_dim, int64_t output_dim, int64_t hidden_dim) {
    mlp_ = register_module("_mlp", torch::nn::Sequential(xavier_linear(input_dim, hidden_dim), SwishLayerNorm(hidden_dim),
                                                         xavier_linear(hidden_dim, output_dim), LayerNorm(output_dim)));
  }
  torch::Tensor forward(const torch::Tensor& seq, const torch::Tensor&, const torch::Tensor&) override {
    return mlp_->forward(seq);
  }

 private:
  torch::nn::Sequential mlp_{nullptr};
};

class ParameterizedContextualizedMLP : public ContextualizedMLP {
 public:
  ParameterizedContextualizedMLP(int64_t contextual_dim, int64_t input_dim, int64_t output_dim,
                                 const ContextualizedMLPOptions& o)
      : input_dim_(input_dim), output_dim_(output_dim), dropout_(o.contextual_dropout_ratio) {
    compress_ = register_module("_dense_features_compress", xavier_linear(contextual_dim, o.hidden_dim));
    attn_raw_ = register_module("_attn_raw_weights", torch::nn::Sequential(xavier_linear(o.hidden_dim, input_dim * output_dim)));
    attn_norm_ = register_module("_attn_weights_norm",
                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({input_dim, output_dim})));
    res_ = register_module("_res_weights", torch::nn::Sequential(xavier_linear(o.hidden_dim, o.hidden_dim),
                                                                 SwishLayerNorm(o.hidden_dim),
                                                                 xavier_linear(o.hidden_dim, output_dim)));
  }
  torch::Tensor forward(const torch::Tensor& seq, const torch::Tensor& seq_offsets, const torch::Tensor& ctx) override {
    TORCH_CHECK(ctx.defined(), "parameterized_mlp needs the contextual features");
    auto shared = compress_->forward(torch::dropout(ctx, dropout_, is_training()));
    // The layer norm in float32 (under bf16 autocast the Linear's output is bf16).
    auto weights = attn_norm_->forward(
        attn_raw_->forward(shared).reshape({-1, input_dim_, output_dim_}).to(attn_norm_->weight.scalar_type()));
    return jagged_dense_bmm_broadcast_add(seq_offsets, seq, weights.to(seq.scalar_type()), res_->forward(shared));
  }

 private:
  int64_t input_dim_, output_dim_;
  double dropout_;
  torch::nn::Linear compress_{nullptr};
  torch::nn::Sequential attn_raw_{nullptr}, res_{nullptr};
  torch::nn::LayerNorm attn_norm_{nullptr};
};

}  // namespace

std::shared_ptr<ContextualizedMLP> make_contextualized_mlp(const ContextualizedMLPOptions& options,
                                                           int64_t contextual_dim, int64_t input_dim,
                                                           int64_t output_dim, const std::string& config_path) {
  if (options.hidden_dim <= 0) {
    throw ConfigError(fmt::format("{}.{}.hidden_dim: must be positive", config_path, options.type));
  }
  if (options.type == "simple_mlp") {
    return std::make_shared<SimpleContextualizedMLP>(input_dim, output_dim, options.hidden_dim);
  }
  if (options.type == "parameterized_mlp") {
    if (contextual_dim <= 0) {
      throw ConfigError(fmt::format("{}.parameterized_mlp: needs contextual features (a 'contextual' feature "
                                    "group); use simple_mlp without them",
                                    config_path));
    }
    if (options.contextual_dropout_ratio < 0 || options.contextual_dropout_ratio >= 1) {
      throw ConfigError(fmt::format("{}.parameterized_mlp.contextual_dropout_ratio: must be in [0, 1), got {}",
                                    config_path, options.contextual_dropout_ratio));
    }
    return std::make_shared<ParameterizedContextualizedMLP>(contextual_dim, input_dim, output_dim, options);
  }
  throw ConfigError(fmt::format("{}: set simple_mlp or parameterized_mlp", config_path));
}

}  // namespace tzrec::nn::gr
