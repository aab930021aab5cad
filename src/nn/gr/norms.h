// The norm layers of the generative models (TorchEasyRec's tzrec/modules/norm.py): LayerNorm and
// SwishLayerNorm over the last dim, each with parameters "weight" (ones) and "bias" (zeros).
// Both compute in float32 and return the input's dtype, as TorchEasyRec's PyTorch kernels do.
//   LayerNorm:      y = layer_norm(x)
//   SwishLayerNorm: y = x · sigmoid(layer_norm(x))
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn::gr {

class LayerNormImpl : public torch::nn::Module {
 public:
  explicit LayerNormImpl(int64_t dim, double eps = 1e-5, bool swish = false);
  // x: [..., dim] → [..., dim]
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight, bias;

 private:
  int64_t dim_;
  double eps_;
  bool swish_;
};
TORCH_MODULE(LayerNorm);

// SwishLayerNorm(dim): a LayerNorm module computing x · sigmoid(layer_norm(x)).
inline LayerNorm SwishLayerNorm(int64_t dim, double eps = 1e-5) { return LayerNorm(dim, eps, /*swish=*/true); }

// torch.nn.init.xavier_uniform_ on a Linear's weight and zeros on its bias (TorchEasyRec's
// init_linear_xavier_weights_zero_bias).
void init_linear_xavier_zero_bias(torch::nn::Linear& linear);

}  // namespace tzrec::nn::gr
