#include "models/rank/dense_sparse_model.h"

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"

namespace tzrec::models {

void DenseSparseModel::init_dense_sparse(const std::string& model_name, const std::string& path,
                                         const protos::MLP* dense_mlp_config, bool refuse_sequence_encoders) {
  const std::vector<std::string> groups = embedding_group_->group_names();
  if (groups.empty()) {
    throw ConfigError(fmt::format("model_config.feature_groups: {} needs a feature group named 'sparse'", model_name));
  }
  const bool single = groups.size() == 1;
  sparse_group_ = single ? groups.front() : "sparse";
  if (!single) require_group(model_name, "sparse", protos::DEEP);
  const bool has_dense = !single && embedding_group_->has_group("dense");
  if (refuse_sequence_encoders) {
    // Their outputs are no per-feature embeddings (TorchEasyRec raises for them).
    for (const protos::FeatureGroupConfig& g : model_config_.feature_groups()) {
      const bool read = g.group_name() == sparse_group_ || (has_dense && g.group_name() == "dense");
      if (read && (g.sequence_encoders_size() > 0 || g.sequence_groups_size() > 0)) {
        throw ConfigError(fmt::format("{}.sequence_groups: {}'s '{}' group cannot have sequence groups or encoders",
                                      group_path(g.group_name()), model_name, g.group_name()));
      }
    }
  }
  if (has_dense) {
    if (dense_mlp_config == nullptr) {
      throw ConfigError(path + ".dense_mlp: required with a 'dense' feature group (its last hidden unit must equal "
                               "the embedding_dim of the 'sparse' group)");
    }
    dense_mlp_ = register_module("dense_mlp", nn::MLP(embedding_group_->group_total_dim("dense"),
                                                      to_mlp_options(*dense_mlp_config), path + ".dense_mlp"));
  } else if (dense_mlp_config != nullptr) {
    log::warning("{}.dense_mlp is ignored: there is no 'dense' feature group next to the sparse group '{}' (as in "
                 "TorchEasyRec)",
                 path, sparse_group_);
  }
  sparse_dim_ = common_embedding_dim(sparse_group_, model_name + "'s sparse group");
  sparse_num_ = static_cast<int64_t>(embedding_group_->group_feature_dims(sparse_group_).size());
  if (dense_mlp_ && dense_mlp_->output_dim() != sparse_dim_) {
    throw ConfigError(fmt::format(
        "{}.dense_mlp.hidden_units: the last hidden unit must equal the embedding dimension of the 'sparse' group "
        "({}), got {}",
        path, sparse_dim_, dense_mlp_->output_dim()));
  }
}

torch::Tensor DenseSparseModel::feature_vectors(const std::map<std::string, torch::Tensor>& grouped,
                                                torch::Tensor* dense_out) {
  torch::Tensor feat = grouped.at(sparse_group_).reshape({-1, sparse_num_, sparse_dim_});  // [B, N, D]
  if (!dense_mlp_) return feat;
  torch::Tensor dense = dense_mlp_->forward(grouped.at("dense"));  // [B, D]
  if (dense_out != nullptr) *dense_out = dense;
  return torch::cat({dense.unsqueeze(1).to(feat.scalar_type()), feat}, 1);  // [B, 1 + N, D]
}

}  // namespace tzrec::models
