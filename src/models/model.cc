// Model: construction, prediction, labels and parameters. Losses: model_losses.cc; eval metrics:
// model_metrics.cc; train metrics: model_train_metrics.cc.
#include "models/model.h"

#include <memory>
#include <unordered_set>

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"
#include "models/model_inputs.h"
#include "nn/autocast.h"

namespace tzrec::models {

Model::Model(const protos::ModelConfig& model_config, std::vector<std::string> labels,
             std::vector<std::string> sample_weights)
    : model_config_(model_config), num_class_(model_config.num_class()) {
  if (labels.empty() || labels[0].empty()) {
    throw ConfigError("data_config.label_fields: a rank model needs at least one label field");
  }
  label_name_ = labels[0];
  if (!sample_weights.empty()) sample_weight_name_ = sample_weights[0];
  if (model_config_.use_pareto_loss_weight()) throw NotSupportedError("model_config.use_pareto_loss_weight");
  if (num_class_ < 1) throw ConfigError(fmt::format("model_config.num_class: must be >= 1, got {}", num_class_));

  init_losses();
  std::unordered_set<std::string> names;
  for (int i = 0; i < model_config_.metrics_size(); ++i) {
    const protos::MetricConfig& cfg = model_config_.metrics(i);
    const std::string path = fmt::format("model_config.metrics[{}]", i);
    const std::string type = detail::oneof_field(cfg, "metric");
    if (type.empty()) throw ConfigError(fmt::format("{}: no metric set; use e.g. auc {{}}", path));
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: metric {} is configured twice", path, type));
    }
    add_metric(cfg, path, type);
  }
  for (const LossEntry& l : losses_) loss_metrics_.emplace_back(l.name, metrics::MeanMetric());
  init_train_metrics();
}

void Model::init_input(const std::vector<feature::FeatureInfo>& features, int64_t wide_embedding_dim,
                       const std::string& wide_init_fn) {
  embedding_group_ = register_module(
      "embedding_group", embedding::EmbeddingGroup(to_feature_specs(features), to_group_configs(model_config_),
                                                   wide_embedding_dim, wide_init_fn));
  if (!model_config_.has_variational_dropout()) return;
  const protos::VariationalDropout& vd = model_config_.variational_dropout();
  if (vd.embedding_wise_variational_dropout()) {
    log::warning(
        "model_config.variational_dropout.embedding_wise_variational_dropout is ignored: as in TorchEasyRec, "
        "each feature of a group gets one dropout rate");
  }
  group_variational_dropouts_ = register_module("group_variational_dropouts", torch::nn::ModuleDict());
  for (const std::string& group : embedding_group_->group_names()) {
    std::vector<int64_t> dims = embedding_group_->group_feature_dims(group);
    if (dims.size() < 2) continue;  // tzrec: a single feature has nothing to be ranked against
    nn::VariationalDropout dropout(std::move(dims), vd.regularization_lambda());
    using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
    group_variational_dropouts_->update(std::vector<Entry>{{group, dropout.ptr()}});
    variational_dropouts_.emplace_back(group, dropout);
  }
}

std::map<std::string, torch::Tensor> Model::build_input(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = embedding_group_->forward(batch);
  feature_p_losses_.clear();
  for (auto& [group, dropout] : variational_dropouts_) {
    auto [noisy, penalty] = dropout->forward(grouped.at(group));
    grouped[group] = noisy;
    feature_p_losses_[group + "_feature_p_loss"] = penalty;
  }
  return grouped;
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
  torch::Tensor out = output.to(torch::kFloat32);  // [B, C]
  TensorMap predictions;
  if (has_softmax_loss_) {
    predictions["logits"] = out;
    predictions["probs"] = torch::softmax(out, 1);
    if (num_class_ == 2) predictions["probs1"] = predictions["probs"].select(1, 1);  // [B]
    return predictions;
  }
  torch::Tensor squeezed = out.squeeze(1);  // [B]
  if (has_binary_loss_) {
    predictions["logits"] = squeezed;
    predictions["probs"] = torch::sigmoid(squeezed);
  }
  if (has_l2_loss_) predictions["y"] = squeezed;
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
