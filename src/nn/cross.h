// Cross networks of DCN (tzrec/modules/interaction.py Cross and CrossV2;
// docs/tzrec-compatibility.md §4, "Module semantics"). Both keep the input width:
// x: [B, d] → [B, d].
//
// Cross (DCN v1), cross_num layers l = 0..L-1:
//   x_{l+1} = w_l(x_l) * x_0 + b_l + x_l        w_l = Linear(d, 1, bias=False) → [B, 1], b_l: [d]
// Module tree (state-dict names): w.<l>.weight [1, d] (xavier-uniform init), b.<l> [d] (zeros).
//
// CrossV2 (DCN v2, low-rank), cross_num layers:
//   x_{l+1} = x_0 * V_l(U_l(x_l)) + x_l         U_l = Linear(d, r, bias=False), V_l = Linear(r, d)
// Module tree (state-dict names): u_kernels.<l>.weight [r, d], v_kernels.<l>.weight [d, r],
// v_kernels.<l>.bias [d] (torch's default Linear init, as tzrec).
//
// The Linear GEMMs run through nn::linear_forward, so they follow the mixed-precision mode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn {

class CrossImpl : public torch::nn::Module {
 public:
  // config_path names the config message in error messages (e.g. "model_config.dcn_v1.cross");
  // throws tzrec::ConfigError for cross_num < 1 or input_dim < 1.
  CrossImpl(int64_t input_dim, int64_t cross_num, const std::string& config_path = "Cross");
  // x: [B, input_dim] → [B, input_dim]
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_dim() const { return input_dim_; }
  void reset_parameters();

 private:
  int64_t input_dim_;
  std::vector<torch::nn::Linear> w_;
  std::vector<torch::Tensor> b_;
};
TORCH_MODULE(Cross);

class CrossV2Impl : public torch::nn::Module {
 public:
  // Throws tzrec::ConfigError (naming config_path, e.g. "model_config.dcn_v2.cross") for
  // cross_num < 1, low_rank < 1 or input_dim < 1.
  CrossV2Impl(int64_t input_dim, int64_t cross_num, int64_t low_rank, const std::string& config_path = "CrossV2");
  // x: [B, input_dim] → [B, input_dim]
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_dim() const { return input_dim_; }

 private:
  int64_t input_dim_;
  std::vector<torch::nn::Linear> u_kernels_;
  std::vector<torch::nn::Linear> v_kernels_;
};
TORCH_MODULE(CrossV2);

}  // namespace tzrec::nn
