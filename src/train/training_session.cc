#include "train/training_session.h"

#include "base/error.h"
#include "feature/features.h"
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

void TrainingSession::zero_grad() {
  sparse_optimizer_->zero_grad();
  dense_optimizer_->zero_grad();
}

void TrainingSession::optimizer_step() {
  sparse_optimizer_->step();
  dense_optimizer_->step();
}

}  // namespace tzrec::train
