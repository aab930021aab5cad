#include "models/rank/wukong.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {
namespace {

nn::WuKongLayerOptions layer_options(const protos::WuKongLayer& cfg, const std::string& path) {
  for (const char* field : {"lcb_feature_num", "fmb_feature_num", "feature_num_mlp"}) {
    if (!cfg.GetReflection()->HasField(cfg, cfg.GetDescriptor()->FindFieldByName(field))) {
      throw ConfigError(fmt::format("{}.{}: required", path, field));
    }
  }
  if (cfg.fmb_feature_num() == 0) {
    throw ConfigError(path + ".fmb_feature_num: must be > 0 (the factorization machine block outputs it)");
  }
  if (cfg.compressed_feature_num() == 0) throw ConfigError(path + ".compressed_feature_num: must be > 0");
  nn::WuKongLayerOptions o;
  o.lcb_feature_num = cfg.lcb_feature_num();
  o.fmb_feature_num = cfg.fmb_feature_num();
  o.compressed_feature_num = cfg.compressed_feature_num();
  o.feature_num_mlp = to_mlp_options(cfg.feature_num_mlp());
  return o;
}

}  // namespace

WuKong::WuKong(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
               std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : DenseSparseModel(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::WuKong& cfg = model_config_.wukong();
  const std::string path = "model_config.wukong";
  init_input(features);
  init_dense_sparse("WuKong", path, cfg.has_dense_mlp() ? &cfg.dense_mlp() : nullptr,
                    /*refuse_sequence_encoders=*/true);

  torch::nn::ModuleList layers;
  int64_t feature_num = sparse_num_ + (dense_mlp_ ? 1 : 0);
  for (int l = 0; l < cfg.wukong_layers_size(); ++l) {
    const std::string layer_path = fmt::format("{}.wukong_layers[{}]", path, l);
    nn::WuKongLayer layer(sparse_dim_, feature_num, layer_options(cfg.wukong_layers(l), layer_path), layer_path);
    feature_num = layer->output_feature_num();
    layers->push_back(layer);
    layers_.push_back(layer);
  }
  register_module("_wukong_layers", layers);
  if (!cfg.has_final()) throw ConfigError(path + ".final: required");
  final_mlp_ = register_module("final_mlp",
                               nn::MLP(feature_num * sparse_dim_, to_mlp_options(cfg.final()), path + ".final"));
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_mlp_->output_dim(), num_class_));
}

TensorMap WuKong::predict_impl(const sparse::Batch& batch) {
  torch::Tensor feat = feature_vectors(build_input(batch));  // [B, (1 +) N, D]
  for (nn::WuKongLayer& layer : layers_) feat = layer->forward(feat);
  torch::Tensor y = final_mlp_->forward(feat.flatten(1));
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
