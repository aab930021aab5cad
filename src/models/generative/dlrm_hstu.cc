#include "models/generative/dlrm_hstu.h"

#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "models/config_convert.h"
#include "models/generative/hstu_config.h"
#include "nn/gr/norms.h"

namespace tzrec::models {

namespace {

// What DlrmHSTU and UltraHSTU configure alike (their messages have the same fields apart from the
// number of `hstu` channels).
struct GenerativeRankConfig {
  std::string model;  // "dlrm_hstu" | "ultra_hstu"
  std::string path;   // "model_config.<model>"
  std::vector<const protos::HSTU*> channels;
  const protos::FusionMTLTower* tower = nullptr;
  uint32_t max_seq_len = 0;
  uint32_t item_embedding_hidden_dim = 0;
  bool global_average_loss = true;
  bool ascending = true;
  bool concat_contextual_features = false;
};

template <class M>
GenerativeRankConfig common(const M& m, const std::string& model) {
  GenerativeRankConfig c;
  c.model = model;
  c.path = "model_config." + model;
  c.tower = &m.fusion_mtl_tower();
  c.max_seq_len = m.max_seq_len();
  c.item_embedding_hidden_dim = m.item_embedding_hidden_dim();
  c.global_average_loss = m.enable_global_average_loss();
  c.ascending = m.sequence_timestamp_is_ascending();
  c.concat_contextual_features = m.concat_contextual_features();
  return c;
}

GenerativeRankConfig generative_config(const protos::ModelConfig& mc) {
  if (mc.has_ultra_hstu()) {
    GenerativeRankConfig c = common(mc.ultra_hstu(), "ultra_hstu");
    for (const protos::HSTU& h : mc.ultra_hstu().hstu()) c.channels.push_back(&h);
    if (c.channels.empty()) throw ConfigError(c.path + ".hstu: at least one channel is required");
    if (c.channels.size() > 1) {
      std::set<std::string> names;
      for (size_t i = 0; i < c.channels.size(); ++i) {
        const std::string& name = c.channels[i]->name();
        if (name.empty() || !names.insert(name).second) {
          throw ConfigError(fmt::format("{}.hstu[{}].name: with several channels every channel needs a unique "
                                        "non-empty name (its history groups are named after it), got '{}'",
                                        c.path, i, name));
        }
      }
    }
    return c;
  }
  GenerativeRankConfig c = common(mc.dlrm_hstu(), "dlrm_hstu");
  c.channels.push_back(&mc.dlrm_hstu().hstu());
  return c;
}

}  // namespace

DlrmHSTU::DlrmHSTU(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                   std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const GenerativeRankConfig cfg = generative_config(model_config);
  const std::string& path = cfg.path;
  reads_jagged_sequences_ = true;
  reads_jagged_labels_ = true;
  ascending_ = cfg.ascending;
  global_average_loss_ = cfg.global_average_loss;
  if (cfg.max_seq_len == 0) throw ConfigError(path + ".max_seq_len: required and must be positive");
  std::vector<std::string> channel_groups;
  for (const protos::HSTU* h : cfg.channels) channel_groups.push_back(h->name().empty() ? "uih" : h->name());
  for (const std::string& g : channel_groups) {
    require_group(cfg.model, g, protos::JAGGED_SEQUENCE);
    require_group(cfg.model, g + "_timestamp", protos::JAGGED_SEQUENCE);
  }
  for (const char* g : {"candidate", "candidate_timestamp"}) require_group(cfg.model, g, protos::JAGGED_SEQUENCE);
  init_input(features);
  auto* seq = embedding_group_->sequence_groups().get();

  // Contextual features: a DEEP group "contextual", or the query part of a SEQUENCE one.
  nn::gr::InputPreprocessorDims dims;
  dims.target_embedding_dim = seq->sequence_dim("candidate");
  if (!set_contextual_dims(*embedding_group_, cfg.concat_contextual_features,
                           [this](const std::string& g) { return group_path(g); },
                           " or set " + path + ".concat_contextual_features", &dims)) {
    throw ConfigError(fmt::format("model_config.feature_groups: {} needs a feature group named 'contextual' "
                                  "(group_type: DEEP, or SEQUENCE to share tables with the sequences)",
                                  cfg.model));
  }
  std::vector<nn::gr::HSTUTransducer> transducers;
  int64_t d = 0;
  for (size_t i = 0; i < cfg.channels.size(); ++i) {
    const std::string hstu_path = cfg.channels.size() == 1 && cfg.model == "dlrm_hstu"
                                      ? path + ".hstu"
                                      : fmt::format("{}.hstu[{}]", path, i);
    const nn::gr::HSTUOptions hstu = to_hstu_options(*cfg.channels[i], hstu_path);
    nn::gr::InputPreprocessorDims channel = dims;
    channel.name = cfg.channels[i]->name();
    channel.uih_embedding_dim = seq->sequence_dim(channel_groups[i]);
    transducers.emplace_back(hstu, channel, cfg.max_seq_len, hstu_path);
    d += hstu.stu.embedding_dim;
  }
  if (transducers.size() == 1) {
    auto t = register_module("_hstu_transducer", transducers.front());
    encode_ = [t](const std::map<std::string, torch::Tensor>& g) { return t->forward(g); };
  } else {
    auto t = register_module("_hstu_transducer", nn::gr::HSTUTransducerStack(std::move(transducers)));
    encode_ = [t](const std::map<std::string, torch::Tensor>& g) { return t->forward(g); };
  }
  const int64_t hidden = cfg.item_embedding_hidden_dim;
  if (hidden <= 0) throw ConfigError(path + ".item_embedding_hidden_dim: must be positive");
  torch::nn::Linear l0(dims.target_embedding_dim, hidden), l1(hidden, d);
  nn::gr::init_linear_xavier_zero_bias(l0);
  nn::gr::init_linear_xavier_zero_bias(l1);
  item_mlp_ = register_module("_item_embedding_mlp",
                              torch::nn::Sequential(l0, nn::gr::SwishLayerNorm(hidden), l1, nn::gr::LayerNorm(d)));
  std::optional<nn::MLPOptions> mlp;
  if (cfg.tower->has_mlp()) mlp = to_mlp_options(cfg.tower->mlp());
  std::vector<nn::FusionTask> tasks;
  for (const ModelTask& t : tasks_) tasks.push_back({t.tower, t.num_class});
  tower_ = register_module("_multitask_module", nn::FusionMTLTower(d, mlp, std::move(tasks), path + ".fusion_mtl_tower"));
}

TensorMap DlrmHSTU::predict_impl(const sparse::Batch& batch) {
  auto grouped = build_input(batch);
  // The candidates per row, in the batch's own row order.
  torch::Tensor num_targets = grouped.at("candidate.sequence_length").to(torch::kInt64);
  if (!ascending_) grouped = flip_grouped_rows(grouped);
  auto items = item_mlp_->forward(grouped.at("candidate.sequence"));
  auto users = encode_(grouped);
  auto outputs = tower_->forward(users, items);
  if (!ascending_) outputs = flip_grouped_rows(outputs);
  TensorMap predictions;
  for (size_t t = 0; t < tasks_.size(); ++t) task_output_to_prediction(t, outputs.at(tasks_[t].tower), &predictions);
  predictions[kTargetRepeatKey] = num_targets;
  return predictions;
}

double DlrmHSTU::task_loss_scale(const ModelTask&, const torch::Tensor& label) const {
  if (!global_average_loss_ || !is_training() || process_group_ == nullptr || process_group_->world_size() <= 1) {
    return 1.0;
  }
  auto count = torch::tensor({static_cast<double>(label.size(0))}, torch::kFloat64);
  process_group_->all_reduce(count, dist::ReduceOp::kSum, "dlrm_hstu global average loss");
  const double mean = count.item<double>() / process_group_->world_size();
  return mean > 0 ? static_cast<double>(label.size(0)) / mean : 1.0;
}

}  // namespace tzrec::models
