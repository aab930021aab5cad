// FactorizationMachine (tzrec/modules/fm.py): second-order interactions of N embeddings.
#pragma once

#include <torch/torch.h>

namespace tzrec::nn {

// No parameters. feature: [B, N, D] → 0.5 * ((Σ_n v_n)² − Σ_n v_n²): [B, D].
class FactorizationMachineImpl : public torch::nn::Module {
 public:
  torch::Tensor forward(const torch::Tensor& feature);
};
TORCH_MODULE(FactorizationMachine);

}  // namespace tzrec::nn
