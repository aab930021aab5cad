#include "models/model.h"

#include <memory>
#include <unordered_set>

#include "base/error.h"
#include "nn/autocast.h"
#include "base/logging.h"
#include "loss/l2_loss.h"
#include "metrics/binary_accuracy.h"
#include "metrics/grouped_auc.h"
#include "metrics/normalized_entropy.h"
#include "metrics/regression_metrics.h"
#include "models/config_convert.h"

namespace tzrec::models {
namespace {

// Name of the field set in `oneof_name` of `msg` (e.g. "binary_cross_entropy"), "" when unset.
std::string oneof_field(const google::protobuf::Message& msg, const std::string& oneof_name) {
  const auto* oneof = msg.GetDescriptor()->FindOneofByName(oneof_name);
  if (oneof == nullptr) return "";
  const auto* field = msg.GetReflection()->GetOneofFieldDescriptor(msg, oneof);
  return field == nullptr ? "" : field->name();
}

}  // namespace

Model::Model(const protos::ModelConfig& model_config, std::vector<std::string> labels,
             std::vector<std::string> sample_weights)
    : model_config_(model_config), num_class_(model_config.num_class()) {
  if (labels.empty() || labels[0].empty()) {
    throw ConfigError("data_config.label_fields: a rank model needs at least one label field");
  }
  label_name_ = labels[0];
  if (!sample_weights.empty()) sample_weight_name_ = sample_weights[0];
  if (model_config_.has_variational_dropout()) throw NotSupportedError("model_config.variational_dropout");
  if (model_config_.use_pareto_loss_weight()) throw NotSupportedError("model_config.use_pareto_loss_weight");

  std::unordered_set<std::string> names;
  for (int i = 0; i < model_config_.losses_size(); ++i) {
    const protos::LossConfig& cfg = model_config_.losses(i);
    const std::string path = fmt::format("model_config.losses[{}]", i);
    const std::string type = oneof_field(cfg, "loss");
    if (type.empty()) {
      const std::string sid = oneof_field(cfg, "sid_loss");
      if (!sid.empty()) throw NotSupportedError(fmt::format("{}.{}", path, sid));
      throw ConfigError(fmt::format("{}: no loss set; use e.g. binary_cross_entropy {{}}", path));
    }
    LossEntry entry{type, LossType::kBinaryCrossEntropy, loss::BinaryCrossEntropy(), loss::BinaryFocalLoss()};
    if (type == "binary_cross_entropy") {
      has_binary_loss_ = true;
    } else if (type == "binary_focal_loss") {
      entry.type = LossType::kBinaryFocal;
      has_binary_loss_ = true;
    } else if (type == "l2_loss") {
      entry.type = LossType::kL2;
      has_l2_loss_ = true;
    } else {
      throw NotSupportedError(fmt::format("{}.{}", path, type));
    }
    if (num_class_ != 1) {
      throw ConfigError(fmt::format("model_config.num_class: must be 1 with loss {}, got {}", type, num_class_));
    }
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: loss {} is configured twice", path, type));
    }
    try {
      if (entry.type == LossType::kBinaryCrossEntropy) {
        loss::BinaryCrossEntropyOptions opts;
        opts.label_smoothing = cfg.binary_cross_entropy().label_smoothing();
        entry.bce = loss::BinaryCrossEntropy(opts);
      } else if (entry.type == LossType::kBinaryFocal) {
        entry.focal = loss::BinaryFocalLoss({cfg.binary_focal_loss().gamma(), cfg.binary_focal_loss().alpha()});
      }
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.{}", path, e.what()));
    }
    losses_.push_back(std::move(entry));
  }
  if (losses_.empty()) {
    throw ConfigError("model_config.losses: at least one loss is required, e.g. losses { binary_cross_entropy {} }");
  }

  for (int i = 0; i < model_config_.metrics_size(); ++i) {
    const protos::MetricConfig& cfg = model_config_.metrics(i);
    const std::string path = fmt::format("model_config.metrics[{}]", i);
    const std::string type = oneof_field(cfg, "metric");
    if (type.empty()) throw ConfigError(fmt::format("{}: no metric set; use e.g. auc {{}}", path));
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: metric {} is configured twice", path, type));
    }
    add_metric(cfg, path, type);
  }
  for (const LossEntry& l : losses_) loss_metrics_.emplace_back(l.name, metrics::MeanMetric());
}

void Model::add_metric(const protos::MetricConfig& cfg, const std::string& path, const std::string& type) {
  MetricEntry m;
  m.name = type;
  m.input = (type == "mean_absolute_error" || type == "mean_squared_error") ? "y" : "probs";
  if (type == "auc") {
    const int64_t thresholds = cfg.auc().thresholds();
    if (thresholds < 2) {
      throw ConfigError(fmt::format("{}.auc.thresholds: must be >= 2, got {}", path, thresholds));
    }
    auto auc = std::make_shared<metrics::Auc>(thresholds);
    const bool binned = cfg.auc().has_thresholds();
    m.update = [auc](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch&) { auc->update(p, y); };
    m.compute = [auc, binned, type](std::map<std::string, double>* out) {
      (*out)[type] = auc->compute();
      if (binned) (*out)[type + "_binned"] = auc->compute_binned();
    };
    m.reset = [auc] { auc->reset(); };
    m.sync = [auc](dist::ProcessGroup& pg) { auc->sync(pg); };
  } else if (type == "mean_absolute_error" || type == "mean_squared_error") {
    auto err = std::make_shared<metrics::RegressionError>(type == "mean_absolute_error"
                                                              ? metrics::RegressionError::Kind::kAbsolute
                                                              : metrics::RegressionError::Kind::kSquared);
    m.update = [err](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch&) { err->update(p, y); };
    m.compute = [err, type](std::map<std::string, double>* out) { (*out)[type] = err->compute(); };
    m.reset = [err] { err->reset(); };
    m.sync = [err](dist::ProcessGroup& pg) { err->sync(pg); };
  } else if (type == "accuracy") {
    std::shared_ptr<metrics::BinaryAccuracy> acc;
    try {
      acc = std::make_shared<metrics::BinaryAccuracy>(cfg.accuracy().threshold());
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.{}", path, e.what()));
    }
    m.update = [acc](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch&) { acc->update(p, y); };
    m.compute = [acc, type](std::map<std::string, double>* out) { (*out)[type] = acc->compute(); };
    m.reset = [acc] { acc->reset(); };
    m.sync = [acc](dist::ProcessGroup& pg) { acc->sync(pg); };
  } else if (type == "normalized_entropy") {
    std::shared_ptr<metrics::NormalizedEntropy> ne;
    try {
      ne = std::make_shared<metrics::NormalizedEntropy>(cfg.normalized_entropy().eta());
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.{}", path, e.what()));
    }
    m.update = [ne](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch&) { ne->update(p, y); };
    m.compute = [ne, type](std::map<std::string, double>* out) { (*out)[type] = ne->compute(); };
    m.reset = [ne] { ne->reset(); };
    m.sync = [ne](dist::ProcessGroup& pg) { ne->sync(pg); };
  } else if (type == "grouped_auc") {
    const std::string key = cfg.grouped_auc().grouping_key();
    if (key.empty()) {
      throw ConfigError(fmt::format("{}.grouped_auc.grouping_key: must name a sparse feature, e.g. a user id", path));
    }
    auto gauc = std::make_shared<metrics::GroupedAuc>();
    auto warned_empty = std::make_shared<bool>(false);
    m.update = [gauc, key, warned_empty](const torch::Tensor& p, const torch::Tensor& y, const sparse::Batch& batch) {
      if (!batch.sparse_features.contains(key)) {
        throw DataError(fmt::format(
            "grouped_auc: grouping_key '{}' is not a sparse feature of the batch; use an id feature name", key));
      }
      // Group = first id of the feature per row, as tzrec's to_padded_dense(1)[:, 0]: a row with no
      // id is group 0 (logged once). [B] int64.
      sparse::JaggedTensor jt = batch.sparse_features[key];
      torch::Tensor lengths = jt.lengths.to(torch::kCPU);
      torch::Tensor values = jt.values.to(torch::kCPU, torch::kInt64);
      torch::Tensor starts = jt.offsets().to(torch::kCPU).slice(0, 0, lengths.size(0));  // [B]
      torch::Tensor has_id = lengths > 0;                                                  // [B]
      torch::Tensor first = values.numel() == 0
                                ? torch::zeros({lengths.size(0)}, torch::kInt64)
                                : values.index_select(0, starts.clamp_max(values.numel() - 1));
      torch::Tensor group = torch::where(has_id, first, torch::zeros_like(first));
      if (!*warned_empty && !has_id.all().item<bool>()) {
        *warned_empty = true;
        log::warning("grouped_auc: some rows have no '{}' id; like TorchEasyRec they form group 0", key);
      }
      gauc->update(p, y, group);
    };
    m.compute = [gauc, type](std::map<std::string, double>* out) { (*out)[type] = gauc->compute(); };
    m.reset = [gauc] { gauc->reset(); };
    m.sync = [gauc](dist::ProcessGroup& pg) { gauc->sync(pg); };
  } else {
    throw NotSupportedError(fmt::format("{}.{}", path, type));
  }
  if (m.input == "probs" && !has_binary_loss_) {
    throw ConfigError(fmt::format("{}.{}: needs prediction 'probs'; add losses {{ binary_cross_entropy {{}} }} "
                                  "or binary_focal_loss",
                                  path, type));
  }
  if (m.input == "y" && !has_l2_loss_) {
    throw ConfigError(fmt::format("{}.{}: needs the regression prediction 'y'; add losses {{ l2_loss {{}} }}", path,
                                  type));
  }
  metrics_.push_back(std::move(m));
}

void Model::init_input(const std::vector<feature::FeatureInfo>& features, int64_t wide_embedding_dim,
                       const std::string& wide_init_fn) {
  embedding_group_ = register_module(
      "embedding_group", embedding::EmbeddingGroup(to_feature_specs(features), to_group_configs(model_config_),
                                                   wide_embedding_dim, wide_init_fn));
}

void Model::require_group(const std::string& model_name, const std::string& group) const {
  if (!embedding_group_->has_group(group)) {
    throw ConfigError(fmt::format("model_config.feature_groups: {} needs a feature group named '{}'",
                                  model_name, group));
  }
}

TensorMap Model::predict(const sparse::Batch& batch) {
  nn::AutocastGuard autocast(mixed_precision_);
  return predict_impl(batch);
}

TensorMap Model::output_to_prediction(const torch::Tensor& output) const {
  TORCH_CHECK(output.dim() == 2 && output.size(1) == num_class_, "model output must be [B, ", num_class_,
              "], got ", output.sizes());
  // fp32 predictions also when the model ran under bf16 autocast (losses and metrics in fp32).
  torch::Tensor out = output.squeeze(1).to(torch::kFloat32);  // [B]
  TensorMap predictions;
  if (has_binary_loss_) {
    predictions["logits"] = out;
    predictions["probs"] = torch::sigmoid(out);
  }
  if (has_l2_loss_) predictions["y"] = out;
  return predictions;
}

const torch::Tensor& Model::batch_label(const sparse::Batch& batch) const {
  auto it = batch.labels.find(label_name_);
  if (it == batch.labels.end()) {
    throw DataError(fmt::format("batch has no label '{}' (data_config.label_fields); check the input columns",
                                label_name_));
  }
  return it->second;
}

TensorMap Model::loss(const TensorMap& predictions, const sparse::Batch& batch) {
  const torch::Tensor& label = batch_label(batch);
  torch::Tensor weight;
  if (!sample_weight_name_.empty()) {
    auto it = batch.sample_weights.find(sample_weight_name_);
    if (it == batch.sample_weights.end()) {
      throw DataError(fmt::format(
          "batch has no sample weight '{}' (data_config.sample_weight_fields); check the input columns",
          sample_weight_name_));
    }
    weight = it->second;
  }
  TensorMap losses;
  for (const LossEntry& l : losses_) {
    const char* key = l.type == LossType::kL2 ? "y" : "logits";
    auto it = predictions.find(key);
    TORCH_CHECK(it != predictions.end(), "loss ", l.name, ": predictions have no '", key, "'");
    switch (l.type) {
      case LossType::kBinaryCrossEntropy: losses[l.name] = l.bce(it->second, label, weight); break;
      case LossType::kBinaryFocal: losses[l.name] = l.focal(it->second, label, weight); break;
      case LossType::kL2: losses[l.name] = loss::l2_loss(it->second, label, weight); break;
    }
  }
  return losses;
}

void Model::update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses) {
  const torch::Tensor& label = batch_label(batch);
  for (MetricEntry& m : metrics_) {
    auto it = predictions.find(m.input);
    TORCH_CHECK(it != predictions.end(), "metric ", m.name, ": predictions have no '", m.input, "'");
    m.update(it->second, label, batch);
  }
  if (losses.empty()) return;
  const double batch_size = static_cast<double>(label.size(0));
  for (auto& [name, metric] : loss_metrics_) {
    auto it = losses.find(name);
    TORCH_CHECK(it != losses.end(), "update_metrics: losses have no '", name, "'");
    metric.update(it->second.detach().item<double>(), batch_size);
  }
}

std::map<std::string, double> Model::compute_metrics() {
  std::map<std::string, double> out;
  for (const MetricEntry& m : metrics_) m.compute(&out);
  for (const auto& [name, metric] : loss_metrics_) out[name] = metric.compute();
  return out;
}

void Model::sync_metrics(dist::ProcessGroup& pg) {
  // Same order on every rank: the metrics and losses come from the same config.
  for (MetricEntry& m : metrics_) m.sync(pg);
  for (auto& entry : loss_metrics_) entry.second.sync(pg);
}

void Model::reset_metrics() {
  for (MetricEntry& m : metrics_) m.reset();
  for (auto& entry : loss_metrics_) entry.second.reset();
}

std::vector<embedding::EmbeddingTable> Model::embedding_tables() {
  if (!embedding_group_) return {};
  return embedding_group_->tables();
}

std::vector<std::pair<std::string, torch::Tensor>> Model::dense_parameters() {
  std::unordered_set<const void*> sparse;
  for (const auto& t : embedding_tables()) sparse.insert(t.weight.unsafeGetTensorImpl());
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : named_parameters(/*recurse=*/true)) {
    if (sparse.count(item.value().unsafeGetTensorImpl()) == 0) out.emplace_back(item.key(), item.value());
  }
  return out;
}

}  // namespace tzrec::models
