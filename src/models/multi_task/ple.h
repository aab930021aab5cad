// PLE, Progressive Layered Extraction (tzrec/models/ple.py): the first feature group feeds every
// task input and the shared input of a stack of nn::ExtractionNet (extraction_networks, in order;
// the last one has no shared gate), then one nn::TaskTower per task_towers entry on its task's
// output. Predictions, losses and metrics per tower with the suffix "_<tower_name>".
// Submodules (state-dict prefixes): embedding_group, _extraction_nets.<l>, _task_tower.<t>.
#pragma once

#include <string>
#include <vector>

#include "models/model.h"
#include "nn/extraction_net.h"
#include "nn/task_tower.h"

namespace tzrec::models {

class PLE : public Model {
 public:
  PLE(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
      std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::string group_;  // the first feature group
  std::vector<nn::ExtractionNet> layers_;
  std::vector<nn::TaskTower> towers_;  // in task order
};

}  // namespace tzrec::models
