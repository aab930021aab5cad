#include "nn/sid/vector_quantize_layer.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/sid/sinkhorn.h"

namespace tzrec::nn::sid {

VectorQuantizeLayerImpl::VectorQuantizeLayerImpl(const VectorQuantizeOptions& options, const std::string& config_path)
    : QuantizeLayerImpl(options.n_embed, options.embed_dim), options_(options) {
  if (options_.use_sinkhorn && options_.forward_mode == ForwardMode::kGumbelSoftmax) {
    throw ConfigError(
        fmt::format("{}: Sinkhorn assignment does not combine with forward_mode gumbel_softmax (the "
                    "ids would come from Sinkhorn, the vectors from Gumbel); use ste with Sinkhorn",
                    config_path));
  }
  if (options_.use_sinkhorn && !(options_.sinkhorn_epsilon > 0)) {
    throw ConfigError(
        fmt::format("{}.sinkhorn_config.epsilon: must be > 0, got {}", config_path, options_.sinkhorn_epsilon));
  }
  embedding = register_module("embedding", torch::nn::Embedding(options_.n_embed, options_.embed_dim));
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(embedding->weight);
}

torch::Tensor VectorQuantizeLayerImpl::distances(const torch::Tensor& x) const {
  const torch::Tensor& weight = embedding->weight;
  if (options_.distance == Distance::kL2) return torch::cdist(x, weight, 2.0).pow(2);
  namespace F = torch::nn::functional;
  const auto unit = F::NormalizeFuncOptions().p(2).dim(1);
  return -torch::matmul(F::normalize(x, unit), F::normalize(weight, unit).t());
}

QuantizeOutput VectorQuantizeLayerImpl::quantize(const torch::Tensor& x, int64_t topk) {
  QuantizeOutput out;
  if (is_training() && options_.forward_mode == ForwardMode::kGumbelSoftmax) {
    // Hard Gumbel-Softmax (torch.nn.functional.gumbel_softmax(hard=True), the same draws).
    const torch::Tensor logits = -distances(x);
    torch::Tensor gumbels = -torch::empty_like(logits).exponential_().log();
    torch::Tensor y_soft = ((logits + gumbels) / options_.gumbel_temperature).softmax(-1);
    torch::Tensor index = std::get<1>(y_soft.max(-1, /*keepdim=*/true));
    torch::Tensor y_hard = torch::zeros_like(logits).scatter_(-1, index, 1.0);
    torch::Tensor weights = y_hard - y_soft.detach() + y_soft;  // [B, K]
    out.embeddings = torch::matmul(weights, embedding->weight);
    out.ids = weights.argmax(-1);
    return out;
  }
  torch::Tensor d;
  {
    torch::NoGradGuard no_grad;  // the assignment is not differentiable
    d = distances(x);
  }
  if (is_training()) {
    out.ids =
        options_.use_sinkhorn ? sinkhorn_codes(d, options_.sinkhorn_iters, options_.sinkhorn_epsilon, *ranks_)
                              : d.argmin(-1);
    out.embeddings = embedding->forward(out.ids);  // the codebook's gradient flows through here
    return out;
  }
  return topk_output(d, topk);
}

}  // namespace tzrec::nn::sid
