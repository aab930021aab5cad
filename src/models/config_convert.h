// Conversions from config / feature descriptions to the plain option structs of embedding/ and nn/.
#pragma once

#include <string>
#include <vector>

#include "embedding/embedding_config.h"
#include "embedding/embedding_group.h"
#include "feature/feature_info.h"
#include "nn/mlp.h"
#include "tzrec/protos/model.pb.h"
#include "tzrec/protos/module.pb.h"

namespace tzrec::models {

embedding::FeatureSpec to_feature_spec(const feature::FeatureInfo& info);
std::vector<embedding::FeatureSpec> to_feature_specs(const std::vector<feature::FeatureInfo>& infos);

// model_config.feature_groups → embedding groups, with their nested sequence_groups and the input
// of each sequence_encoders entry (empty when unset); a nested sequence group without an
// embedding_name_suffix takes its DEEP group's (TorchEasyRec's inheritance).
std::vector<embedding::FeatureGroupConfig> to_group_configs(const protos::ModelConfig& model_config);

nn::MLPOptions to_mlp_options(const protos::MLP& mlp);

}  // namespace tzrec::models
