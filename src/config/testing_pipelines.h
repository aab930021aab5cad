// Test-only pipeline configs the config, models and train rule tests share (header-only).
#pragma once

#include <string>

#include "config/pipeline_config.h"

namespace tzrec::config::testing {

// train_input_path, model_dir, a train_config (sgd sparse, adam dense, 10 steps) and a CSV
// data_config with label "label".
inline constexpr char kTrainAndData[] = R"(
train_input_path: "train.csv"
eval_input_path: ""
model_dir: "m"
train_config {
  sparse_optimizer { sgd_optimizer { lr: 0.1 } constant_learning_rate {} }
  dense_optimizer { adam_optimizer { lr: 0.01 } constant_learning_rate {} }
  num_steps: 10
}
data_config { batch_size: 8 dataset_type: CsvDataset with_header: true label_fields: "label" }
)";

// kTrainAndData with the features d0 (dense), c0, c1 (sparse, dim 4) and b0 (boundaries, dim 4).
inline const std::string kValidateCommon = std::string(kTrainAndData) + R"(
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" hash_bucket_size: 100 embedding_dim: 4 } }
feature_configs { raw_feature { feature_name: "b0" boundaries: [1, 2, 3] embedding_dim: 4 } }
)";

inline constexpr char kDeepFm[] = R"(
model_config {
  feature_groups { group_name: "wide" feature_names: ["c0", "c1", "b0"] group_type: WIDE }
  feature_groups { group_name: "fm" feature_names: ["c0", "c1", "b0"] group_type: DEEP }
  feature_groups { group_name: "deep" feature_names: ["d0", "c0", "c1", "b0"] group_type: DEEP }
  deepfm { deep { hidden_units: [8, 4] } final { hidden_units: [4] } }
  losses { binary_cross_entropy {} }
  metrics { auc {} }
}
)";

inline constexpr char kMultiTower[] = R"(
model_config {
  feature_groups { group_name: "user" feature_names: ["d0", "c0"] }
  feature_groups { group_name: "item" feature_names: ["c1", "b0"] }
  multi_tower {
    towers { input: "user" mlp { hidden_units: [8] } }
    towers { input: "item" mlp { hidden_units: [8] } }
    final { hidden_units: [4] }
  }
  losses { binary_cross_entropy {} }
}
)";

inline constexpr char kMMoE[] = R"(
model_config {
  feature_groups { group_name: "all" feature_names: ["d0", "c0", "c1", "b0"] }
  mmoe {
    expert_mlp { hidden_units: [8, 4] }
    num_expert: 2
    task_towers { tower_name: "ctr" label_name: "label" losses { binary_cross_entropy {} } metrics { auc {} } }
    task_towers { tower_name: "cvr" label_name: "buy" mlp { hidden_units: [4] } losses { l2_loss {} } }
  }
}
)";

// Base DeepFM config with `extra` text merged in (singular fields overwrite, repeated append).
inline protos::EasyRecConfig deepfm(const std::string& extra = "") {
  return parse_pipeline_config_text(kValidateCommon + kDeepFm + extra, "deepfm.config");
}
inline protos::EasyRecConfig multi_tower(const std::string& extra = "") {
  return parse_pipeline_config_text(kValidateCommon + kMultiTower + extra, "mt.config");
}
inline protos::EasyRecConfig mmoe(const std::string& extra = "") {
  return parse_pipeline_config_text(kValidateCommon + kMMoE + "data_config { label_fields: 'buy' }" + extra,
                                    "mmoe.config");
}
inline protos::EasyRecConfig edited(protos::EasyRecConfig config, const std::string& edits) {
  edit_config(&config, edits);
  return config;
}

}  // namespace tzrec::config::testing
