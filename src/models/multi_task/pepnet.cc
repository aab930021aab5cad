#include "models/multi_task/pepnet.h"

#include <algorithm>
#include <optional>

#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"

namespace tzrec::models {
namespace {

constexpr const char* kPath = "model_config.pepnet";
constexpr const char* kMainGroup = "all";
constexpr const char* kDomainGroup = "domain";
constexpr const char* kUiaGroup = "uia";

bool has_config_group(const protos::ModelConfig& mc, const std::string& name) {
  const auto& groups = mc.feature_groups();
  return std::any_of(groups.begin(), groups.end(),
                     [&](const protos::FeatureGroupConfig& g) { return g.group_name() == name; });
}

// "logits_ctr_1" → ("logits_ctr", 1); false when the name does not end in "_<digits>".
bool split_domain_suffix(const std::string& name, std::string* base, int64_t* domain) {
  const size_t pos = name.rfind('_');
  if (pos == std::string::npos || pos + 1 == name.size()) return false;
  const std::string digits = name.substr(pos + 1);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *base = name.substr(0, pos);
  *domain = std::stoll(digits);
  return true;
}

}  // namespace

PEPNet::PEPNet(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
               std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, labels, std::move(sample_weights)) {
  const protos::PEPNet& cfg = model_config_.pepnet();
  const std::string path = kPath;
  // tzrec's PEPNet reads the groups by these names (pepnet.py); `all` is required.
  require_group("PEPNet", kMainGroup, protos::DEEP);
  const bool has_domain = has_config_group(model_config_, kDomainGroup);
  const bool has_uia = has_config_group(model_config_, kUiaGroup);
  if (has_domain) require_group("PEPNet", kDomainGroup, protos::DEEP);
  if (has_uia) require_group("PEPNet", kUiaGroup, protos::DEEP);
  init_input(features);
  const int64_t main_dim = embedding_group_->group_total_dim(kMainGroup);
  int64_t task_in = main_dim;

  if (has_domain) {
    // epnet_hidden_unit defaults to the width of the `all` group.
    const int64_t hidden = cfg.has_epnet_hidden_unit() ? static_cast<int64_t>(cfg.epnet_hidden_unit()) : main_dim;
    if (hidden < 1) {
      throw ConfigError(path + ".epnet_hidden_unit: must be > 0, got 0 (unset: the width of group 'all')");
    }
    epnet_ = register_module("epnet", nn::EPNet(main_dim, embedding_group_->group_total_dim(kDomainGroup), hidden,
                                                cfg.epnet_gamma()));
    task_in = epnet_->output_dim();
  } else if (cfg.has_epnet_hidden_unit() || cfg.has_epnet_gamma()) {
    log::warning("{}.epnet_hidden_unit / epnet_gamma have no effect without a feature group named 'domain' (as in "
                 "TorchEasyRec)",
                 path);
  }

  if (has_uia) {
    nn::PPNetOptions opts;
    opts.hidden_units.assign(cfg.ppnet_hidden_units().begin(), cfg.ppnet_hidden_units().end());
    opts.activation = cfg.ppnet_activation();
    opts.dropout_ratio.assign(cfg.ppnet_dropout_ratio().begin(), cfg.ppnet_dropout_ratio().end());
    opts.gamma = cfg.ppnet_gamma();
    // PPNet reads the (EPNet-scaled) `all` embeddings: EPNet keeps their width.
    ppnet_ = register_module("ppnet", nn::PPNet(main_dim, embedding_group_->group_total_dim(kUiaGroup),
                                                static_cast<int64_t>(tasks_.size()), opts, path));
    task_in = ppnet_->task_output_dim();
  } else if (cfg.ppnet_hidden_units_size() > 0 || cfg.ppnet_dropout_ratio_size() > 0 || cfg.has_ppnet_activation() ||
             cfg.has_ppnet_gamma()) {
    log::warning("{}.ppnet_* fields have no effect without a feature group named 'uia' (as in TorchEasyRec)", path);
  }

  // An empty domain_input_name counts as unset, as in tzrec (`if self._domain_input_name:`).
  domain_input_name_ = cfg.domain_input_name();
  if (!domain_input_name_.empty()) {
    if (std::find(labels.begin(), labels.end(), domain_input_name_) == labels.end()) {
      throw ConfigError(fmt::format("{}.domain_input_name: '{}' is not one of data_config.label_fields [{}]; the "
                                    "domain ids are read from that label column, add it there",
                                    path, domain_input_name_, fmt::join(labels, ", ")));
    }
    if (cfg.task_domain_num() < 1) {
      throw ConfigError(fmt::format("{}.task_domain_num: must be >= 1 with domain_input_name (the number of "
                                    "domains, one tower each per task), got {}",
                                    path, cfg.task_domain_num()));
    }
    task_domain_num_ = cfg.task_domain_num();
  } else if (cfg.has_task_domain_num() && cfg.task_domain_num() != 1) {
    log::warning("{}.task_domain_num has no effect without domain_input_name (as in TorchEasyRec)", path);
  }

  const int64_t per_task = domain_input_name_.empty() ? 1 : task_domain_num_;
  auto list = register_module("_task_tower", torch::nn::ModuleList());
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const protos::TaskTower& tower = cfg.task_towers(static_cast<int>(t));
    std::optional<nn::MLPOptions> mlp;
    if (tower.has_mlp()) mlp = to_mlp_options(tower.mlp());
    for (int64_t d = 0; d < per_task; ++d) {
      towers_.emplace_back(task_in, tasks_[t].num_class, mlp, tasks_[t].path);
      list->push_back(towers_.back());
    }
  }
}

TensorMap PEPNet::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor features = grouped.at(kMainGroup);  // [B, A]
  if (epnet_) features = epnet_->forward(features, grouped.at(kDomainGroup));
  std::vector<torch::Tensor> task_inputs;  // per task [B, task_in], or one shared
  if (ppnet_) {
    task_inputs = ppnet_->forward(features, grouped.at(kUiaGroup));
  } else {
    task_inputs.push_back(features);
  }
  TensorMap predictions;
  const bool domains = !domain_input_name_.empty();
  const int64_t per_task = domains ? task_domain_num_ : 1;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const torch::Tensor& input = ppnet_ ? task_inputs[t] : task_inputs[0];
    for (int64_t d = 0; d < per_task; ++d) {
      torch::Tensor output = towers_[t * static_cast<size_t>(per_task) + static_cast<size_t>(d)]->forward(input);
      if (!domains) {
        task_output_to_prediction(t, output, &predictions);
        continue;
      }
      TensorMap one;
      task_output_to_prediction(t, output, &one);
      for (auto& [name, value] : one) predictions[fmt::format("{}_{}", name, d)] = std::move(value);
    }
  }
  return predictions;
}

torch::Tensor PEPNet::domain_ids(const sparse::Batch& batch) const {
  auto it = batch.labels.find(domain_input_name_);
  if (it == batch.labels.end()) {
    throw DataError(fmt::format("batch has no label '{}' ({}.domain_input_name, data_config.label_fields); check "
                                "the input columns",
                                domain_input_name_, kPath));
  }
  const torch::Tensor& label = it->second;  // [B] float32
  torch::Tensor bad = (label != torch::round(label)) | (label < 0) | (label >= task_domain_num_);
  if (bad.any().item<bool>()) {
    const int64_t row = bad.nonzero().select(1, 0)[0].item<int64_t>();
    throw DataError(fmt::format("label column '{}' ({}.domain_input_name) holds {} in row {} of the batch; domain "
                                "ids must be integers in [0, {}) ({}.task_domain_num {})",
                                domain_input_name_, kPath, label[row].item<double>(), row, task_domain_num_, kPath,
                                task_domain_num_));
  }
  return label.to(torch::kInt64);
}

TensorMap PEPNet::task_predictions(const TensorMap& predictions, const sparse::Batch& batch) const {
  if (domain_input_name_.empty()) return predictions;
  // Group "<name>_<d>" by <name>, domains in numeric order (so "_10" follows "_9").
  std::map<std::string, std::vector<torch::Tensor>> by_name;
  for (const auto& [key, value] : predictions) {
    std::string base;
    int64_t d = 0;
    TORCH_CHECK(split_domain_suffix(key, &base, &d) && d < task_domain_num_, "PEPNet: prediction '", key,
                "' has no domain suffix below ", task_domain_num_);
    auto& values = by_name[base];
    values.resize(static_cast<size_t>(task_domain_num_));
    values[static_cast<size_t>(d)] = value;
  }
  if (by_name.empty()) return {};
  torch::Tensor ids = domain_ids(batch);  // [B]
  TensorMap out;
  for (auto& [base, values] : by_name) {
    for (size_t d = 0; d < values.size(); ++d) {
      TORCH_CHECK(values[d].defined(), "PEPNet: prediction '", base, "_", d, "' is missing");
    }
    torch::Tensor stacked = torch::stack(values, 1);  // [B, D, ...]
    TORCH_CHECK(stacked.size(0) == ids.size(0), "PEPNet: ", base, " has ", stacked.size(0), " rows, label column '",
                domain_input_name_, "' ", ids.size(0));
    const auto opts = torch::TensorOptions().dtype(torch::kInt64).device(stacked.device());
    out[base] = stacked.index({torch::arange(stacked.size(0), opts), ids.to(stacked.device())});  // [B, ...]
  }
  return out;
}

}  // namespace tzrec::models
