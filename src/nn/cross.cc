#include "nn/cross.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {
namespace {

void check_positive(int64_t value, const std::string& path) {
  if (value < 1) throw ConfigError(fmt::format("{}: must be >= 1, got {}", path, value));
}

}  // namespace

CrossImpl::CrossImpl(int64_t input_dim, int64_t cross_num, const std::string& config_path)
    : input_dim_(input_dim) {
  check_positive(cross_num, config_path + ".cross_num");
  if (input_dim < 1) {
    throw ConfigError(fmt::format("{}: input dimension must be > 0, got {} (is its feature group empty?)",
                                  config_path, input_dim));
  }
  auto w = register_module("w", torch::nn::ModuleList());
  auto b = register_module("b", torch::nn::ParameterList());
  for (int64_t l = 0; l < cross_num; ++l) {
    w_.emplace_back(torch::nn::LinearOptions(input_dim, 1).bias(false));
    w->push_back(w_.back());
    b->append(torch::zeros({input_dim}).requires_grad_(true));
    b_.push_back((*b)[l]);
  }
  reset_parameters();
}

void CrossImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  for (size_t l = 0; l < w_.size(); ++l) {
    torch::nn::init::xavier_uniform_(w_[l]->weight);
    b_[l].zero_();
  }
}

torch::Tensor CrossImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == input_dim_, "Cross expects [B, ", input_dim_, "], got ", x.sizes());
  torch::Tensor xl = x;
  for (size_t l = 0; l < w_.size(); ++l) {
    torch::Tensor s = linear_forward(xl, w_[l]->weight, torch::Tensor());  // [B, 1]
    xl = s * x + b_[l] + xl;                                                  // [B, d]
  }
  return xl;
}

CrossV2Impl::CrossV2Impl(int64_t input_dim, int64_t cross_num, int64_t low_rank, const std::string& config_path)
    : input_dim_(input_dim) {
  check_positive(cross_num, config_path + ".cross_num");
  check_positive(low_rank, config_path + ".low_rank");
  if (input_dim < 1) {
    throw ConfigError(fmt::format("{}: input dimension must be > 0, got {} (is its feature group empty?)",
                                  config_path, input_dim));
  }
  auto u = register_module("u_kernels", torch::nn::ModuleList());
  auto v = register_module("v_kernels", torch::nn::ModuleList());
  for (int64_t l = 0; l < cross_num; ++l) {
    u_kernels_.emplace_back(torch::nn::LinearOptions(input_dim, low_rank).bias(false));
    u->push_back(u_kernels_.back());
    v_kernels_.emplace_back(torch::nn::LinearOptions(low_rank, input_dim));
    v->push_back(v_kernels_.back());
  }
}

torch::Tensor CrossV2Impl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == input_dim_, "CrossV2 expects [B, ", input_dim_, "], got ", x.sizes());
  torch::Tensor xl = x;
  for (size_t l = 0; l < u_kernels_.size(); ++l) {
    torch::Tensor low = linear_forward(xl, u_kernels_[l]->weight, torch::Tensor());          // [B, r]
    torch::Tensor full = linear_forward(low, v_kernels_[l]->weight, v_kernels_[l]->bias);    // [B, d]
    xl = x * full + xl;                                                                       // [B, d]
  }
  return xl;
}

}  // namespace tzrec::nn
