// Model losses (docs/tzrec-compatibility.md §7.1): setup from each task's losses and evaluation per batch.
#include <memory>
#include <unordered_set>

#include "base/error.h"
#include "loss/binary_cross_entropy.h"
#include "loss/binary_focal_loss.h"
#include "loss/jrc_loss.h"
#include "loss/l2_loss.h"
#include "loss/softmax_cross_entropy.h"
#include "models/model.h"
#include "models/model_inputs.h"

namespace tzrec::models {

void Model::init_losses() {
  for (size_t t = 0; t < tasks_.size(); ++t) init_task_losses(t);
}

void Model::init_match_loss(size_t task_index) {
  ModelTask& task = tasks_[task_index];
  // TorchEasyRec's MatchModel: exactly one loss, softmax_cross_entropy over the similarity row
  // (nn.CrossEntropyLoss without label smoothing), the target column 0 or the diagonal.
  if (task.losses.size() != 1) {
    throw ConfigError(fmt::format("{}.losses: a match model has exactly one loss, softmax_cross_entropy {{}}; got {}",
                                  task.path, task.losses.size()));
  }
  const std::string path = task.path + ".losses[0]";
  const std::string type = detail::oneof_field(task.losses[0], "loss");
  if (type != "softmax_cross_entropy") {
    throw ConfigError(fmt::format("{}: a match model's loss is softmax_cross_entropy over its user-item similarities "
                                  "(as in TorchEasyRec), got {}",
                                  path, type.empty() ? "none" : type));
  }
  if (task.losses[0].softmax_cross_entropy().has_label_smoothing()) {
    throw NotSupportedError(fmt::format("{}.softmax_cross_entropy.label_smoothing (match models' loss has none in "
                                        "TorchEasyRec); remove it",
                                        path));
  }
  LossEntry entry;
  entry.task = task_index;
  entry.name = type + task.suffix;
  entry.input = "similarity" + task.suffix;
  auto ce = std::make_shared<loss::SoftmaxCrossEntropy>();
  const bool in_batch = task.in_batch_negative;
  entry.compute = [ce, in_batch](const torch::Tensor& sim, const torch::Tensor&, const torch::Tensor& w,
                                 const sparse::Batch&) {
    const auto opts = torch::TensorOptions().dtype(torch::kInt64).device(sim.device());
    torch::Tensor target = in_batch ? torch::arange(sim.size(0), opts) : torch::zeros({sim.size(0)}, opts);
    return (*ce)(sim, target, w);
  };
  losses_.push_back(std::move(entry));
}

void Model::init_task_losses(size_t task_index) {
  ModelTask& task = tasks_[task_index];
  if (task.match) {
    init_match_loss(task_index);
    return;
  }
  const std::string num_class_path = task.path + ".num_class";
  std::unordered_set<std::string> names;
  for (int i = 0; i < task.losses.size(); ++i) {
    const protos::LossConfig& cfg = task.losses[i];
    const std::string path = fmt::format("{}.losses[{}]", task.path, i);
    const std::string type = detail::oneof_field(cfg, "loss");
    if (type.empty()) {
      const std::string sid = detail::oneof_field(cfg, "sid_loss");
      if (!sid.empty()) {
        throw ConfigError(fmt::format("{}.{}: a loss of the semantic-ID models (sid_rqvae); this model trains on "
                                      "losses such as binary_cross_entropy {{}}",
                                      path, sid));
      }
      throw ConfigError(fmt::format("{}: no loss set; use e.g. binary_cross_entropy {{}}", path));
    }
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: loss {} is configured twice", path, type));
    }
    const bool binary = type == "binary_cross_entropy" || type == "binary_focal_loss" || type == "l2_loss";
    const bool softmax = type == "softmax_cross_entropy" || type == "jrc_loss";
    if (!binary && !softmax) throw NotSupportedError(fmt::format("{}.{}", path, type));
    const int64_t num_class = task.num_class;
    if (binary && num_class != 1) {
      throw ConfigError(fmt::format(
          "{}: must be 1 with loss {}, got {}; use softmax_cross_entropy for num_class > 1", num_class_path, type,
          num_class));
    }
    if (type == "softmax_cross_entropy" && num_class < 2) {
      throw ConfigError(fmt::format(
          "{}.softmax_cross_entropy: needs {} > 1 (the number of classes), got {}; use "
          "binary_cross_entropy for a binary model with num_class 1",
          path, num_class_path, num_class));
    }
    if (type == "jrc_loss" && num_class != 2) {
      throw ConfigError(fmt::format("{}.jrc_loss: needs {} 2, got {}", path, num_class_path, num_class));
    }

    LossEntry entry;
    entry.task = task_index;
    entry.name = type + task.suffix;
    entry.input = (type == "l2_loss" ? "y" : "logits") + task.suffix;
    const std::string label_name = task.label_name;
    try {
      if (type == "binary_cross_entropy") {
        task.has_binary_loss = true;
        loss::BinaryCrossEntropyOptions opts;
        opts.label_smoothing = cfg.binary_cross_entropy().label_smoothing();
        auto bce = std::make_shared<loss::BinaryCrossEntropy>(opts);
        entry.compute = [bce](const torch::Tensor& p, const torch::Tensor& y, const torch::Tensor& w,
                              const sparse::Batch&) { return (*bce)(p, y, w); };
      } else if (type == "binary_focal_loss") {
        task.has_binary_loss = true;
        auto focal = std::make_shared<loss::BinaryFocalLoss>(
            loss::BinaryFocalLossOptions{cfg.binary_focal_loss().gamma(), cfg.binary_focal_loss().alpha()});
        entry.compute = [focal](const torch::Tensor& p, const torch::Tensor& y, const torch::Tensor& w,
                                const sparse::Batch&) { return (*focal)(p, y, w); };
      } else if (type == "l2_loss") {
        task.has_l2_loss = true;
        entry.compute = [](const torch::Tensor& p, const torch::Tensor& y, const torch::Tensor& w,
                           const sparse::Batch&) { return loss::l2_loss(p, y, w); };
      } else if (type == "softmax_cross_entropy") {
        task.has_softmax_loss = true;
        auto ce = std::make_shared<loss::SoftmaxCrossEntropy>(
            loss::SoftmaxCrossEntropyOptions{cfg.softmax_cross_entropy().label_smoothing()});
        entry.compute = [ce, num_class, label_name](const torch::Tensor& p, const torch::Tensor& y,
                                                    const torch::Tensor& w, const sparse::Batch&) {
          return (*ce)(p, loss::class_labels(y, num_class, label_name).to(p.device()), w);
        };
      } else {  // jrc_loss
        task.has_softmax_loss = true;
        const std::string session = cfg.jrc_loss().session_name();
        if (session.empty()) {
          throw ConfigError("jrc_loss.session_name: required; name the sparse feature holding the session id");
        }
        auto jrc = std::make_shared<loss::JrcLoss>(loss::JrcLossOptions{cfg.jrc_loss().alpha()});
        const std::string what = path + ".jrc_loss.session_name";
        feature_keys_.push_back({what, session});
        entry.compute = [jrc, label_name, session, what](const torch::Tensor& p, const torch::Tensor& y,
                                                        const torch::Tensor& w, const sparse::Batch& batch) {
          torch::Tensor sessions = detail::first_id_per_row(batch, session, what).to(p.device());  // [B]
          return (*jrc)(p, loss::class_labels(y, 2, label_name).to(p.device()), sessions, w);
        };
      }
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.{}", path, e.what()));
    }
    losses_.push_back(std::move(entry));
  }
  if (task.losses.empty()) {
    throw ConfigError(task.path + ".losses: at least one loss is required, e.g. losses { binary_cross_entropy {} }");
  }
}

torch::Tensor Model::task_loss_weight(const ModelTask& task, const sparse::Batch& batch) const {
  torch::Tensor weight;
  if (!task.sample_weight_name.empty()) {
    auto it = batch.sample_weights.find(task.sample_weight_name);
    if (it == batch.sample_weights.end()) {
      throw DataError(fmt::format(
          "batch has no sample weight '{}' (data_config.sample_weight_fields); check the input columns",
          task.sample_weight_name));
    }
    weight = it->second;
    if (batch.prediction_repeats.defined()) weight = weight.repeat_interleave(batch.prediction_repeats);
  }
  if (!task.task_space_indicator_label.empty()) {
    torch::Tensor in_space = (batch_label(batch, task.task_space_indicator_label) > 0).to(torch::kFloat32);  // [B]
    torch::Tensor factor = task.in_task_space_weight * in_space + task.out_task_space_weight * (1 - in_space);
    weight = weight.defined() ? weight * factor : factor;
  }
  return weight;
}

TensorMap Model::loss(const TensorMap& predicted, const sparse::Batch& input_batch) {
  std::optional<sparse::Batch> storage;
  const sparse::Batch& batch = prediction_rows(predicted, input_batch, &storage);
  const TensorMap predictions = task_predictions(predicted, batch);
  std::vector<torch::Tensor> weights;
  weights.reserve(tasks_.size());
  for (const ModelTask& task : tasks_) weights.push_back(task_loss_weight(task, batch));
  TensorMap losses;
  for (const LossEntry& l : losses_) {
    const ModelTask& task = tasks_[l.task];
    if (task.training_only && !is_training()) continue;
    auto it = predictions.find(l.input);
    TORCH_CHECK(it != predictions.end(), "loss ", l.name, ": predictions have no '", l.input, "'");
    // The loss functions normalise the row weights by their batch mean (tzrec div_no_nan).
    torch::Tensor label = task_label(task, batch);
    torch::Tensor value = l.compute(it->second, label, weights[l.task], batch);
    const double scale = task_loss_scale(task, label);
    if (scale != 1.0) value = value * scale;
    if (task.weighted && task.weight != 1.0) value = value * task.weight;
    losses[l.name] = value;
  }
  for (const auto& [name, penalty] : feature_p_losses()) losses[name] = penalty;
  for (auto& [name, value] : extra_losses(predictions, batch)) losses[name] = std::move(value);
  return losses;
}

}  // namespace tzrec::models
