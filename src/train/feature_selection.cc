#include "train/feature_selection.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/python_float.h"
#include "base/text.h"
#include "checkpoint/checkpoint.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "train/run_config.h"

namespace tzrec::train {
namespace feature_selection_detail {

const protos::FeatureGroupConfig* group_config(const protos::EasyRecConfig& config, const std::string& name) {
  for (const auto& g : config.model_config().feature_groups()) {
    if (g.group_name() == name) return &g;
  }
  return nullptr;
}

// The names of a group's dropout entries: its features, then its sequence encoders' outputs.
std::vector<std::string> dropout_entry_names(const protos::FeatureGroupConfig& g) {
  std::vector<std::string> names(g.feature_names().begin(), g.feature_names().end());
  for (int i = 0; i < g.sequence_encoders_size(); ++i) names.push_back(fmt::format("{}_seq_encoder_{}", g.group_name(), i));
  return names;
}

// A CSV field as pandas writes it: quoted when it holds the delimiter, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace feature_selection_detail

std::vector<GroupDropoutRatios> feature_dropout_ratios(const protos::EasyRecConfig& config,
                                                       const std::map<std::string, torch::Tensor>& tensors,
                                                       const std::string& checkpoint) {
  using namespace feature_selection_detail;
  if (!config.model_config().has_variational_dropout()) {
    throw ConfigError("model_config.variational_dropout is not set: feature selection ranks features by the dropout "
                      "ratios it learns; train with variational_dropout { regularization_lambda: ... } first");
  }
  static const std::regex name_re(R"(^(?:.*\.)?group_variational_dropouts\.([^.]+)\.feature_p$)");
  std::map<std::string, GroupDropoutRatios> found;
  for (const auto& [name, tensor] : tensors) {
    std::smatch m;
    if (!std::regex_match(name, m, name_re)) continue;
    const std::string group = m[1].str();
    const protos::FeatureGroupConfig* g = group_config(config, group);
    if (g == nullptr) {
      throw CheckpointError(fmt::format("{}: '{}' is the variational dropout of feature group '{}', which the config "
                                        "does not have; give the config the checkpoint was trained with",
                                        checkpoint, name, group));
    }
    const std::vector<std::string> names = dropout_entry_names(*g);
    if (tensor.dim() != 1 || tensor.size(0) != static_cast<int64_t>(names.size())) {
      throw CheckpointError(fmt::format("{}: '{}' has shape {}, but group '{}' has {} feature(s) and encoder(s) ({}); "
                                        "give the config the checkpoint was trained with",
                                        checkpoint, name, format_shape(tensor.sizes().vec()), group, names.size(),
                                        fmt::join(names, ", ")));
    }
    const torch::Tensor p = torch::sigmoid(tensor.detach().to(torch::kFloat32)).to(torch::kFloat64).contiguous();
    GroupDropoutRatios r;
    r.group = group;
    for (size_t i = 0; i < names.size(); ++i) r.ratios.emplace_back(names[i], p.data_ptr<double>()[i]);
    std::stable_sort(r.ratios.begin(), r.ratios.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    found[group] = std::move(r);
  }
  if (found.empty()) {
    throw CheckpointError(fmt::format("{} holds no variational dropout (no '...group_variational_dropouts.<group>."
                                      "feature_p'): no feature group has more than one feature, or the checkpoint "
                                      "was trained without variational_dropout",
                                      checkpoint));
  }
  std::vector<GroupDropoutRatios> out;
  for (const auto& g : config.model_config().feature_groups()) {
    auto it = found.find(g.group_name());
    if (it != found.end()) out.push_back(std::move(it->second));
  }
  return out;
}

protos::EasyRecConfig select_features(const protos::EasyRecConfig& config,
                                      const std::vector<GroupDropoutRatios>& groups, int64_t topk,
                                      bool clear_variational_dropout) {
  TORCH_CHECK(topk >= 1, "select_features: topk must be positive");
  std::map<std::string, std::set<std::string>> top;  // group → its top-k entries
  for (const GroupDropoutRatios& g : groups) {
    auto& keep = top[g.group];
    for (size_t i = 0; i < g.ratios.size() && static_cast<int64_t>(i) < topk; ++i) keep.insert(g.ratios[i].first);
  }
  // Features that stay: top k of a group, in a group without dropout or a sequence group.
  std::set<std::string> kept, grouped;
  for (const auto& [group, names] : top) kept.insert(names.begin(), names.end());
  for (const auto& g : config.model_config().feature_groups()) {
    grouped.insert(g.feature_names().begin(), g.feature_names().end());
    if (top.count(g.group_name()) == 0) kept.insert(g.feature_names().begin(), g.feature_names().end());
    for (const auto& s : g.sequence_groups()) {
      kept.insert(s.feature_names().begin(), s.feature_names().end());
      grouped.insert(s.feature_names().begin(), s.feature_names().end());
    }
  }
  protos::EasyRecConfig out = config;
  auto* features = out.mutable_feature_configs();
  features->Clear();
  for (const auto& f : config.feature_configs()) {
    const std::string& name = config::feature_name(f);
    if (f.has_sequence_feature() || kept.count(name) > 0 || grouped.count(name) == 0) *features->Add() = f;
  }
  for (auto& g : *out.mutable_model_config()->mutable_feature_groups()) {
    auto it = top.find(g.group_name());
    if (it == top.end()) continue;
    std::vector<std::string> names;
    for (const auto& n : g.feature_names()) {
      if (it->second.count(n) > 0) names.push_back(n);
    }
    g.clear_feature_names();
    for (auto& n : names) g.add_feature_names(std::move(n));
  }
  if (clear_variational_dropout) out.mutable_model_config()->clear_variational_dropout();
  return out;
}

std::string run_feature_selection(const FeatureSelectionOptions& options) {
  using namespace feature_selection_detail;
  namespace fs = std::filesystem;
  if (options.topk < 1) throw UsageError(fmt::format("--topk must be at least 1, got {}", options.topk));
  if (options.output_dir.empty()) throw UsageError("--output_dir is required: the directory the results go to");
  if (options.visualize) {
    throw NotSupportedError("feature_selection --visualize (TorchEasyRec's matplotlib charts); the ratios are in the "
                            "feature_dropout_ratio_<group>.csv files");
  }
  ConfigOverrides no_overrides;
  no_overrides.require_model_dir = false;
  const protos::EasyRecConfig config = load_run_config(options.pipeline_config_path, no_overrides);
  const std::string model_dir = options.model_dir.empty() ? config.model_dir() : options.model_dir;
  const auto latest = checkpointing::latest_checkpoint(model_dir);
  if (!latest) {
    throw CheckpointError(fmt::format("--model_dir '{}' holds no checkpoint; give the model_dir of a run trained with "
                                      "variational_dropout, or one of its model.ckpt-N directories",
                                      model_dir));
  }
  log::info("feature_selection: reading the variational dropout of {}", latest->first);
  const checkpointing::CheckpointData checkpoint = checkpointing::load_checkpoint(latest->first);
  const std::vector<GroupDropoutRatios> groups = feature_dropout_ratios(config, checkpoint.model, latest->first);

  fs::create_directories(options.output_dir);
  for (const GroupDropoutRatios& g : groups) {
    const std::string path = (fs::path(options.output_dir) / fmt::format("feature_dropout_ratio_{}.csv", g.group)).string();
    std::ofstream out(path);
    out << "feature_name,mean_drop_p\n";
    for (const auto& [name, ratio] : g.ratios) out << csv_field(name) << ',' << python_float_repr(ratio) << '\n';
    out.close();
    if (!out) throw IoError(fmt::format("cannot write {}", path));
    log::info("feature_selection: group '{}': {} feature(s) ranked, the top {} kept; wrote {}", g.group, g.ratios.size(),
              std::min<int64_t>(options.topk, static_cast<int64_t>(g.ratios.size())), path);
  }
  const protos::EasyRecConfig selected = select_features(config, groups, options.topk, options.clear_variational_dropout);
  const std::string config_path =
      (fs::path(options.output_dir) / fs::path(options.pipeline_config_path).filename()).string();
  config::save_pipeline_config(selected, config_path);
  log::info("feature_selection: {} of {} feature config(s) kept; wrote {}", selected.feature_configs_size(),
            config.feature_configs_size(), config_path);
  return config_path;
}

}  // namespace tzrec::train
