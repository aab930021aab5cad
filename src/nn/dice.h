// Dice, the data-adaptive activation of DIN (tzrec/modules/activation.py, class Dice), with
// TorchEasyRec's parameter names:
//   alpha            [hidden_size], initialised to zeros
//   bn.running_mean, bn.running_var, bn.num_batches_tracked
//                    BatchNorm1d(hidden_size, affine=False): no weight or bias of its own
// out = alpha · (1 − p) · x + p · x with p = sigmoid(bn(x)). In training the batch statistics
// normalise and update the running ones (momentum 0.1, eps 1e-5); in eval the running ones are used.
// dim 2 takes [B, hidden_size]; dim 3 takes [B, T, hidden_size] and normalises each channel over
// all B × T positions (tzrec transposes to [B, hidden_size, T] around the BatchNorm).
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn {

class DiceImpl : public torch::nn::Module {
 public:
  DiceImpl(int64_t hidden_size, int64_t dim);
  // x: [B, hidden_size] (dim 2) or [B, T, hidden_size] (dim 3) → same shape and dtype. Computes in
  // the parameters' dtype (under mixed precision the statistics stay fp32).
  torch::Tensor forward(const torch::Tensor& x);

  const torch::Tensor& alpha() const { return alpha_; }
  const torch::nn::BatchNorm1d& bn() const { return bn_; }

 private:
  int64_t dim_;
  torch::nn::BatchNorm1d bn_{nullptr};
  torch::Tensor alpha_;
};
TORCH_MODULE(Dice);

}  // namespace tzrec::nn
