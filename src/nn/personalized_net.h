// The personalization modules of PEPNet (tzrec/modules/personalized_net.py;
// docs/tzrec-compatibility.md §4): the gate unit GateNU, the embedding gate EPNet and the per-task
// gated MLP PPNet, with TorchEasyRec's module and parameter names.
//
// GateNU(x) = gamma · sigmoid(W2 · relu(W1 · x + b1) + b2)            x: [B, input_dim]
//   module tree: dense_layers.0 (Linear(input_dim, hidden_dim)), dense_layers.1 (ReLU),
//                dense_layers.2 (Linear(hidden_dim, output_dim)), dense_layers.3 (Sigmoid)
//   e.g. "dense_layers.0.weight", "dense_layers.2.bias". Values lie in (0, gamma).
//
// EPNet(main [B, M], domain [B, D]) = GateNU(cat[domain, stop_grad(main)]) ⊙ main   → [B, M]
//   module tree: gate_nu (GateNU(D + M, hidden_dim, M)). The gate sees the main embeddings without
//   passing gradients back into them through the gate (tzrec detaches them); the scaled product
//   does pass gradients into main.
//
// PPNet(main [B, M], uia [B, U]) → num_task tensors [B, hidden_units.back()]: per task t a stack
// of layers j, each
//   h = dropout_j(activation_j(Linear_j(h)) ⊙ GateNU_j(cat[uia, stop_grad(main)]))
// starting from h = main. Modules of task t, layer j sit at index k = t · L + j (L =
// hidden_units.size()) of four lists registered in this order:
//   linears.<k>          Linear(in, hidden_units[j])   (in = M for j = 0, else hidden_units[j - 1])
//   activations.<k>      the activation (nn/activation.h; Dice: "activations.<k>.alpha", ...)
//   dropout_ratios.<k>   Dropout(dropout_ratio[j]) (no parameters)
//   gate_nus.<k>         GateNU(U + M, hidden_units[j], hidden_units[j], gamma)
// e.g. "linears.3.weight", "gate_nus.1.dense_layers.2.bias".
//
// The Linear GEMMs follow the mixed-precision mode (nn::linear_forward, nn/fp16_linear.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn {

class GateNUImpl : public torch::nn::Module {
 public:
  GateNUImpl(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, double gamma = 2.0);
  // x: [B, input_dim] → [B, output_dim]
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_dim() const { return output_dim_; }

 private:
  double gamma_;
  int64_t output_dim_;
  torch::nn::Sequential dense_layers_;
  torch::nn::Linear first_{nullptr};   // dense_layers_[0]
  torch::nn::Linear second_{nullptr};  // dense_layers_[2]
};
TORCH_MODULE(GateNU);

class EPNetImpl : public torch::nn::Module {
 public:
  EPNetImpl(int64_t main_dim, int64_t domain_dim, int64_t hidden_dim, double gamma = 2.0);
  // main: [B, main_dim], domain: [B, domain_dim] → [B, main_dim]
  torch::Tensor forward(const torch::Tensor& main, const torch::Tensor& domain);
  int64_t output_dim() const { return gate_nu_->output_dim(); }

 private:
  GateNU gate_nu_{nullptr};
};
TORCH_MODULE(EPNet);

struct PPNetOptions {
  std::vector<int64_t> hidden_units;  // at least one, each > 0
  std::string activation = "nn.ReLU";  // non-empty (nn/activation.h); built per layer with its width
  // Length 0 (no dropout), 1 (the same ratio for every layer) or hidden_units.size(); each in [0, 1].
  std::vector<double> dropout_ratio;
  double gamma = 2.0;
};

class PPNetImpl : public torch::nn::Module {
 public:
  // config_path names the config message in error messages (e.g. "model_config.pepnet"): throws
  // tzrec::ConfigError naming <config_path>.ppnet_hidden_units, .ppnet_dropout_ratio or
  // .ppnet_activation for values PPNetOptions does not allow, or num_task < 1.
  PPNetImpl(int64_t main_dim, int64_t uia_dim, int64_t num_task, const PPNetOptions& options,
            const std::string& config_path = "PPNet");
  // main: [B, main_dim], uia: [B, uia_dim] → num_task tensors [B, task_output_dim()]
  std::vector<torch::Tensor> forward(const torch::Tensor& main, const torch::Tensor& uia);
  int64_t task_output_dim() const { return hidden_units_.back(); }

 private:
  int64_t num_task_;
  std::vector<int64_t> hidden_units_;
  std::vector<torch::nn::Linear> linears_;           // [num_task · L], task-major
  std::vector<torch::nn::AnyModule> activations_;    // same index
  std::vector<torch::nn::Dropout> dropouts_;         // same index
  std::vector<GateNU> gate_nus_;                     // same index
};
TORCH_MODULE(PPNet);

}  // namespace tzrec::nn
