#include "nn/mask_net.h"

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/fp16_linear.h"
#include "nn/linear_relu.h"

namespace tzrec::nn {
namespace {

torch::Tensor layer_norm(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return norm->forward(in_norm_dtype(x, norm->weight));
}

}  // namespace

MaskBlockImpl::MaskBlockImpl(int64_t input_dim, int64_t mask_input_dim, const MaskBlockOptions& options,
                             const std::string& config_path)
    : hidden_dim_(options.hidden_dim) {
  if (!std::isfinite(options.reduction_ratio) || options.reduction_ratio < 0) {
    throw ConfigError(
        fmt::format("{}.reduction_ratio: must be a finite number >= 0, got {}", config_path, options.reduction_ratio));
  }
  if (options.reduction_ratio == 0.0 && options.aggregation_dim == 0) {
    throw ConfigError(fmt::format("{}: set reduction_ratio or aggregation_dim (both are 0)", config_path));
  }
  // As TorchEasyRec: `int(input_dim * reduction_ratio)` whenever reduction_ratio is non-zero.
  aggregation_dim_ = options.reduction_ratio != 0.0
                         ? static_cast<int64_t>(static_cast<double>(input_dim) * options.reduction_ratio)
                         : options.aggregation_dim;
  if (aggregation_dim_ < 1) {
    throw ConfigError(fmt::format(
        "{}: the aggregation dim must be > 0, got {} (input dim {} × reduction_ratio {}, aggregation_dim {})",
        config_path, aggregation_dim_, input_dim, options.reduction_ratio, options.aggregation_dim));
  }
  if (hidden_dim_ < 1) throw ConfigError(fmt::format("{}.hidden_dim: must be > 0, got {}", config_path, hidden_dim_));

  mask_in_ = torch::nn::Linear(mask_input_dim, aggregation_dim_);
  mask_out_ = torch::nn::Linear(aggregation_dim_, input_dim);
  torch::nn::Sequential mask_generator(mask_in_, torch::nn::ReLU(), mask_out_);
  register_module("mask_generator", mask_generator);
  ffn_linear_ = torch::nn::Linear(input_dim, hidden_dim_);
  ffn_norm_ = torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden_dim_}));
  torch::nn::Sequential ffn(ffn_linear_, ffn_norm_, torch::nn::ReLU());
  register_module("ffn", ffn);
}

torch::Tensor MaskBlockImpl::forward(const torch::Tensor& feature_input, const torch::Tensor& mask_input) {
  torch::Tensor h = linear_relu_forward(mask_input, mask_in_->weight, mask_in_->bias);  // [B, agg]
  torch::Tensor weights = linear_forward(h, mask_out_->weight, mask_out_->bias);        // [B, input_dim]
  torch::Tensor y = linear_forward(feature_input * weights, ffn_linear_->weight, ffn_linear_->bias);
  return torch::relu(layer_norm(ffn_norm_, y));  // [B, hidden_dim]
}

MaskNetModuleImpl::MaskNetModuleImpl(int64_t feature_dim, const MaskNetOptions& options,
                                     const std::string& config_path)
    : use_parallel_(options.use_parallel) {
  if (options.n_mask_blocks < 1) {
    throw ConfigError(fmt::format("{}.n_mask_blocks: must be >= 1, got {}", config_path, options.n_mask_blocks));
  }
  if (feature_dim < 1) {
    throw ConfigError(fmt::format("{}: input dimension must be > 0, got {} (is its feature group empty?)",
                                  config_path, feature_dim));
  }
  ln_emb_ = register_module("ln_emb", torch::nn::LayerNorm(torch::nn::LayerNormOptions({feature_dim})));
  auto list = register_module("mask_blocks", torch::nn::ModuleList());
  const std::string block_path = config_path + ".mask_block";
  int64_t in = feature_dim;
  for (int64_t i = 0; i < options.n_mask_blocks; ++i) {
    // Parallel: every block reads the normalised input; serial: block i > 0 reads block i − 1.
    blocks_.emplace_back(use_parallel_ ? feature_dim : in, feature_dim, options.mask_block, block_path);
    list->push_back(blocks_.back());
    in = blocks_.back()->output_dim();
  }
  output_dim_ = use_parallel_ ? blocks_.front()->output_dim() * options.n_mask_blocks : blocks_.back()->output_dim();
  if (options.top_mlp) {
    top_mlp_ = register_module("top_mlp", MLP(output_dim_, *options.top_mlp, config_path + ".top_mlp"));
    output_dim_ = top_mlp_->output_dim();
  }
}

torch::Tensor MaskNetModuleImpl::forward(const torch::Tensor& x) {
  torch::Tensor ln = layer_norm(ln_emb_, x);
  torch::Tensor hidden;
  if (use_parallel_) {
    std::vector<torch::Tensor> outs;
    outs.reserve(blocks_.size());
    for (auto& block : blocks_) outs.push_back(block->forward(ln, x));
    hidden = torch::cat(outs, -1);
  } else {
    hidden = blocks_.front()->forward(ln, x);
    for (size_t i = 1; i < blocks_.size(); ++i) hidden = blocks_[i]->forward(hidden, x);
  }
  if (top_mlp_) hidden = top_mlp_->forward(hidden);
  return hidden;
}

}  // namespace tzrec::nn
