#include "train/training_session.h"

#include "base/error.h"
#include "feature/features.h"
#include "train/lr_scheduler_builder.h"
#include "train/optimizer_builder.h"

namespace tzrec::train {
namespace {

constexpr const char* kSparsePrefix = "sparse.";
constexpr const char* kDensePrefix = "dense.";

std::map<std::string, torch::Tensor> with_prefix(const std::map<std::string, torch::Tensor>& in,
                                                 const std::string& prefix) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : in) out.emplace(prefix + k, v);
  return out;
}

std::map<std::string, torch::Tensor> strip_prefix(const std::map<std::string, torch::Tensor>& in,
                                                  const std::string& prefix) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : in) {
    if (k.rfind(prefix, 0) == 0) out.emplace(k.substr(prefix.size()), v);
  }
  return out;
}

}  // namespace

TrainingSession::TrainingSession(const protos::EasyRecConfig& config, bool with_optimizers)
    : config_(config) {
  features_ = feature::build_feature_infos(config_);
  model_ = models::create_model(config_, features_);
  if (with_optimizers) {
    const auto& train_config = config_.train_config();
    const auto sparse_options = sparse_optimizer_options(train_config.sparse_optimizer());
    sparse_optimizer_ = std::make_unique<embedding::SparseOptimizer>(sparse_options,
                                                                     model_->embedding_tables());
    // FBGEMM clips the pooled output gradient, which only the embedding forward can do.
    model_->embedding_group()->set_gradient_clipping(sparse_options.gradient_clipping,
                                                     sparse_options.max_gradient);
    dense_optimizer_ = std::make_unique<optim::DenseOptimizer>(
        dense_optimizer_options(train_config.dense_optimizer()), model_->dense_parameters());
    sparse_lr_ = std::make_unique<optim::LrScheduler>(build_lr_scheduler(train_config.sparse_optimizer()));
    dense_lr_ = std::make_unique<optim::LrScheduler>(build_lr_scheduler(train_config.dense_optimizer()));
    sparse_optimizer_->set_lr(sparse_lr_->lr());
    dense_optimizer_->set_lr(dense_lr_->lr());
    clipping_ = grad_clipping_options(train_config);
    accumulation_ = gradient_accumulation(train_config);
    for (auto& [name, tensor] : model_->dense_parameters()) dense_params_.push_back(tensor);
  }
}

std::vector<std::pair<std::string, torch::Tensor>> TrainingSession::model_tensors() {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : model_->named_parameters(/*recurse=*/true)) {
    out.emplace_back(item.key(), item.value());
  }
  for (const auto& item : model_->named_buffers(/*recurse=*/true)) {
    out.emplace_back(item.key(), item.value());
  }
  return out;
}

std::map<std::string, torch::Tensor> TrainingSession::optimizer_state() const {
  TORCH_CHECK(has_optimizers(), "optimizer_state() on a session built without optimizers");
  auto out = with_prefix(sparse_optimizer_->state_dict(), kSparsePrefix);
  auto dense = with_prefix(dense_optimizer_->state_dict(), kDensePrefix);
  out.insert(dense.begin(), dense.end());
  return out;
}

void TrainingSession::restore(const CheckpointData& checkpoint, bool restore_optimizer) {
  restore_tensors(checkpoint.model, model_tensors(), "model");
  if (restore_optimizer && has_optimizers()) {
    sparse_optimizer_->load_state_dict(strip_prefix(checkpoint.optimizer, kSparsePrefix));
    dense_optimizer_->load_state_dict(strip_prefix(checkpoint.optimizer, kDensePrefix));
  }
}

void TrainingSession::backward_and_step(const torch::Tensor& total_loss, int64_t step) {
  TORCH_CHECK(has_optimizers(), "backward_and_step() on a session built without optimizers");
  sparse_optimizer_->zero_grad();
  if (accumulation_.zero_grad_before(step)) {
    dense_optimizer_->zero_grad();
    // Fused sparse optimizers pick up a new learning rate only at the start of a window.
    sparse_optimizer_->set_lr(sparse_lr_->lr());
  }
  dense_optimizer_->set_lr(dense_lr_->lr());
  if (accumulation_.enabled()) {
    (total_loss / static_cast<double>(accumulation_.loss_divisor())).backward();
  } else {
    total_loss.backward();
  }
  sparse_optimizer_->step();
  if (accumulation_.step_after(step)) {
    optim::clip_gradients(clipping_, dense_params_);
    dense_optimizer_->step();
  }
}

void TrainingSession::advance_step_schedules() {
  for (auto* scheduler : {sparse_lr_.get(), dense_lr_.get()}) {
    if (!scheduler->by_epoch()) scheduler->step();
  }
}

void TrainingSession::advance_epoch_schedules() {
  for (auto* scheduler : {sparse_lr_.get(), dense_lr_.get()}) {
    if (scheduler->by_epoch()) scheduler->step();
  }
}

void TrainingSession::set_schedule_position(int64_t trained_steps, int64_t epochs_completed) {
  // The scheduler's count starts at 1 (torch's initial step) and grows by one per step / epoch.
  for (auto* scheduler : {sparse_lr_.get(), dense_lr_.get()}) {
    scheduler->set_step_count(1 + (scheduler->by_epoch() ? epochs_completed : trained_steps));
  }
}

}  // namespace tzrec::train
