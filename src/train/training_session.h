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
#include "optim/grad_clipping.h"
#include "optim/gradient_accumulation.h"
#include "optim/lr_scheduler.h"
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

  // Backward of `total_loss` and the optimizer work of global step `step`, in TorchEasyRec's order:
  // gradient accumulation (dense gradients kept over the window, loss divided by its length),
  // learning rates from the schedules, dense gradient clipping, then the updates. The sparse
  // side updates on every step, as fused embedding optimizers do.
  void backward_and_step(const torch::Tensor& total_loss, int64_t step);
  // Advance the per-step schedules after a trained step / the per-epoch ones at an epoch end.
  void advance_step_schedules();
  void advance_epoch_schedules();
  // Puts the schedules where an uninterrupted run would be after `trained_steps` steps and
  // `epochs_completed` epochs (used by --continue_train).
  void set_schedule_position(int64_t trained_steps, int64_t epochs_completed);
  double sparse_lr() const { return sparse_lr_->lr(); }
  double dense_lr() const { return dense_lr_->lr(); }

 private:
  protos::EasyRecConfig config_;
  std::vector<feature::FeatureInfo> features_;
  std::shared_ptr<models::Model> model_;
  std::unique_ptr<embedding::SparseOptimizer> sparse_optimizer_;
  std::unique_ptr<optim::DenseOptimizer> dense_optimizer_;
  std::unique_ptr<optim::LrScheduler> sparse_lr_;
  std::unique_ptr<optim::LrScheduler> dense_lr_;
  optim::GradClippingOptions clipping_;
  optim::GradientAccumulation accumulation_{0};
  std::vector<torch::Tensor> dense_params_;  // clipped by grad_clipping (never embedding tables)
};

}  // namespace tzrec::train
