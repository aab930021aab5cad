// MLP with TorchEasyRec semantics (tzrec/modules/mlp.py) and the same parameter names.
//
// Module tree (state-dict names):
//   mlp.<i>.perceptron.0             Linear(in_i, hidden_units[i]); no bias when use_bn
//   mlp.<i>.perceptron.1             BatchNorm1d | LayerNorm, when use_bn | use_ln
//   mlp.<i>.perceptron.<next>        activation (when the string is non-empty)
//   mlp.<i>.perceptron.<next>        Dropout(p), when p > 0 (no parameters)
// e.g. "mlp.0.perceptron.0.weight", "mlp.0.perceptron.1.running_mean".
//
// dim = 3 (tzrec's `MLP(..., dim=3)`, e.g. DINEncoder's attention MLP) takes [B, T, C] input. Linear
// and LayerNorm act on the last dim as for dim 2 (a PReLU with num_parameters > 1 still reads dim 1,
// as in tzrec). With use_bn the BatchNorm1d normalises each channel over all B × T positions,
// between two Transpose(1, 2) modules, which shifts the indices: perceptron.0 Linear, .1 Transpose,
// .2 BatchNorm1d, .3 Transpose, then the activation and Dropout (e.g. "mlp.0.perceptron.2.running_mean").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn {

struct MLPOptions {
  std::vector<int64_t> hidden_units;
  // Length 0 (no dropout), 1 (same ratio for every layer) or hidden_units.size().
  std::vector<double> dropout_ratio;
  std::string activation = "nn.ReLU";  // see nn/activation.h; "" = no activation
  bool use_bn = false;
  bool bias = true;
  bool use_ln = false;
  // Rank of the input: 2 ([B, C]) or 3 ([B, T, C]; BatchNorm over the channel, see above). Set
  // by the module that owns the MLP, never by a config.
  int64_t dim = 2;
};

// Swaps dims 1 and 2 (tzrec.modules.utils.Transpose(1, 2)); no parameters. Wraps the BatchNorm1d
// of a dim-3 Perceptron.
class TransposeImpl : public torch::nn::Module {
 public:
  // x: [B, T, C] → [B, C, T]
  torch::Tensor forward(const torch::Tensor& x) { return x.transpose(1, 2); }
};
TORCH_MODULE(Transpose);

// One layer: Sequential "perceptron" of Linear → [BatchNorm1d | LayerNorm] → activation → [Dropout]
// (dim 3 and use_bn: Linear → Transpose → BatchNorm1d → Transpose → activation → [Dropout]).
// The Linear's GEMM runs through nn::linear_forward (nn/fp16_linear.h), so it follows the
// mixed-precision mode (fp16 emulation on the CPU); Linear → ReLU without a norm runs as one node
// (nn/linear_relu.h).
class PerceptronImpl : public torch::nn::Module {
 public:
  PerceptronImpl(int64_t in_features, int64_t out_features, const std::string& activation, bool use_bn,
                 bool bias, double dropout_ratio, bool use_ln, int64_t dim = 2);
  // dim 2: x [B, in_features] → [B, out_features]; dim 3: x [B, T, in_features] → [B, T, out_features]
  torch::Tensor forward(const torch::Tensor& x);
  // The layer after its Linear, from the Linear's output `pre` [..., out_features] computed
  // elsewhere: norm, activation, dropout as in forward.
  torch::Tensor forward_after_linear(const torch::Tensor& pre);
  // Whether the Linear is followed directly by a ReLU (no norm); then forward_after_relu continues
  // from relu(pre) (the dropout, if any).
  bool relu_follows_linear() const { return fused_relu_; }
  torch::Tensor forward_after_relu(const torch::Tensor& h);
  const torch::nn::Linear& linear() const { return linear_; }

 private:
  torch::nn::Sequential perceptron_;
  torch::nn::Linear linear_{nullptr};  // perceptron_[0] (not registered twice)
  bool fused_relu_ = false;            // perceptron_[1] is ReLU: nn::linear_relu_forward runs both
  torch::Tensor norm_weight_;          // perceptron_[1]'s weight when it is a BatchNorm / LayerNorm
};
TORCH_MODULE(Perceptron);

class MLPImpl : public torch::nn::Module {
 public:
  // config_path names the config message in error messages (e.g. "model_config.deepfm.deep").
  // Throws tzrec::ConfigError for empty/non-positive hidden_units, a dropout_ratio of the wrong
  // length or outside [0, 1], use_bn together with use_ln, or a bad activation string. options.dim
  // other than 2 or 3 fails a TORCH_CHECK.
  MLPImpl(int64_t in_features, MLPOptions options, const std::string& config_path = "MLP");
  // dim 2: x [B, in_features] → [B, hidden_units.back()]
  // dim 3: x [B, T, in_features] → [B, T, hidden_units.back()]
  torch::Tensor forward(const torch::Tensor& x);
  // Every layer's output, in order (tzrec's return_hidden_layer_feature: "hidden_layer<i>"); the
  // last is forward(x).
  std::vector<torch::Tensor> forward_hidden(const torch::Tensor& x);
  // For modules that compute the first layer's Linear themselves (e.g. DINEncoder's split of its
  // first layer, nn/din_encoder.h): the MLP's output from that Linear's output `pre`
  // [..., hidden_units[0]] (layer 0's norm, activation and dropout, then the other layers), and,
  // when first_layer_relu(), from relu(pre).
  torch::Tensor forward_from_first_linear(const torch::Tensor& pre);
  bool first_layer_relu() const { return layer(0).relu_follows_linear(); }
  torch::Tensor forward_from_first_relu(const torch::Tensor& h);
  // Layer 0's Linear (its weight [hidden_units[0], in_features]; no bias when use_bn).
  const torch::nn::Linear& first_linear() const { return layer(0).linear(); }
  int64_t output_dim() const { return options_.hidden_units.back(); }
  const MLPOptions& options() const { return options_; }

 private:
  PerceptronImpl& layer(size_t i) const { return *(*mlp_)[i]->as<PerceptronImpl>(); }
  torch::Tensor forward_layers_from(size_t first, torch::Tensor net);

  MLPOptions options_;
  torch::nn::ModuleList mlp_;
};
TORCH_MODULE(MLP);

}  // namespace tzrec::nn
