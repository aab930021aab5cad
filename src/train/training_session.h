// Everything one training or evaluation run holds: features, model and optimizers, plus the
// mapping between them and checkpoint tensors.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/sparse_optimizer.h"
#include "feature/feature_info.h"
#include "models/model.h"
#include "optim/dense_optimizer.h"
#include "train/checkpoint.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

class TrainingSession {
 public:
  // with_optimizers=false builds the model only (eval / predict).
  TrainingSession(const protos::EasyRecConfig& config, bool with_optimizers);

  const protos::EasyRecConfig& config() const { return config_; }
  models::Model& model() { return *model_; }
  embedding::SparseOptimizer& sparse_optimizer() { return *sparse_optimizer_; }
  optim::DenseOptimizer& dense_optimizer() { return *dense_optimizer_; }
  bool has_optimizers() const { return sparse_optimizer_ != nullptr; }

  // Parameters and buffers by state-dict name (what model.safetensors holds).
  std::vector<std::pair<std::string, torch::Tensor>> model_tensors();
  // "sparse.<...>" and "dense.<...>" optimizer state.
  std::map<std::string, torch::Tensor> optimizer_state() const;

  // Restores the model (and optimizer state unless restore_optimizer is false) from a checkpoint.
  void restore(const CheckpointData& checkpoint, bool restore_optimizer);

  void zero_grad();
  void optimizer_step();

 private:
  protos::EasyRecConfig config_;
  std::vector<feature::FeatureInfo> features_;
  std::shared_ptr<models::Model> model_;
  std::unique_ptr<embedding::SparseOptimizer> sparse_optimizer_;
  std::unique_ptr<optim::DenseOptimizer> dense_optimizer_;
};

}  // namespace tzrec::train
