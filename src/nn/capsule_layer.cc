#include "nn/capsule_layer.h"

#include <limits>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::nn {

CapsuleLayerImpl::CapsuleLayerImpl(const CapsuleOptions& options, int64_t input_dim, const std::string& path)
    : options_(options) {
  for (const auto& [field, value] : {std::pair{"max_k", options.max_k}, std::pair{"max_seq_len", options.max_seq_len},
                                     std::pair{"high_dim", options.high_dim}, std::pair{"num_iters", options.num_iters}}) {
    if (value < 1) throw ConfigError(fmt::format("{}.{}: must be >= 1, got {}", path, field, value));
  }
  bilinear_matrix = register_parameter("bilinear_matrix", torch::randn({input_dim, options.high_dim}));
}

torch::Tensor CapsuleLayerImpl::squash(const torch::Tensor& x) const {
  torch::Tensor norm = torch::linalg_norm(x, c10::nullopt, {-1}, /*keepdim=*/true).clamp_min(1e-7);
  torch::Tensor sq = norm.square();
  return (sq / (1 + sq)).pow(options_.squash_pow) / norm * x;
}

std::pair<torch::Tensor, torch::Tensor> CapsuleLayerImpl::forward(const torch::Tensor& inputs,
                                                                  const torch::Tensor& seq_len) {
  const int64_t b = inputs.size(0), s = inputs.size(1);
  const int64_t max_len = options_.max_seq_len, k = options_.max_k;
  torch::Tensor x = inputs.narrow(1, 0, std::min(s, max_len));
  if (s < max_len) x = torch::cat({x, torch::zeros({b, max_len - s, inputs.size(2)}, inputs.options())}, 1);
  const torch::Tensor lengths = seq_len.to(inputs.device());
  const auto long_opts = torch::TensorOptions().dtype(torch::kInt64).device(inputs.device());
  torch::Tensor seq_mask = torch::arange(max_len, long_opts).unsqueeze(0) < lengths.unsqueeze(1);  // [B, S]
  x = x * seq_mask.unsqueeze(-1).to(x.scalar_type());
  torch::Tensor n_caps;  // [B] float
  if (options_.const_caps_num) {
    n_caps = torch::full({b}, static_cast<double>(k), inputs.options().dtype(torch::kFloat32));
  } else {
    n_caps = torch::log2(lengths.to(torch::kFloat32)).clamp_max(static_cast<double>(k)).clamp_min(1.0);
  }
  torch::Tensor caps_mask = torch::arange(k, long_opts).unsqueeze(0).to(torch::kFloat32) < n_caps.unsqueeze(1);  // [B, K]

  torch::Tensor logits = options_.normal_init ? torch::randn({b, max_len, k}, x.options())
                                              : torch::zeros({b, max_len, k}, x.options());
  logits = logits * options_.routing_logits_stddev;
  const double inf = std::numeric_limits<double>::infinity();
  torch::Tensor thresh = (caps_mask.unsqueeze(1).to(x.scalar_type()) * 2 - 1) * inf;  // [B, 1, K]
  torch::Tensor low = torch::einsum("bsl,lh->bsh", {x, bilinear_matrix});                // [B, S, H]
  torch::Tensor low_detached = low.detach();
  torch::Tensor low_norm =
      torch::nn::functional::normalize(low_detached, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(-1));
  torch::Tensor high;
  const torch::Tensor seq_weight = seq_mask.unsqueeze(2).to(x.scalar_type());
  for (int64_t it = 0; it < options_.num_iters; ++it) {
    logits = torch::minimum(logits, thresh);
    logits = torch::softmax(logits * options_.routing_logits_scale, 2) * seq_weight;  // [B, S, K]
    if (it + 1 < options_.num_iters) {
      high = torch::einsum("bsh,bsk->bkh", {low_detached, logits});
      logits = logits + torch::einsum("bkh,bsh->bsk", {high, low_norm});
    } else {
      high = squash(torch::einsum("bsh,bsk->bkh", {low, logits}));
    }
  }
  return {high * caps_mask.unsqueeze(-1).to(high.scalar_type()), caps_mask};
}

}  // namespace tzrec::nn
