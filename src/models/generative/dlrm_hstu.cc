#include "models/generative/dlrm_hstu.h"

#include <fmt/format.h>

#include "base/error.h"
#include "models/config_convert.h"
#include "models/generative/hstu_config.h"
#include "nn/gr/norms.h"

namespace tzrec::models {

namespace {

constexpr const char* kPath = "model_config.dlrm_hstu";

std::map<std::string, torch::Tensor> flip_rows(const std::map<std::string, torch::Tensor>& m) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : m) out[k] = v.flip({0});
  return out;
}

}  // namespace

DlrmHSTU::DlrmHSTU(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                   std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DlrmHSTU& cfg = model_config.dlrm_hstu();
  reads_jagged_sequences_ = true;
  reads_jagged_labels_ = true;
  ascending_ = cfg.sequence_timestamp_is_ascending();
  global_average_loss_ = cfg.enable_global_average_loss();
  for (const char* g : {"uih", "candidate", "uih_timestamp", "candidate_timestamp"}) {
    require_group("dlrm_hstu", g, protos::JAGGED_SEQUENCE);
  }
  init_input(features);
  auto* seq = embedding_group_->sequence_groups().get();
  if (cfg.max_seq_len() == 0) throw ConfigError(std::string(kPath) + ".max_seq_len: required and must be positive");

  // Contextual features: a DEEP group "contextual", or the query part of a SEQUENCE one.
  nn::gr::InputPreprocessorDims dims;
  dims.uih_embedding_dim = seq->sequence_dim("uih");
  dims.target_embedding_dim = seq->sequence_dim("candidate");
  dims.name = cfg.hstu().name();
  std::vector<int64_t> ctx_dims;
  if (embedding_group_->has_group("contextual")) {
    dims.contextual_group = "contextual";
    ctx_dims = embedding_group_->group_feature_dims("contextual");
  } else if (seq->has_group("contextual")) {
    dims.contextual_group = "contextual.query";
    const int64_t d = seq->query_dim("contextual");
    if (d > 0) ctx_dims = {d};
  } else {
    throw ConfigError("model_config.feature_groups: dlrm_hstu needs a feature group named 'contextual' (group_type: "
                      "DEEP, or SEQUENCE to share tables with the sequences)");
  }
  if (!ctx_dims.empty()) {
    if (cfg.concat_contextual_features()) {
      int64_t sum = 0;
      for (int64_t d : ctx_dims) sum += d;
      dims.contextual_feature_dim = sum;
      dims.max_contextual_seq_len = 1;
    } else {
      for (int64_t d : ctx_dims) {
        if (d != ctx_dims.front()) {
          throw ConfigError(fmt::format("{}: the contextual features have different output dims ({} and {}); give them "
                                        "one embedding_dim or set {}.concat_contextual_features",
                                        group_path("contextual"), ctx_dims.front(), d, kPath));
        }
      }
      dims.contextual_feature_dim = ctx_dims.front();
      dims.max_contextual_seq_len = static_cast<int64_t>(ctx_dims.size());
    }
  }
  const nn::gr::HSTUOptions hstu = to_hstu_options(cfg.hstu(), std::string(kPath) + ".hstu");
  transducer_ = register_module("_hstu_transducer", nn::gr::HSTUTransducer(hstu, dims, cfg.max_seq_len(),
                                                                           std::string(kPath) + ".hstu"));
  const int64_t d = hstu.stu.embedding_dim;
  const int64_t hidden = cfg.item_embedding_hidden_dim();
  if (hidden <= 0) throw ConfigError(std::string(kPath) + ".item_embedding_hidden_dim: must be positive");
  torch::nn::Linear l0(dims.target_embedding_dim, hidden), l1(hidden, d);
  nn::gr::init_linear_xavier_zero_bias(l0);
  nn::gr::init_linear_xavier_zero_bias(l1);
  item_mlp_ = register_module("_item_embedding_mlp",
                              torch::nn::Sequential(l0, nn::gr::SwishLayerNorm(hidden), l1, nn::gr::LayerNorm(d)));
  std::optional<nn::MLPOptions> mlp;
  if (cfg.fusion_mtl_tower().has_mlp()) mlp = to_mlp_options(cfg.fusion_mtl_tower().mlp());
  std::vector<nn::FusionTask> tasks;
  for (const ModelTask& t : tasks_) tasks.push_back({t.tower, t.num_class});
  tower_ = register_module("_multitask_module",
                           nn::FusionMTLTower(d, mlp, std::move(tasks), std::string(kPath) + ".fusion_mtl_tower"));
}

TensorMap DlrmHSTU::predict_impl(const sparse::Batch& batch) {
  auto grouped = build_input(batch);
  // The candidates per row, in the batch's own row order.
  torch::Tensor num_targets = grouped.at("candidate.sequence_length").to(torch::kInt64);
  if (!ascending_) grouped = flip_rows(grouped);
  auto items = item_mlp_->forward(grouped.at("candidate.sequence"));
  auto users = transducer_->forward(grouped);
  auto outputs = tower_->forward(users, items);
  if (!ascending_) outputs = flip_rows(outputs);
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
