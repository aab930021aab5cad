// `tzrec feature_selection`: TorchEasyRec's tools/feature_selection (VariationalDropoutFS) —
// features ranked by the dropout ratios that model_config.variational_dropout learnt for them,
// and the config cut down to the top k of each group (docs/tzrec-compatibility.md §3.5).
//
// A model with variational_dropout has, per DEEP / WIDE feature group of more than one feature
// (and per match tower input group), a parameter `...group_variational_dropouts.<group>.feature_p`
// whose sigmoid is each feature's learnt dropout ratio: the group's features in feature_names
// order, then its sequence encoders' outputs, named "<group>_seq_encoder_<i>" as TorchEasyRec
// names them. A low ratio marks an important feature.
//
// The tool writes, per such group, `feature_dropout_ratio_<group>.csv` (columns feature_name,
// mean_drop_p, ascending ratio, ties in group order; numbers as Python prints them) and the config
// with, in each such group, only its topk features of lowest ratio (in their order), and without
// the features that were only in the dropped places: a feature stays when it is in the top k of a
// group, in a SEQUENCE group or a nested sequence group, in a group without variational dropout,
// or in no group at all. (TorchEasyRec keeps only the first three kinds and every grouped
// sequence_feature, which leaves a group without dropout — a WIDE or single-feature group —
// naming features the config no longer has, and FG_DAG inputs outside groups missing.)
// `clear_variational_dropout` removes model_config.variational_dropout from it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

struct GroupDropoutRatios {
  std::string group;
  std::vector<std::pair<std::string, double>> ratios;  // (feature, sigmoid(feature_p)), ascending
};

// The ratios of every group with a variational dropout in `tensors` (a checkpoint's model
// tensors; `checkpoint` names it in messages), in config group order. CheckpointError for a
// feature_p of a group the config does not have, or with another length than the group's features
// and encoders, and when there is none; ConfigError when the config has no variational_dropout.
std::vector<GroupDropoutRatios> feature_dropout_ratios(const protos::EasyRecConfig& config,
                                                       const std::map<std::string, torch::Tensor>& tensors,
                                                       const std::string& checkpoint);

// `config` with the selection of the file comment applied (topk >= 1).
protos::EasyRecConfig select_features(const protos::EasyRecConfig& config,
                                      const std::vector<GroupDropoutRatios>& groups, int64_t topk,
                                      bool clear_variational_dropout);

struct FeatureSelectionOptions {
  std::string pipeline_config_path;
  std::string model_dir;   // a model_dir (its latest checkpoint) or a model.ckpt-N; empty: the config's
  std::string output_dir;  // created when missing
  int64_t topk = 100;
  bool visualize = false;  // TorchEasyRec's matplotlib charts: not supported yet
  bool clear_variational_dropout = false;
};

// The command: the CSV files and `<output_dir>/<config file name>`, whose path it returns.
// UsageError for topk < 1 or an empty output_dir; NotSupportedError for visualize; CheckpointError
// without a checkpoint; the errors of feature_dropout_ratios.
std::string run_feature_selection(const FeatureSelectionOptions& options);

}  // namespace tzrec::train
