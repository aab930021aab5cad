#include "nn/mlp.h"

#include <vector>

#include "base/error.h"
#include "nn/activation.h"
#include "nn/autocast.h"
#include "nn/fp16_linear.h"
#include "nn/linear_relu.h"

namespace tzrec::nn {

PerceptronImpl::PerceptronImpl(int64_t in_features, int64_t out_features, const std::string& activation,
                               bool use_bn, bool bias, double dropout_ratio, bool use_ln, int64_t dim) {
  TORCH_CHECK(!(use_bn && use_ln), "Perceptron: use_bn and use_ln are exclusive");
  TORCH_CHECK(dim == 2 || dim == 3, "Perceptron: dim must be 2 or 3, got ", dim);
  linear_ = torch::nn::Linear(torch::nn::LinearOptions(in_features, out_features).bias(use_bn ? false : bias));
  perceptron_->push_back(linear_);
  if (use_bn) {
    torch::nn::BatchNorm1d norm(out_features);
    norm_weight_ = norm->weight;
    if (dim == 3) perceptron_->push_back(Transpose());  // [B, T, C] → [B, C, T]
    perceptron_->push_back(norm);
    if (dim == 3) perceptron_->push_back(Transpose());  // back to [B, T, C]
  }
  if (use_ln) {
    torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({out_features}));
    norm_weight_ = norm->weight;
    perceptron_->push_back(norm);
  }
  torch::nn::AnyModule act = create_activation(activation, out_features, dim);
  fused_relu_ = !use_bn && !use_ln && !act.is_empty() && act.type_info() == typeid(torch::nn::ReLUImpl);
  if (!act.is_empty()) perceptron_->push_back(std::move(act));
  if (dropout_ratio > 0.0) perceptron_->push_back(torch::nn::Dropout(dropout_ratio));
  register_module("perceptron", perceptron_);
}

torch::Tensor PerceptronImpl::forward(const torch::Tensor& x) {
  if (fused_relu_) {
    // perceptron_[0] and [1]. The fused node takes [rows, in]: [B, T, in] runs as [B·T, in].
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = linear_->weight.size(0);
    return forward_after_relu(linear_relu_forward(x.flatten(0, -2), linear_->weight, linear_->bias).view(shape));
  }
  return forward_after_linear(linear_forward(x, linear_->weight, linear_->bias));
}

torch::Tensor PerceptronImpl::forward_after_linear(const torch::Tensor& pre) {
  // Under autocast the normalisation runs in its parameters' dtype (nn/autocast.h).
  torch::Tensor y = norm_weight_.defined() ? in_norm_dtype(pre, norm_weight_) : pre;
  for (auto it = perceptron_->begin() + 1; it != perceptron_->end(); ++it) y = it->forward(y);
  return y;
}

torch::Tensor PerceptronImpl::forward_after_relu(const torch::Tensor& h) {
  TORCH_CHECK(fused_relu_, "Perceptron::forward_after_relu: the layer's Linear is not followed by a ReLU");
  torch::Tensor y = h;
  for (auto it = perceptron_->begin() + 2; it != perceptron_->end(); ++it) y = it->forward(y);
  return y;
}

MLPImpl::MLPImpl(int64_t in_features, MLPOptions options, const std::string& config_path)
    : options_(std::move(options)) {
  const auto& units = options_.hidden_units;
  if (units.empty()) throw ConfigError(fmt::format("{}.hidden_units: must not be empty", config_path));
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i] <= 0) {
      throw ConfigError(fmt::format("{}.hidden_units[{}]: must be > 0, got {}", config_path, i, units[i]));
    }
  }
  if (in_features <= 0) {
    throw ConfigError(fmt::format("{}: input dimension must be > 0, got {} (is its feature group empty?)",
                                  config_path, in_features));
  }
  TORCH_CHECK(options_.dim == 2 || options_.dim == 3, config_path, ": MLP dim must be 2 or 3, got ", options_.dim);
  if (options_.use_bn && options_.use_ln) {
    throw ConfigError(fmt::format("{}: use_bn and use_ln cannot both be true", config_path));
  }
  for (size_t i = 0; i < options_.dropout_ratio.size(); ++i) {
    double p = options_.dropout_ratio[i];
    if (!(p >= 0.0 && p <= 1.0)) {
      throw ConfigError(fmt::format("{}.dropout_ratio[{}]: must be in [0, 1], got {}", config_path, i, p));
    }
  }
  // Broadcast dropout_ratio the way tzrec does: [] → 0 for all, [p] → p for all.
  std::vector<double> dropout = options_.dropout_ratio;
  if (dropout.empty()) {
    dropout.assign(units.size(), 0.0);
  } else if (dropout.size() == 1) {
    dropout.assign(units.size(), dropout[0]);
  } else if (dropout.size() != units.size()) {
    throw ConfigError(fmt::format("{}.dropout_ratio: has {} values; give 0, 1 or one per hidden unit ({})",
                                  config_path, dropout.size(), units.size()));
  }
  int64_t in = in_features;
  for (size_t i = 0; i < units.size(); ++i) {
    try {
      mlp_->push_back(Perceptron(in, units[i], options_.activation, options_.use_bn, options_.bias, dropout[i],
                                 options_.use_ln, options_.dim));
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.activation: {}", config_path, e.what()));
    }
    in = units[i];
  }
  register_module("mlp", mlp_);
}

torch::Tensor MLPImpl::forward(const torch::Tensor& x) { return forward_layers_from(0, x); }

std::vector<torch::Tensor> MLPImpl::forward_hidden(const torch::Tensor& x) {
  std::vector<torch::Tensor> out;
  out.reserve(mlp_->size());
  torch::Tensor net = x;
  for (size_t i = 0; i < mlp_->size(); ++i) {
    net = layer(i).forward(net);
    out.push_back(net);
  }
  return out;
}

torch::Tensor MLPImpl::forward_from_first_linear(const torch::Tensor& pre) {
  return forward_layers_from(1, layer(0).forward_after_linear(pre));
}

torch::Tensor MLPImpl::forward_from_first_relu(const torch::Tensor& h) {
  return forward_layers_from(1, layer(0).forward_after_relu(h));
}

torch::Tensor MLPImpl::forward_layers_from(size_t first, torch::Tensor net) {
  for (size_t i = first; i < mlp_->size(); ++i) net = layer(i).forward(net);
  return net;
}

}  // namespace tzrec::nn
