#include "models/rank/mask_net.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {
namespace {

// protobuf's ToShortestFloat (python json_format, used by tzrec's config_to_kwargs): the float32
// value printed with 6, 7, ... significant digits until it parses back to the same float32.
double python_float_of(float value) {
  if (!std::isfinite(value)) return static_cast<double>(value);
  for (int precision = 6; precision < 17; ++precision) {
    const std::string text = fmt::format("{:.{}g}", static_cast<double>(value), precision);
    const double parsed = std::strtod(text.c_str(), nullptr);
    if (static_cast<float>(parsed) == value) return parsed;
  }
  return static_cast<double>(value);
}

}  // namespace

nn::MaskNetOptions to_mask_net_options(const protos::MaskNetModule& cfg, const std::string& path) {
  nn::MaskNetOptions o;
  o.n_mask_blocks = cfg.n_mask_blocks();
  o.use_parallel = cfg.use_parallel();
  if (!cfg.has_mask_block()) throw ConfigError(path + ".mask_block: required, e.g. mask_block { hidden_dim: 256 }");
  const protos::MaskBlock& block = cfg.mask_block();
  o.mask_block.reduction_ratio = python_float_of(block.reduction_ratio());
  o.mask_block.aggregation_dim = block.aggregation_dim();
  o.mask_block.hidden_dim = block.hidden_dim();
  if (block.aggregation_dim() != 0 && block.reduction_ratio() != 0.0f) {
    log::warning("{}.mask_block.aggregation_dim is ignored while reduction_ratio ({}, default 1.0) is non-zero, as in "
                 "TorchEasyRec; set reduction_ratio: 0 to use it",
                 path, block.reduction_ratio());
  }
  if (cfg.has_top_mlp()) o.top_mlp = to_mlp_options(cfg.top_mlp());
  return o;
}

MaskNet::MaskNet(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                 std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::MaskNet& cfg = model_config_.mask_net();
  const std::string path = "model_config.mask_net.mask_net_module";
  if (!cfg.has_mask_net_module()) throw ConfigError(path + ": required");
  init_input(features);
  group_ = first_group("MaskNet");
  mask_net_layer_ = register_module(
      "mask_net_layer", nn::MaskNetModule(embedding_group_->group_total_dim(group_),
                                          to_mask_net_options(cfg.mask_net_module(), path), path));
  output_linear_ = register_module(
      "output_linear",
      torch::nn::Linear(torch::nn::LinearOptions(mask_net_layer_->output_dim(), num_class_).bias(false)));
}

TensorMap MaskNet::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor hidden = mask_net_layer_->forward(grouped.at(group_));
  return output_to_prediction(nn::linear_forward(hidden, output_linear_->weight, torch::Tensor()));
}

}  // namespace tzrec::models
