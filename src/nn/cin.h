// CIN, the Compressed Interaction Network of xDeepFM (tzrec/modules/interaction.py `CIN`).
//
//   x_0 = input [B, F, D]; layer k: z = outer product of x_k [B, H_k, D] and x_0 along the
//   embedding dimension, z[b, h·F + f, d] = x_k[b, h, d] · x_0[b, f, d]  ([B, H_k·F, D]);
//   x_{k+1} = Conv1d(H_k·F → H_{k+1}, kernel_size 1)(z)  ([B, H_{k+1}, D]);
//   output = concat over layers of Σ_d x_{k+1}  ([B, Σ cin_layer_size]).
// H_0 = F. Module tree (state-dict names, as TorchEasyRec's nn.Conv1d layers):
//   cin_layers.<k>.weight [H_{k+1}, H_k·F, 1], cin_layers.<k>.bias [H_{k+1}].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn {

class CINImpl : public torch::nn::Module {
 public:
  // config_path names the config message in errors (e.g. "model_config.xdeepfm.cin"); throws
  // tzrec::ConfigError for feature_num < 1, no layers or a layer size < 1.
  CINImpl(int64_t feature_num, std::vector<int64_t> cin_layer_size, const std::string& config_path = "CIN");
  // input: [B, feature_num, D] → [B, output_dim()]
  torch::Tensor forward(const torch::Tensor& input);
  int64_t output_dim() const;

 private:
  int64_t feature_num_;
  std::vector<int64_t> layer_size_;
  std::vector<torch::nn::Conv1d> layers_;
};
TORCH_MODULE(CIN);

}  // namespace tzrec::nn
