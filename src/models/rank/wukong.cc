#include "models/rank/wukong.h"

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {
namespace {

// TorchEasyRec refuses sequence encoders in WuKong's groups: their outputs are no per-feature
// embeddings.
void refuse_sequence_encoders(const protos::ModelConfig& mc, const std::string& group, const std::string& path) {
  for (const protos::FeatureGroupConfig& g : mc.feature_groups()) {
    if (g.group_name() == group && (g.sequence_encoders_size() > 0 || g.sequence_groups_size() > 0)) {
      throw ConfigError(fmt::format("{}.sequence_groups: WuKong's '{}' group cannot have sequence groups or encoders",
                                    path, group));
    }
  }
}

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
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::WuKong& cfg = model_config_.wukong();
  const std::string path = "model_config.wukong";
  init_input(features);
  const std::vector<std::string> groups = embedding_group_->group_names();
  if (groups.empty()) throw ConfigError("model_config.feature_groups: WuKong needs a feature group named 'sparse'");
  // As TorchEasyRec: one group is the sparse group whatever its name; otherwise "sparse" and,
  // optionally, "dense".
  const bool single = groups.size() == 1;
  sparse_group_ = single ? groups.front() : "sparse";
  if (!single) require_group("WuKong", "sparse", protos::DEEP);
  refuse_sequence_encoders(model_config_, sparse_group_, group_path(sparse_group_));

  if (!single && embedding_group_->has_group("dense")) {
    refuse_sequence_encoders(model_config_, "dense", group_path("dense"));
    if (!cfg.has_dense_mlp()) {
      throw ConfigError(path + ".dense_mlp: required with a 'dense' feature group (its last hidden unit must equal "
                               "the embedding_dim of the 'sparse' group)");
    }
    dense_mlp_ = register_module("dense_mlp", nn::MLP(embedding_group_->group_total_dim("dense"),
                                                      to_mlp_options(cfg.dense_mlp()), path + ".dense_mlp"));
  } else if (cfg.has_dense_mlp()) {
    log::warning("{}.dense_mlp is ignored: there is no 'dense' feature group next to the sparse group '{}' (as in "
                 "TorchEasyRec)",
                 path, sparse_group_);
  }

  sparse_dim_ = common_embedding_dim(sparse_group_, "WuKong's sparse group");
  sparse_num_ = static_cast<int64_t>(embedding_group_->group_feature_dims(sparse_group_).size());
  if (dense_mlp_ && dense_mlp_->output_dim() != sparse_dim_) {
    throw ConfigError(fmt::format(
        "{}.dense_mlp.hidden_units: the last hidden unit must equal the embedding dimension of the 'sparse' group "
        "({}), got {}",
        path, sparse_dim_, dense_mlp_->output_dim()));
  }

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
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor feat = grouped.at(sparse_group_).reshape({-1, sparse_num_, sparse_dim_});  // [B, N, D]
  if (dense_mlp_) {
    torch::Tensor dense = dense_mlp_->forward(grouped.at("dense"));                   // [B, D]
    feat = torch::cat({dense.unsqueeze(1).to(feat.scalar_type()), feat}, 1);          // [B, 1 + N, D]
  }
  for (nn::WuKongLayer& layer : layers_) feat = layer->forward(feat);
  torch::Tensor y = final_mlp_->forward(feat.flatten(1));
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
