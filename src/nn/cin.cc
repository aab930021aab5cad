#include "nn/cin.h"

#include <numeric>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// z[b, d, h·F + f] = xk[b, d, h] · x0[b, d, f] with a batched-GEMM backward: autograd's
// broadcast-multiply backward reduces [B, D, H, F] tensors twice and took about twice as long as
// the convolutions' GEMMs on Criteo-sized inputs.
class OuterProductFunction : public torch::autograd::Function<OuterProductFunction> {
 public:
  // xk: [B, D, H], x0: [B, D, F] → [B, D, H·F]
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& xk, const torch::Tensor& x0) {
    ctx->save_for_backward({xk, x0});
    return (xk.unsqueeze(3) * x0.unsqueeze(2)).reshape({xk.size(0), xk.size(1), -1});
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& xk = saved[0];
    const torch::Tensor& x0 = saved[1];
    const int64_t rows = xk.size(0) * xk.size(1), h = xk.size(2), f = x0.size(2);
    const auto dtype = c10::promoteTypes(xk.scalar_type(), x0.scalar_type());
    torch::Tensor g = grads[0].to(dtype).reshape({rows, h, f});  // [B·D, H, F]
    torch::Tensor dxk = torch::bmm(g, x0.to(dtype).reshape({rows, f, 1})).view(xk.sizes());
    torch::Tensor dx0 = torch::bmm(xk.to(dtype).reshape({rows, 1, h}), g).view(x0.sizes());
    return {dxk.to(xk.scalar_type()), dx0.to(x0.scalar_type())};
  }
};

}  // namespace

CINImpl::CINImpl(int64_t feature_num, std::vector<int64_t> cin_layer_size, const std::string& config_path)
    : feature_num_(feature_num), layer_size_(std::move(cin_layer_size)) {
  if (feature_num < 1) {
    throw ConfigError(fmt::format("{}: needs at least one input feature (is the 'wide' group empty?)", config_path));
  }
  if (layer_size_.empty()) {
    throw ConfigError(fmt::format("{}.cin_layer_size: needs at least one layer, e.g. cin_layer_size: [64, 64]",
                                  config_path));
  }
  auto list = register_module("cin_layers", torch::nn::ModuleList());
  int64_t h = feature_num;
  for (size_t k = 0; k < layer_size_.size(); ++k) {
    if (layer_size_[k] < 1) {
      throw ConfigError(fmt::format("{}.cin_layer_size[{}]: must be > 0, got {}", config_path, k, layer_size_[k]));
    }
    // nn.Conv1d(in_channels=H_k·F, out_channels=H_{k+1}, kernel_size=1): same parameter shapes
    // and default initialisation as TorchEasyRec's layer.
    layers_.emplace_back(torch::nn::Conv1dOptions(h * feature_num, layer_size_[k], 1));
    list->push_back(layers_.back());
    h = layer_size_[k];
  }
}

int64_t CINImpl::output_dim() const { return std::accumulate(layer_size_.begin(), layer_size_.end(), int64_t{0}); }

torch::Tensor CINImpl::forward(const torch::Tensor& input) {
  TORCH_CHECK(input.dim() == 3 && input.size(1) == feature_num_, "CIN expects [B, ", feature_num_, ", D], got ",
              input.sizes());
  // Work in [B, D, channels] layout so that the kernel-size-1 convolution is one GEMM over the
  // last dimension (channel index h·F + f, as TorchEasyRec's view of einsum "bhd,bfd->bhfd").
  torch::Tensor x0 = input.transpose(1, 2);  // [B, D, F]
  torch::Tensor xk = x0;                     // [B, D, H_k]
  std::vector<torch::Tensor> out;
  out.reserve(layers_.size());
  for (auto& layer : layers_) {
    torch::Tensor z = OuterProductFunction::apply(xk, x0);  // [B, D, H_k·F]
    xk = linear_forward(z, layer->weight.squeeze(2), layer->bias);                    // [B, D, H_{k+1}]
    out.push_back(xk.sum(1));                                                         // [B, H_{k+1}]
  }
  return torch::cat(out, 1);
}

}  // namespace tzrec::nn
