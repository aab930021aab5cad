// The prediction tasks of a model (docs/tzrec-compatibility.md §4, §7.1): a single-task rank model
// has one task made of the top-level model_config fields (losses, metrics, train_metrics,
// num_class, the first label field and sample weight field); a multi-task model has one task per
// `task_towers` entry (its own label, losses, metrics, num_class and loss weighting, tzrec's
// MultiTaskRank), whose prediction, loss and metric names carry the suffix "_<tower_name>".
#pragma once

#include <string>
#include <vector>

#include "tzrec/protos/model.pb.h"

namespace tzrec::models {

struct ModelTask {
  std::string tower;   // tower_name; "" for a single-task model
  std::string suffix;  // "" or "_<tower_name>"
  std::string path;    // config path of the task's fields, e.g. "model_config.mmoe.task_towers[1]"
  std::string label_name;
  int64_t num_class = 1;
  google::protobuf::RepeatedPtrField<protos::LossConfig> losses;
  google::protobuf::RepeatedPtrField<protos::MetricConfig> metrics;
  google::protobuf::RepeatedPtrField<protos::TrainMetricConfig> train_metrics;
  std::string sample_weight_name;  // "" = none

  // Multi-task loss weighting (TaskTower; tzrec MultiTaskRank.loss): when `weighted`, the loss
  // weight of a row is its sample weight (or 1) × (in_task_space_weight if
  // label[task_space_indicator_label] > 0 else out_task_space_weight), normalised by its batch
  // mean, × `weight`.
  bool weighted = false;  // sample_weight_name, weight or task_space_indicator_label set
  double weight = 1.0;
  std::string task_space_indicator_label;
  double in_task_space_weight = 1.0;
  double out_task_space_weight = 1.0;
  double pareto_min_loss_weight = 0.0;
  // FusionSubTaskConfig.task_bitmask (generative models): the task's label is 1 where
  // (label & label_bitmask) > 0; 0 = the label as it is.
  int64_t label_bitmask = 0;

  // Set from the losses when the model is built: which predictions the task has.
  bool has_binary_loss = false;   // "logits<suffix>" [B], "probs<suffix>" [B]
  bool has_softmax_loss = false;  // "logits<suffix>" [B, C], "probs<suffix>" [B, C] (+ "probs1<suffix>")
  bool has_l2_loss = false;       // "y<suffix>" [B]

  // Match models (TorchEasyRec's MatchModel, docs/tzrec-compatibility.md §7.1): the task's one loss
  // is softmax_cross_entropy on "similarity" [B, N] — against column 0 (the positive item before
  // the sampled negatives) or, with in_batch_negative, against the diagonal — and its metrics are
  // recall_at_k with the same targets. The label column is not read by them.
  bool match = false;
  bool in_batch_negative = false;

  // Predicted only in training (RocketLaunching's booster net, docs/tzrec-compatibility.md §7.1):
  // its losses apply in training only, its train_metrics run, and it has no eval metrics.
  bool training_only = false;
};

// Whether the model oneof of `model_config` is a multi-task model with task_towers (mmoe, dbmtl, ple, pepnet,
// dc2vr) or fusion_mtl_tower task_configs (dlrm_hstu, ultra_hstu).
bool is_multi_task(const protos::ModelConfig& model_config);
// Whether it is a match (retrieval) model scoring users against items (dssm, dssm_v2, dat, mind,
// hstu_match).
bool is_match_model(const protos::ModelConfig& model_config);

// The tasks of `model_config`. labels / sample_weights: data_config.label_fields /
// sample_weight_fields. Throws ConfigError naming the field for: no label field (single task), a
// multi-task model without task towers, an empty or duplicate tower_name, a tower label_name (for
// dbmtl's BayesTaskTower: default the label field at the tower's position) or
// task_space_indicator_label that is not one of label_fields, a sample_weight_name that is not
// one of sample_weight_fields, num_class 0. RocketLaunching has two tasks over the top-level fields:
// "_booster" (training only) and "_light".
// The SID models (sid_rqvae, sid_rqkmeans) have none: they read no label.
std::vector<ModelTask> model_tasks(const protos::ModelConfig& model_config, const std::vector<std::string>& labels,
                                   const std::vector<std::string>& sample_weights);

}  // namespace tzrec::models
