// PEPNet, Parameter and Embedding Personalized Network (tzrec/models/pepnet.py;
// docs/tzrec-compatibility.md §4): the embeddings of feature group `all` [B, A], scaled by
// nn::EPNet gates from group `domain` when it exists, feed either nn::PPNet (one gated MLP per
// task from group `uia`, when it exists) or every task directly; then nn::TaskTowers.
//
// Groups (DEEP): `all` (required), `domain` (optional: EPNet), `uia` (optional: PPNet).
// Task tower inputs: ppnet_hidden_units.back() with PPNet, else A.
// Without domain_input_name: one tower per task_towers entry, predictions "<pred>_<tower_name>".
// With domain_input_name (a label field holding domain ids 0..task_domain_num-1): task_domain_num
// towers per task, tower (t, d) at index t · task_domain_num + d, predictions
// "<pred>_<tower_name>_<d>" (e.g. "probs_ctr_1"); the losses and metrics of a task read, for each
// row, the prediction of the domain its label column names (task_predictions(); tzrec's
// _select_domain_task_output), so their names keep the plain "_<tower_name>" suffix.
//
// Submodules (state-dict prefixes): embedding_group, epnet (when `domain`), ppnet (when `uia`),
// _task_tower.<i>.
#pragma once

#include <string>
#include <vector>

#include "models/model.h"
#include "nn/personalized_net.h"
#include "nn/task_tower.h"

namespace tzrec::models {

class PEPNet : public Model {
 public:
  // Throws ConfigError naming the field for a missing `all` group, a group of another type than
  // DEEP, epnet_hidden_unit 0, bad ppnet_* values with a `uia` group, a domain_input_name that is
  // not one of data_config.label_fields, or task_domain_num < 1 with domain_input_name.
  PEPNet(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;
  // With domain_input_name: "<pred>_<tower>_<d>" [B, ...] for d < task_domain_num → "<pred>_<tower>"
  // [B, ...] holding row b's prediction of domain label[b]. Throws DataError when the batch lacks
  // the label column or a row's value is not an integer in [0, task_domain_num). Without it: the
  // predictions unchanged.
  TensorMap task_predictions(const TensorMap& predictions, const sparse::Batch& batch) const override;

 private:
  // The domain label column as ids [B] int64, checked.
  torch::Tensor domain_ids(const sparse::Batch& batch) const;

  nn::EPNet epnet_{nullptr};
  nn::PPNet ppnet_{nullptr};
  std::string domain_input_name_;  // "" = one tower per task
  int64_t task_domain_num_ = 1;    // towers per task with domain_input_name
  std::vector<nn::TaskTower> towers_;  // task-major: t · (domain_input_name ? task_domain_num : 1) + d
};

}  // namespace tzrec::models
