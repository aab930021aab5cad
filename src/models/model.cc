#include "models/model.h"

#include <unordered_set>

#include "base/error.h"
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
    if (type != "binary_cross_entropy") throw NotSupportedError(fmt::format("{}.{}", path, type));
    if (num_class_ != 1) {
      throw ConfigError(fmt::format("model_config.num_class: must be 1 with loss {}, got {}", type, num_class_));
    }
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: loss {} is configured twice", path, type));
    }
    loss::BinaryCrossEntropyOptions opts;
    opts.label_smoothing = cfg.binary_cross_entropy().label_smoothing();
    try {
      losses_.push_back({type, loss::BinaryCrossEntropy(opts)});
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.{}", path, e.what()));
    }
  }
  if (losses_.empty()) {
    throw ConfigError("model_config.losses: at least one loss is required, e.g. losses { binary_cross_entropy {} }");
  }

  for (int i = 0; i < model_config_.metrics_size(); ++i) {
    const protos::MetricConfig& cfg = model_config_.metrics(i);
    const std::string path = fmt::format("model_config.metrics[{}]", i);
    const std::string type = oneof_field(cfg, "metric");
    if (type.empty()) throw ConfigError(fmt::format("{}: no metric set; use e.g. auc {{}}", path));
    if (type != "auc") throw NotSupportedError(fmt::format("{}.{}", path, type));
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: metric {} is configured twice", path, type));
    }
    const int64_t thresholds = cfg.auc().thresholds();
    if (thresholds < 2) {
      throw ConfigError(fmt::format("{}.auc.thresholds: must be >= 2, got {}", path, thresholds));
    }
    aucs_.push_back({type, cfg.auc().has_thresholds(), metrics::Auc(thresholds)});
  }
  for (const LossEntry& l : losses_) loss_metrics_.emplace_back(l.name, metrics::MeanMetric());
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

TensorMap Model::output_to_prediction(const torch::Tensor& output) const {
  TORCH_CHECK(output.dim() == 2 && output.size(1) == num_class_, "model output must be [B, ", num_class_,
              "], got ", output.sizes());
  // Every configured loss is binary_cross_entropy (checked in the constructor).
  torch::Tensor logits = output.squeeze(1);  // [B]
  return {{"logits", logits}, {"probs", torch::sigmoid(logits)}};
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
    auto it = predictions.find("logits");
    TORCH_CHECK(it != predictions.end(), "loss ", l.name, ": predictions have no 'logits'");
    losses[l.name] = l.bce(it->second, label, weight);
  }
  return losses;
}

void Model::update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses) {
  const torch::Tensor& label = batch_label(batch);
  for (AucEntry& m : aucs_) {
    auto it = predictions.find("probs");
    TORCH_CHECK(it != predictions.end(), "metric ", m.name, ": predictions have no 'probs'");
    m.auc.update(it->second, label);
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
  for (const AucEntry& m : aucs_) {
    out[m.name] = m.auc.compute();
    if (m.report_binned) out[m.name + "_binned"] = m.auc.compute_binned();
  }
  for (const auto& [name, metric] : loss_metrics_) out[name] = metric.compute();
  return out;
}

void Model::reset_metrics() {
  for (AucEntry& m : aucs_) m.auc.reset();
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
