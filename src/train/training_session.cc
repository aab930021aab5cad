#include "train/training_session.h"

#include <regex>

#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "feature/features.h"
#include "train/lr_scheduler_builder.h"
#include "train/optimizer_builder.h"

namespace tzrec::train {
namespace {

constexpr const char* kSparsePrefix = "sparse.";
constexpr const char* kDensePrefix = "dense.";
// Inside the "dense." namespace: EMA shadows and part optimizer i state.
constexpr const char* kEmaPrefix = "ema.";
std::string part_prefix(int config_index) { return fmt::format("part{}.", config_index); }
// TorchEasyRec's parameter FQN: TrainWrapper holds the model as attribute "model".
constexpr const char* kFqnPrefix = "model.";

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

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool use_dense_ema_for_eval(const protos::EasyRecConfig& config) {
  if (config.eval_config().has_use_dense_ema()) return config.eval_config().use_dense_ema();
  return config.train_config().dense_optimizer().has_ema();
}

TrainingSession::TrainingSession(const protos::EasyRecConfig& config, bool with_optimizers)
    : config_(config) {
  features_ = feature::build_feature_infos(config_);
  model_ = models::create_model(config_, features_);
  if (with_optimizers) {
    const auto& train_config = config_.train_config();
    // TorchRec's fused tables: the sparse optimizer (and its gradient clipping of the pooled
    // output gradient) runs inside the embedding backward.
    sparse_optimizer_ = &model_->embedding_group()->enable_fused_optimizer(
        sparse_optimizer_options(train_config.sparse_optimizer()));
    const auto& dense_config = train_config.dense_optimizer();
    const auto dense_named = model_->dense_parameters();
    // Group the dense parameters by part_optimizers[i].regex_pattern (first full match wins).
    const int num_patterns = dense_config.part_optimizers_size();
    std::vector<std::regex> patterns;
    for (int i = 0; i < num_patterns; ++i) {
      const std::string& pattern = dense_config.part_optimizers(i).regex_pattern();
      try {
        patterns.emplace_back(pattern, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw ConfigError(fmt::format(
            "train_config.dense_optimizer.part_optimizers[{}].regex_pattern: '{}' is not a valid "
            "regular expression ({}); parameter names look like model.<module>.<param>, e.g. "
            "'model\\.deep_mlp\\..*'",
            i, pattern, e.what()));
      }
    }
    std::vector<std::pair<std::string, torch::Tensor>> remaining;
    std::vector<std::vector<std::pair<std::string, torch::Tensor>>> grouped(num_patterns);
    for (const auto& named : dense_named) {
      const std::string fqn = kFqnPrefix + named.first;
      int matched = -1;
      for (int i = 0; i < num_patterns && matched < 0; ++i) {
        if (std::regex_match(fqn, patterns[i])) matched = i;
      }
      (matched < 0 ? remaining : grouped[matched]).push_back(named);
    }
    dense_optimizer_ = std::make_unique<optim::DenseOptimizer>(dense_optimizer_options(dense_config),
                                                               remaining);
    sparse_lr_ = std::make_unique<optim::LrScheduler>(build_lr_scheduler(train_config.sparse_optimizer()));
    dense_lr_ = std::make_unique<optim::LrScheduler>(build_lr_scheduler(dense_config));
    for (int i = 0; i < num_patterns; ++i) {
      const std::string path = fmt::format("train_config.dense_optimizer.part_optimizers[{}]", i);
      if (grouped[i].empty()) {
        log::warning("{}: regex_pattern '{}' matches no dense parameter; this part optimizer is "
                     "not used", path, dense_config.part_optimizers(i).regex_pattern());
        continue;
      }
      std::vector<std::string> names;
      for (const auto& [name, t] : grouped[i]) names.push_back(kFqnPrefix + name);
      log::info("{} ({}) optimizes: {}", path, dense_config.part_optimizers(i).regex_pattern(),
                fmt::join(names, ", "));
      Part part;
      part.config_index = i;
      part.optimizer = std::make_unique<optim::DenseOptimizer>(
          dense_optimizer_options(dense_config.part_optimizers(i), path), grouped[i]);
      part.lr = std::make_unique<optim::LrScheduler>(build_part_lr_scheduler(dense_config, i));
      part.optimizer->set_lr(part.lr->lr());
      parts_.push_back(std::move(part));
    }
    if (dense_config.has_ema()) {
      ema_ = std::make_unique<optim::DenseEma>(dense_named, dense_config.ema().decay());
    }
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
  for (const Part& part : parts_) {
    auto state = with_prefix(part.optimizer->state_dict(),
                             kDensePrefix + part_prefix(part.config_index));
    out.insert(state.begin(), state.end());
  }
  if (ema_) {
    auto state = with_prefix(ema_->state_dict(), std::string(kDensePrefix) + kEmaPrefix);
    out.insert(state.begin(), state.end());
  }
  return out;
}

std::vector<double> TrainingSession::dense_group_lrs() const {
  TORCH_CHECK(has_optimizers(), "dense_group_lrs() on a session built without optimizers");
  std::vector<double> out = {dense_lr_->lr()};
  for (const Part& part : parts_) out.push_back(part.lr->lr());
  return out;
}

std::map<std::string, torch::Tensor> TrainingSession::ema_tensors() const {
  std::map<std::string, torch::Tensor> out;
  if (!ema_) return out;
  out = ema_->state_dict();
  out.erase(optim::DenseEma::kNAveragedKey);
  return out;
}

std::unique_ptr<optim::EmaSwapGuard> TrainingSession::swap_in_ema(bool enabled) {
  return std::make_unique<optim::EmaSwapGuard>(enabled ? ema_.get() : nullptr);
}

void TrainingSession::load_ema_weights(const CheckpointData& checkpoint) {
  const std::string prefix = std::string(kDensePrefix) + kEmaPrefix;
  std::vector<std::pair<std::string, torch::Tensor>> targets;
  for (const auto& [name, tensor] : model_->dense_parameters()) {
    targets.emplace_back(prefix + name, tensor);
  }
  for (const auto& [key, tensor] : targets) {
    if (checkpoint.optimizer.count(key) == 0) {
      throw CheckpointError(fmt::format(
          "checkpoint step {} has no dense EMA weight '{}' (it was trained without "
          "train_config.dense_optimizer.ema); set eval_config.use_dense_ema: false",
          checkpoint.step, key));
    }
  }
  std::map<std::string, torch::Tensor> values;
  for (const auto& [key, tensor] : targets) values.emplace(key, checkpoint.optimizer.at(key));
  restore_tensors(values, targets, "dense EMA");
}

void TrainingSession::restore(const CheckpointData& checkpoint, bool restore_optimizer) {
  restore_tensors(checkpoint.model, model_tensors(), "model");
  if (restore_optimizer && has_optimizers()) {
    sparse_optimizer_->load_state_dict(strip_prefix(checkpoint.optimizer, kSparsePrefix));
    // Split "dense." keys between the EMA, the part optimizers and the dense optimizer.
    std::map<std::string, torch::Tensor> main_state;
    for (const auto& [key, value] : strip_prefix(checkpoint.optimizer, kDensePrefix)) {
      bool taken = starts_with(key, kEmaPrefix);
      for (const Part& part : parts_) taken = taken || starts_with(key, part_prefix(part.config_index));
      if (!taken) main_state.emplace(key, value);
    }
    dense_optimizer_->load_state_dict(main_state);
    for (Part& part : parts_) {
      part.optimizer->load_state_dict(strip_prefix(
          checkpoint.optimizer, kDensePrefix + part_prefix(part.config_index)));
    }
  }
  // The EMA is training state of its own (TorchEasyRec's dense_ema/ directory), restored even
  // with --ignore_restore_optimizer when the checkpoint has it.
  if (ema_) {
    auto state = strip_prefix(checkpoint.optimizer, std::string(kDensePrefix) + kEmaPrefix);
    if (state.empty()) {
      log::warning("checkpoint step {} has no dense EMA state; the EMA restarts from the restored "
                   "parameters", checkpoint.step);
    } else {
      ema_->load_state_dict(state);
    }
  }
}

void TrainingSession::backward_and_step(const torch::Tensor& total_loss, int64_t step) {
  TORCH_CHECK(has_optimizers(), "backward_and_step() on a session built without optimizers");
  if (accumulation_.zero_grad_before(step)) {
    dense_optimizer_->zero_grad();
    for (Part& part : parts_) part.optimizer->zero_grad();
    // The fused sparse optimizer updates rows in every backward (also inside an accumulation
    // window, as FBGEMM does); its learning rate changes only at the start of a window.
    sparse_optimizer_->set_lr(sparse_lr_->lr());
  }
  dense_optimizer_->set_lr(dense_lr_->lr());
  for (Part& part : parts_) part.optimizer->set_lr(part.lr->lr());
  if (accumulation_.enabled()) {
    (total_loss / static_cast<double>(accumulation_.loss_divisor())).backward();
  } else {
    total_loss.backward();
  }
  if (accumulation_.step_after(step)) {
    optim::clip_gradients(clipping_, dense_params_);
    dense_optimizer_->step();
    for (Part& part : parts_) part.optimizer->step();
    if (ema_) ema_->update();  // TorchEasyRec's EMAOptimizer: after each dense step
  }
}

std::vector<optim::LrScheduler*> TrainingSession::schedulers() {
  std::vector<optim::LrScheduler*> out = {sparse_lr_.get(), dense_lr_.get()};
  for (Part& part : parts_) out.push_back(part.lr.get());
  return out;
}

void TrainingSession::advance_step_schedules() {
  for (auto* scheduler : schedulers()) {
    if (!scheduler->by_epoch()) scheduler->step();
  }
}

void TrainingSession::advance_epoch_schedules() {
  for (auto* scheduler : schedulers()) {
    if (scheduler->by_epoch()) scheduler->step();
  }
}

void TrainingSession::set_schedule_position(int64_t trained_steps, int64_t epochs_completed) {
  // The scheduler's count starts at 1 (torch's initial step) and grows by one per step / epoch.
  for (auto* scheduler : schedulers()) {
    scheduler->set_step_count(1 + (scheduler->by_epoch() ? epochs_completed : trained_steps));
  }
}

}  // namespace tzrec::train
