#include "nn/wukong_layer.h"

#include "nn/autocast.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {

LinearCompressBlockImpl::LinearCompressBlockImpl(int64_t feature_num_in, int64_t feature_num_out) {
  weight = register_parameter("weight", torch::empty({feature_num_in, feature_num_out}));
  if (weight.numel() > 0) torch::nn::init::kaiming_uniform_(weight);
}

torch::Tensor LinearCompressBlockImpl::forward(const torch::Tensor& x) {
  // [B, D, F] · [F, F'] → [B, D, F'] → [B, F', D]
  return torch::matmul(x.transpose(1, 2), weight).transpose(1, 2);
}

FactorizationMachineBlockImpl::FactorizationMachineBlockImpl(int64_t input_dim, int64_t feature_num_in,
                                                             int64_t feature_num_out, int64_t compressed_feature_num,
                                                             const MLPOptions& feature_num_mlp,
                                                             const std::string& config_path)
    : input_dim_(input_dim),
      feature_num_in_(feature_num_in),
      feature_num_out_(feature_num_out),
      compressed_feature_num_(compressed_feature_num) {
  weight_ = register_parameter("weight", torch::empty({feature_num_in, compressed_feature_num}));
  torch::nn::init::kaiming_uniform_(weight_);
  const int64_t flat = feature_num_in * compressed_feature_num;
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({flat})));
  mlp_ = register_module("mlp", MLP(flat, feature_num_mlp, config_path));
  feature_out_liner_ =
      register_module("feature_out_liner", torch::nn::Linear(mlp_->output_dim(), feature_num_out * input_dim));
}

torch::Tensor FactorizationMachineBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor compressed = torch::matmul(x.transpose(1, 2), weight_);  // [B, D, C]
  torch::Tensor products = torch::matmul(x, compressed);                  // [B, F, C]
  torch::Tensor flat = products.reshape({-1, feature_num_in_ * compressed_feature_num_});
  torch::Tensor h = mlp_->forward(norm_->forward(in_norm_dtype(flat, norm_->weight)));
  torch::Tensor out = linear_forward(h, feature_out_liner_->weight, feature_out_liner_->bias);
  return out.view({-1, feature_num_out_, input_dim_});
}

WuKongLayerImpl::WuKongLayerImpl(int64_t input_dim, int64_t feature_num, const WuKongLayerOptions& options,
                                 const std::string& config_path)
    : options_(options) {
  lcb_ = register_module("lcb", LinearCompressBlock(feature_num, options.lcb_feature_num));
  fmb_ = register_module("fmb", FactorizationMachineBlock(input_dim, feature_num, options.fmb_feature_num,
                                                          options.compressed_feature_num, options.feature_num_mlp,
                                                          config_path + ".feature_num_mlp"));
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({input_dim})));
  if (feature_num != output_feature_num()) {
    residual_projection_ =
        register_module("residual_projection", LinearCompressBlock(feature_num, output_feature_num()));
  }
}

torch::Tensor WuKongLayerImpl::forward(const torch::Tensor& x) {
  torch::Tensor out = torch::cat({fmb_->forward(x), lcb_->forward(x)}, 1);
  torch::Tensor residual = residual_projection_ ? residual_projection_->forward(x) : x;
  torch::Tensor sum = out + residual;
  return norm_->forward(in_norm_dtype(sum, norm_->weight));
}

}  // namespace tzrec::nn
