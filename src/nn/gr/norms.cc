#include "nn/gr/norms.h"

namespace tzrec::nn::gr {

LayerNormImpl::LayerNormImpl(int64_t dim, double eps, bool swish) : dim_(dim), eps_(eps), swish_(swish) {
  weight = register_parameter("weight", torch::ones({dim}));
  bias = register_parameter("bias", torch::zeros({dim}));
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  auto xf = x.to(torch::kFloat);
  auto y = torch::layer_norm(xf, {dim_}, weight.to(torch::kFloat), bias.to(torch::kFloat), eps_);
  if (swish_) y = xf * torch::sigmoid(y);
  return y.to(x.scalar_type());
}

void init_linear_xavier_zero_bias(torch::nn::Linear& linear) {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(linear->weight);
  if (linear->bias.defined()) linear->bias.zero_();
}

}  // namespace tzrec::nn::gr
