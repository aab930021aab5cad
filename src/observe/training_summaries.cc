#include "observe/training_summaries.h"

#include <cmath>
#include <stdexcept>

#include "base/logging.h"
#include "observe/tensorboard_writer.h"

namespace tzrec::observe {

TrainingSummaries::TrainingSummaries(const protos::TrainConfig& train_config, TensorBoardWriter* writer)
    : writer_(writer), summaries_{"loss", "learning_rate"} {
  for (const auto& name : train_config.tensorboard_summaries()) summaries_.insert(name);
}

bool TrainingSummaries::wants(const std::string& name) const {
  return writer_ != nullptr && summaries_.count(name) > 0;
}

bool TrainingSummaries::wants_gradients() const {
  return wants("gradient") || wants("gradient_norm") || wants("global_gradient_norm");
}

void TrainingSummaries::add_histogram(const std::string& tag, const torch::Tensor& values, int64_t step) {
  torch::NoGradGuard no_grad;
  if (values.numel() == 0) return;  // nothing to bucket; torch's add_histogram would raise
  // Doubles stay doubles; every other dtype (float16, bfloat16, float32) is bucketed as float32,
  // as numpy.histogram sees a float32 tensor.
  const auto dtype = values.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const auto flat = values.detach().to(torch::kCPU, dtype).contiguous();
  try {
    if (dtype == torch::kDouble) {
      writer_->add_histogram(tag, flat.data_ptr<double>(), static_cast<size_t>(flat.numel()), step);
    } else {
      writer_->add_histogram(tag, flat.data_ptr<float>(), static_cast<size_t>(flat.numel()), step);
    }
  } catch (const std::invalid_argument& e) {
    // Only non-finite values (a diverged model): skip rather than stop the training.
    if (warned_tags_.insert(tag).second) {
      log::warning("tensorboard histogram '{}' at step {} skipped: {} (warned once per tag)", tag,
                   step, e.what());
    }
  }
}

void TrainingSummaries::write_parameters(const NamedTensors& dense_params, int64_t step) {
  if (!wants_parameters()) return;
  for (const auto& [name, param] : dense_params) add_histogram(kSummaryFqnPrefix + name, param, step);
}

void TrainingSummaries::write_table_parameters(const NamedTensors& tables, int rank, int64_t step) {
  if (!wants_parameters()) return;
  // TorchEasyRec: f"{name}/{rank}" where rank is the shard placement's "rank:<r>" part.
  const std::string suffix = "/rank:" + std::to_string(rank);
  for (const auto& [name, table] : tables) add_histogram(kSummaryFqnPrefix + name + suffix, table, step);
}

void TrainingSummaries::write_gradients(const NamedTensors& dense_params, int64_t step) {
  if (!wants_gradients()) return;
  torch::NoGradGuard no_grad;
  const bool histograms = wants("gradient");
  const bool norms = wants("gradient_norm");
  double sum_squares = 0;  // torch.nn.utils.get_total_norm: the L2 norm of the per-gradient norms
  bool any = false;
  for (const auto& [name, param] : dense_params) {
    const auto& grad = param.grad();
    if (!grad.defined()) continue;
    any = true;
    const std::string fqn = kSummaryFqnPrefix + name;
    if (histograms) add_histogram(fqn + "/gradient", grad, step);
    const double norm = grad.detach().to(torch::kDouble).norm().item<double>();
    sum_squares += norm * norm;
    if (norms) writer_->add_scalar(fqn + "/gradient_norm", norm, step);
  }
  if (any && wants("global_gradient_norm")) {
    writer_->add_scalar("global_gradient_norm", std::sqrt(sum_squares), step);
  }
}

}  // namespace tzrec::observe
