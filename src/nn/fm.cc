#include "nn/fm.h"

namespace tzrec::nn {

torch::Tensor FactorizationMachineImpl::forward(const torch::Tensor& feature) {
  TORCH_CHECK(feature.dim() == 3, "FactorizationMachine expects [B, N, D], got ", feature.sizes());
  torch::Tensor sum_of_input = feature.sum(1);                 // [B, D]
  torch::Tensor sum_of_square = (feature * feature).sum(1);    // [B, D]
  return 0.5 * (sum_of_input * sum_of_input - sum_of_square);  // [B, D]
}

}  // namespace tzrec::nn
