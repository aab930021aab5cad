#include "nn/dice.h"

namespace tzrec::nn {

DiceImpl::DiceImpl(int64_t hidden_size, int64_t dim) : dim_(dim) {
  TORCH_CHECK(hidden_size > 0, "Dice: hidden_size must be > 0, got ", hidden_size);
  TORCH_CHECK(dim == 2 || dim == 3, "Dice: dim must be 2 or 3, got ", dim);
  bn_ = register_module("bn", torch::nn::BatchNorm1d(torch::nn::BatchNorm1dOptions(hidden_size).affine(false)));
  alpha_ = register_parameter("alpha", torch::zeros({hidden_size}));
}

torch::Tensor DiceImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == dim_ && x.size(-1) == alpha_.size(0), "Dice: expected input [", dim_ == 3 ? "B, T, " : "B, ",
              alpha_.size(0), "], got ", x.sizes());
  const torch::Tensor xf = x.to(alpha_.scalar_type());
  // BatchNorm1d normalises dim 1: channels-first for the [B, T, C] case.
  const torch::Tensor p = dim_ == 2 ? torch::sigmoid(bn_->forward(xf))
                                    : torch::sigmoid(bn_->forward(xf.transpose(1, 2))).transpose(1, 2);
  const torch::Tensor out = alpha_ * (1 - p) * xf + p * xf;
  return out.to(x.scalar_type());
}

}  // namespace tzrec::nn
