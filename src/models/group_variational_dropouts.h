// The group variational dropouts of a model or of a match tower (model_config.variational_dropout,
// TorchEasyRec's RankModel / MatchTower): one nn::VariationalDropout per feature group of more
// than one feature, registered on the owning module as "group_variational_dropouts.<group>"
// (parameter "…<group>.feature_p"), applied to the group's embedding output, its penalty a loss
// "<group>_feature_p_loss".
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_group.h"
#include "nn/variational_dropout.h"
#include "tzrec/protos/model.pb.h"

namespace tzrec::models {

class GroupVariationalDropouts {
 public:
  // Nothing when model_config has no variational_dropout. `dims_of(group)`: the group's feature
  // dims (EmbeddingGroupImpl::group_feature_dims). Throws ConfigError for a negative or
  // non-finite regularization_lambda.
  void init(torch::nn::Module& owner, const protos::ModelConfig& model_config, const std::vector<std::string>& groups,
            const std::function<std::vector<int64_t>(const std::string&)>& dims_of);
  // Replaces grouped[group] by the dropout's output for every group with one, keeping the penalties.
  void apply(std::map<std::string, torch::Tensor>& grouped);
  // "<group>_feature_p_loss" → penalty of the last apply().
  const std::map<std::string, torch::Tensor>& penalties() const { return penalties_; }

 private:
  std::vector<std::pair<std::string, nn::VariationalDropout>> dropouts_;
  std::map<std::string, torch::Tensor> penalties_;
};

}  // namespace tzrec::models
