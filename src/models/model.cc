// Model: construction, prediction, labels and parameters. Losses: model_losses.cc; eval metrics:
// model_metrics.cc; train metrics: model_train_metrics.cc.
#include "models/model.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_set>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/recall_at_k.h"
#include "models/config_convert.h"
#include "models/sequence_encoders.h"
#include "nn/autocast.h"

namespace tzrec::models {

Model::Model(const protos::ModelConfig& model_config, std::vector<std::string> labels,
             std::vector<std::string> sample_weights)
    : model_config_(model_config), tasks_(model_tasks(model_config, labels, sample_weights)) {
  num_class_ = tasks_.empty() ? 1 : tasks_.front().num_class;  // SID models have no tasks
  if (is_multi_task(model_config_)) {
    // As tzrec's MultiTaskRank: task towers bring their own losses and metrics.
    for (const char* field : {"losses", "metrics", "train_metrics"}) {
      const auto* fd = model_config_.GetDescriptor()->FindFieldByName(field);
      if (model_config_.GetReflection()->FieldSize(model_config_, fd) > 0) {
        log::warning("model_config.{} is ignored by multi-task models (as in TorchEasyRec); set them in each "
                     "task_towers entry",
                     field);
      }
    }
    if (model_config_.use_pareto_loss_weight()) check_pareto_bounds();
  } else if (model_config_.use_pareto_loss_weight()) {
    throw ConfigError(
        "model_config.use_pareto_loss_weight: weights the losses of several tasks; this model has one task (use a "
        "multi-task model such as mmoe with task_towers, or remove the field)");
  }
  init_losses();
  init_metrics();
  init_train_metrics();
}

void Model::check_pareto_bounds() const {
  double sum = 0.0;
  for (const ModelTask& task : tasks_) {
    const double c = task.pareto_min_loss_weight;
    if (!std::isfinite(c) || c < 0) {
      throw ConfigError(fmt::format("{}.pareto_min_loss_weight: must be a finite number >= 0, got {}", task.path, c));
    }
    sum += c * task.losses.size();  // every loss of the tower has the tower's lower bound
  }
  if (!(sum < 1.0)) {
    throw ConfigError(fmt::format(
        "model_config.use_pareto_loss_weight: the pareto_min_loss_weight of all task losses sum to {} (a tower's "
        "bound counts once per loss); they must sum to less than 1",
        sum));
  }
}

void Model::set_features(const std::vector<feature::FeatureInfo>& features) {
  features_ = features;
  check_feature_keys();
}

embedding::EmbeddingGroup Model::make_embedding_group(const std::vector<std::string>& groups,
                                                      int64_t wide_embedding_dim,
                                                      const std::string& wide_init_fn) const {
  std::vector<embedding::FeatureGroupConfig> configs = to_group_configs(model_config_);
  if (!reads_jagged_sequences_) {
    for (const embedding::FeatureGroupConfig& g : configs) {
      if (g.type != embedding::GroupType::kJaggedSequence) continue;
      throw ConfigError(fmt::format("{}.group_type: group '{}' is JAGGED_SEQUENCE, which only TorchEasyRec's "
                                    "generative models (dlrm_hstu, ultra_hstu, hstu_match) read; this model attends "
                                    "over padded histories: use group_type: SEQUENCE",
                                    g.path, g.group_name));
    }
  }
  if (!groups.empty()) {
    std::vector<embedding::FeatureGroupConfig> picked;
    for (const std::string& name : groups) {
      auto it = std::find_if(configs.begin(), configs.end(),
                             [&](const embedding::FeatureGroupConfig& g) { return g.group_name == name; });
      TORCH_CHECK(it != configs.end(), "make_embedding_group: no feature group ", name);
      picked.push_back(*it);
    }
    configs = std::move(picked);
  }
  return embedding::EmbeddingGroup(to_feature_specs(features_), std::move(configs), wide_embedding_dim, wide_init_fn,
                                   sequence_encoder_factory(model_config_));
}

TensorMap Model::feature_p_losses() const { return variational_dropouts_.penalties(); }

void Model::init_input(const std::vector<feature::FeatureInfo>& features, int64_t wide_embedding_dim,
                       const std::string& wide_init_fn) {
  set_features(features);
  embedding_group_ = register_module("embedding_group", make_embedding_group({}, wide_embedding_dim, wide_init_fn));
  embeddings_.add("embedding_group", "", embedding_group_);
  variational_dropouts_.init(*this, model_config_, embedding_group_->group_names(),
                             [this](const std::string& g) { return embedding_group_->group_feature_dims(g); });
}

std::map<std::string, torch::Tensor> Model::build_input(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = embedding_group_->forward(batch);
  variational_dropouts_.apply(grouped);
  return grouped;
}

std::string Model::first_group(const std::string& model_name) const {
  if (model_config_.feature_groups_size() == 0) {
    throw ConfigError(
        fmt::format("model_config.feature_groups: {} needs a feature group (it uses the first one)", model_name));
  }
  return model_config_.feature_groups(0).group_name();
}

std::vector<nn::TaskTower> Model::register_task_towers(
    const google::protobuf::RepeatedPtrField<protos::TaskTower>& towers, const std::vector<int64_t>& in_dims) {
  auto list = register_module("_task_tower", torch::nn::ModuleList());
  std::vector<nn::TaskTower> out;
  for (int i = 0; i < towers.size(); ++i) {
    std::optional<nn::MLPOptions> mlp;
    if (towers[i].has_mlp()) mlp = to_mlp_options(towers[i].mlp());
    out.emplace_back(in_dims.at(static_cast<size_t>(i)), static_cast<int64_t>(towers[i].num_class()), mlp,
                     tasks_.at(static_cast<size_t>(i)).path);
    list->push_back(out.back());
  }
  return out;
}

int64_t Model::checked_wide_embedding_dim(uint32_t dim, const std::string& path) {
  if (dim == 0) throw ConfigError(path + ".wide_embedding_dim: must be > 0 (the default is 4)");
  return dim;
}

void Model::check_feature_keys() const {
  for (const FeatureKey& k : feature_keys_) {
    auto it = std::find_if(features_.begin(), features_.end(),
                           [&](const feature::FeatureInfo& f) { return f.name == k.key; });
    if (it == features_.end()) {
      throw ConfigError(fmt::format("{}: unknown feature '{}'; use the name of an id feature in feature_configs",
                                    k.path, k.key));
    }
    if (!it->is_sparse) {
      throw ConfigError(fmt::format("{}: '{}' is a dense feature; the key is the first id of a sparse feature",
                                    k.path, k.key));
    }
  }
}

std::string Model::group_path(const std::string& name) const {
  for (int i = 0; i < model_config_.feature_groups_size(); ++i) {
    if (model_config_.feature_groups(i).group_name() == name) return fmt::format("model_config.feature_groups[{}]", i);
  }
  return "model_config.feature_groups";
}

void Model::require_group(const std::string& model_name, const std::string& group,
                          protos::FeatureGroupType type) const {
  const std::string type_name = protos::FeatureGroupType_Name(type);
  const auto& groups = model_config_.feature_groups();
  if (std::none_of(groups.begin(), groups.end(), [&](const protos::FeatureGroupConfig& g) { return g.group_name() == group; })) {
    throw ConfigError(fmt::format("model_config.feature_groups: {} needs a feature group named '{}' (group_type: {})",
                                  model_name, group, type_name));
  }
  for (const protos::FeatureGroupConfig& g : model_config_.feature_groups()) {
    if (g.group_name() == group && g.group_type() != type) {
      throw ConfigError(fmt::format("{}.group_type: {} group '{}' must be {}", group_path(group), model_name, group,
                                    type_name));
    }
  }
}

int64_t Model::common_embedding_dim(const std::string& group, const std::string& reader) const {
  const std::string path = group_path(group);
  std::string first;
  int64_t dim = 0;
  for (const protos::FeatureGroupConfig& g : model_config_.feature_groups()) {
    if (g.group_name() != group) continue;
    for (int j = 0; j < g.feature_names_size(); ++j) {
      const std::string& name = g.feature_names(j);
      const std::string field = fmt::format("{}.feature_names[{}]", path, j);
      auto it = std::find_if(features_.begin(), features_.end(),
                             [&](const feature::FeatureInfo& f) { return f.name == name; });
      if (it == features_.end()) continue;  // the embedding group reports it
      if (!it->is_sparse) {
        throw ConfigError(
            fmt::format("{}: {} needs sparse features with equal embedding_dim, '{}' is dense", field, reader, name));
      }
      if (first.empty()) {
        first = name;
        dim = it->embedding_dim;
      } else if (it->embedding_dim != dim) {
        throw ConfigError(fmt::format("{}: {} needs equal embedding_dim: '{}' has {}, '{}' has {}", field, reader, name,
                                      it->embedding_dim, first, dim));
      }
    }
  }
  if (first.empty()) throw ConfigError(fmt::format("{}: {} needs at least one sparse feature", path, reader));
  return dim;
}

TensorMap Model::predict(const sparse::Batch& batch) {
  nn::AutocastGuard autocast(mixed_precision_);
  return predict_impl(batch);
}

TensorMap Model::output_to_prediction(const torch::Tensor& output) const {
  TensorMap predictions;
  task_output_to_prediction(0, output, &predictions);
  return predictions;
}

void Model::task_output_to_prediction(size_t task_index, const torch::Tensor& output, TensorMap* predictions) const {
  const ModelTask& task = tasks_.at(task_index);
  TORCH_CHECK(output.dim() == 2 && output.size(1) == task.num_class, "model output", task.suffix, " must be [B, ",
              task.num_class, "], got ", output.sizes());
  // fp32 predictions also when the model ran under bf16 autocast (losses and metrics in fp32).
  torch::Tensor out = output.to(torch::kFloat32);  // [B, C]
  TensorMap& p = *predictions;
  const std::string& sfx = task.suffix;
  if (task.has_softmax_loss) {
    p["logits" + sfx] = out;
    p["probs" + sfx] = torch::softmax(out, 1);
    if (task.num_class == 2) p["probs1" + sfx] = p["probs" + sfx].select(1, 1);  // [B]
    return;
  }
  torch::Tensor squeezed = out.squeeze(1);  // [B]
  if (task.has_binary_loss) {
    p["logits" + sfx] = squeezed;
    p["probs" + sfx] = torch::sigmoid(squeezed);
  }
  if (task.has_l2_loss) p["y" + sfx] = squeezed;
}

const torch::Tensor& Model::batch_label(const sparse::Batch& batch, const std::string& label) const {
  auto it = batch.labels.find(label);
  if (it == batch.labels.end()) {
    throw DataError(
        fmt::format("batch has no label '{}' (data_config.label_fields); check the input columns", label));
  }
  return it->second;
}

torch::Tensor Model::task_label(const ModelTask& task, const sparse::Batch& batch) const {
  torch::Tensor label;
  if (batch.labels.count(task.label_name) == 0 && batch.jagged_label_values.count(task.label_name) > 0) {
    if (!reads_jagged_labels_) {
      throw DataError(fmt::format("label '{}' is a list column (one value per candidate); only TorchEasyRec's "
                                  "generative models (dlrm_hstu, ultra_hstu) read such labels, this model needs one "
                                  "number per row",
                                  task.label_name));
    }
    label = batch.jagged_label_values.at(task.label_name);
  } else {
    label = batch_label(batch, task.label_name);
  }
  if (batch.prediction_repeats.defined() && label.size(0) != batch.prediction_repeats.sum().item<int64_t>()) {
    throw DataError(fmt::format("label '{}' has {} values for {} predictions (one per candidate); a generative "
                                "model's label is a list column with one value per candidate",
                                task.label_name, label.size(0), batch.prediction_repeats.sum().item<int64_t>()));
  }
  if (task.label_bitmask != 0) {
    label = (torch::bitwise_and(label.to(torch::kInt64), task.label_bitmask) > 0).to(torch::kFloat32);
  }
  return label;
}

const sparse::Batch& Model::prediction_rows(const TensorMap& predictions, const sparse::Batch& batch,
                                            std::optional<sparse::Batch>* storage) {
  auto it = predictions.find(kTargetRepeatKey);
  if (it == predictions.end()) return batch;
  storage->emplace(batch);
  (*storage)->prediction_repeats = it->second;
  return **storage;
}

torch::Tensor Model::metric_label(const ModelTask& task, const torch::Tensor& pred, const sparse::Batch& batch) const {
  if (!task.match) return task_label(task, batch);
  return metrics::recall_targets(pred, task.in_batch_negative ? metrics::RecallTarget::kDiagonal
                                                              : metrics::RecallTarget::kFirstColumn);
}

std::vector<embedding::EmbeddingTable> Model::embedding_tables() {
  return embeddings_.tables();
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
