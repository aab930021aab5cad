#include "export/exporter.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/version.h"
#include "config/pipeline_config.h"
#include "export/embedding_quantization.h"
#include "export/export_dir.h"
#include "feature/assets.h"
#include "feature/feature_subset.h"
#include "feature/fg_json.h"
#include "models/match/hstu_match.h"
#include "models/match/match_model.h"
#include "models/rank/tdm.h"
#include "embedding/embedding_group.h"
#include "feature/features.h"
#include "checkpoint/checkpoint.h"
#include "train/checkpoint_policy.h"
#include "train/remapped_shard_checkpoint.h"
#include "train/run_config.h"
#include "checkpoint/safetensors.h"
#include "train/training_session.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace {

constexpr const char* kTrainEvalResultFile = "train_eval_result_v2.txt";

// TorchEasyRec export switches this engine does not implement; set to anything but "" / "0" they
// are refused rather than ignored. Each with what it asks for and what the user can do instead.
struct UnsupportedSwitch {
  const char* what;
  const char* instead;
};

const std::map<std::string, UnsupportedSwitch>& unsupported_switches() {
  static const char* kUnset = "unset it to export the model package";
  static const std::map<std::string, UnsupportedSwitch> switches = {
      {"ENABLE_AOT", {"AOTInductor export", kUnset}},
      {"UNIFIED_AOT", {"AOTInductor export", kUnset}},
      {"ENABLE_TRT", {"TensorRT export", kUnset}},
      {"INPUT_TILE", {"input tiling of user features", kUnset}},
      {"USE_DISTRIBUTED_EMBEDDING", {"distributed-embedding export", kUnset}},
      // USE_RTP also names grouped sequence features "<sequence>_<feature>", which a config written
      // for it needs in every command: unsetting it would not help there.
      {"USE_RTP",
       {"RTP export: TorchEasyRec's package for RTP serving",
        "a config written for RTP naming runs its checkpoint with `tzrec predict --pipeline_config_path` under "
        "USE_RTP=1; other configs: unset it to export the model package"}},
      {"QUANT_EC_EMB", {"quantized sequence embedding collections", kUnset}},
  };
  return switches;
}

void check_export_switches() {
  for (const auto& [name, sw] : unsupported_switches()) {
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && std::string(value) != "" && std::string(value) != "0") {
      throw NotSupportedError(fmt::format("{}={} ({}); {}", name, value, sw.what, sw.instead));
    }
  }
}

// Asset file → its name in the export dir; UsageError for a missing file or a name used twice. An
// asset named fg.json replaces the generated one, as TorchEasyRec copies the assets last.
std::vector<std::pair<fs::path, std::string>> plan_assets(const std::vector<std::string>& assets) {
  std::vector<std::pair<fs::path, std::string>> out;
  std::set<std::string> names = {kExportWeightsFile, kExportConfigFile, kModelAccFile, "version"};
  for (const auto& asset : assets) {
    if (asset.empty()) continue;
    if (!fs::is_regular_file(asset)) {
      throw UsageError(fmt::format("--asset_files: {} is not a readable file; check the path", asset));
    }
    const std::string name = fs::path(asset).filename().string();
    if (!names.insert(name).second) {
      throw UsageError(fmt::format(
          "--asset_files: {} would be copied to export_dir/{}, which another file of the export already "
          "uses; rename the asset", asset, name));
    }
    if (name == feature::kFgJsonFile) {
      log::warning("--asset_files: {} replaces the fg.json generated from the config in the export", asset);
    }
    out.emplace_back(asset, name);
  }
  return out;
}

// What every package of one export shares.
struct PackageInfo {
  int64_t step = 0;
  std::string checkpoint;  // absolute checkpoint directory
  bool use_ema = false;
  EmbeddingQuant quant = EmbeddingQuant::kFp32;
  const nlohmann::ordered_json* acc = nullptr;                            // model_acc.json
  const std::vector<std::pair<fs::path, std::string>>* assets = nullptr;  // --asset_files
};

// Writes one package (export/export_dir.h) of `model` into `dir` (to be renamed to `final_dir`):
// `tensors` by state-dict name, the model's tables stored as info.quant; `tower` "" or the tower
// the package serves (metadata "tower").
void write_package(const protos::EasyRecConfig& config, models::Model& model,
                   const std::vector<std::pair<std::string, torch::Tensor>>& tensors, const std::string& tower,
                   const PackageInfo& info, const fs::path& dir, const fs::path& final_dir) {
  std::set<std::string> table_names;
  const embedding::EmbeddingGroupSet& groups = model.embeddings();
  for (const std::string& table : groups.table_names()) table_names.insert(groups.parameter_name_of(table));
  std::map<std::string, torch::Tensor> stored;
  // Dynamic tables keep only their live rows (train/remapped_shard_checkpoint.h).
  for (const auto& [name, tensor] : train::live_rows_of_dynamic_tables(model, groups, tensors)) {
    stored.emplace(name, table_names.count(name) ? quantize_table(tensor, info.quant) : tensor.detach());
  }
  std::map<std::string, std::string> metadata = {
      {"format", kExportFormat},
      {"format_version", kExportFormatVersion},
      {"step", std::to_string(info.step)},
      {"checkpoint", info.checkpoint},
      {"use_dense_ema", info.use_ema ? "true" : "false"},
      {"quant_emb", quant_name(info.quant)},
      {"tables", nlohmann::json(std::vector<std::string>(table_names.begin(), table_names.end())).dump()},
  };
  if (!tower.empty()) metadata["tower"] = tower;
  checkpointing::save_safetensors((dir / kExportWeightsFile).string(), stored, metadata);
  // The files the features read go into the package (feature/assets.h): its fg.json names the
  // copies, its pipeline.config names them with asset_dir the package (rebased when loaded).
  feature::FgJsonOptions fg_options;
  fg_options.asset_dir = dir.string();
  const nlohmann::ordered_json fg_json = feature::create_fg_json(config, fg_options);
  protos::EasyRecConfig package_config = config;
  feature::relocate_assets(&package_config, dir.string(), final_dir.string());
  config::save_pipeline_config(package_config, (dir / kExportConfigFile).string());
  checkpointing::write_text_file((dir / kModelAccFile).string(), info.acc->dump(2) + "\n");
  checkpointing::write_text_file((dir / "version").string(), std::string(kVersion) + "\n");
  feature::write_fg_json(fg_json, (dir / feature::kFgJsonFile).string());
  for (const auto& [from, name] : *info.assets) fs::copy_file(from, dir / name, fs::copy_options::overwrite_existing);
}

// The config of a tower's package: only the features of its feature `groups` (and under FG_DAG
// those they read) and only those groups, so that predicting with the package needs only the
// tower's input columns.
protos::EasyRecConfig tower_package_config(const protos::EasyRecConfig& config, const std::vector<std::string>& groups) {
  std::set<std::string> names;
  protos::EasyRecConfig out = config;
  protos::ModelConfig* mc = out.mutable_model_config();
  mc->clear_feature_groups();
  for (const protos::FeatureGroupConfig& g : config.model_config().feature_groups()) {
    if (std::find(groups.begin(), groups.end(), g.group_name()) == groups.end()) continue;
    *mc->add_feature_groups() = g;
    names.insert(g.feature_names().begin(), g.feature_names().end());
    for (const auto& sg : g.sequence_groups()) names.insert(sg.feature_names().begin(), sg.feature_names().end());
  }
  return feature::keep_features(out, names);
}

// The config of TDM's embedding package (TorchEasyRec's TDMEmbedding, models/rank/tdm.h): the
// first SEQUENCE group's query (non-sequence) features as one DEEP group of that name, and only
// those features.
protos::EasyRecConfig tdm_embedding_config(const protos::EasyRecConfig& config) {
  std::map<std::string, bool> is_sequence;
  for (const feature::FeatureInfo& f : feature::build_feature_infos(config)) is_sequence[f.name] = f.is_sequence;
  protos::EasyRecConfig out = config;
  protos::ModelConfig* mc = out.mutable_model_config();
  mc->clear_feature_groups();
  std::set<std::string> names;
  for (const protos::FeatureGroupConfig& g : config.model_config().feature_groups()) {
    if (g.group_type() != protos::SEQUENCE) continue;
    protos::FeatureGroupConfig* q = mc->add_feature_groups();
    q->set_group_name(g.group_name());
    q->set_group_type(protos::DEEP);
    q->set_embedding_name_suffix(g.embedding_name_suffix());  // the same tables as the SEQUENCE group's
    for (const std::string& f : g.feature_names()) {
      auto it = is_sequence.find(f);
      if (it != is_sequence.end() && it->second) continue;
      q->add_feature_names(f);
      names.insert(f);
    }
    if (names.empty()) {
      throw ConfigError(fmt::format("model_config.feature_groups: SEQUENCE group '{}' has no query features; TDM's "
                                    "embedding package embeds the tree nodes by them",
                                    g.group_name()));
    }
    break;
  }
  return feature::keep_features(out, names);
}

}  // namespace

bool use_dense_ema_for_export(const protos::EasyRecConfig& config) {
  if (config.export_config().has_use_dense_ema()) return config.export_config().use_dense_ema();
  return config.train_config().dense_optimizer().has_ema();
}

std::pair<std::string, int64_t> checkpoint_to_export(const protos::EasyRecConfig& config,
                                                     const std::string& checkpoint_path) {
  const auto& ec = config.export_config();
  if (ec.exporter_type() != "latest" && ec.exporter_type() != "best") {
    throw ConfigError(fmt::format("export_config.exporter_type: \"{}\" is not an exporter; use \"latest\" or \"best\"",
                                  ec.exporter_type()));
  }
  if (!checkpoint_path.empty()) {
    auto found = checkpointing::latest_checkpoint(checkpoint_path);
    if (!found) {
      throw CheckpointError(fmt::format("--checkpoint_path {}: no checkpoint there; pass model_dir/model.ckpt-N or a "
                                        "model_dir holding checkpoints", checkpoint_path));
    }
    return *found;
  }
  const std::string& model_dir = config.model_dir();
  const auto all = checkpointing::list_checkpoints(model_dir);
  if (ec.exporter_type() == "best" && !all.empty()) {
    std::vector<int64_t> steps;
    for (const auto& [dir, step] : all) steps.push_back(step);
    const auto best = train::best_checkpoint_step((fs::path(model_dir) / kTrainEvalResultFile).string(),
                                                  ec.best_exporter_metric(), ec.metric_larger_is_better(), steps);
    if (best) {
      for (const auto& entry : all) {
        if (entry.second == *best) return entry;
      }
    }
    log::warning("export_config.exporter_type \"best\": no checkpoint of {} has \"{}\" in {}; exporting the latest",
                 model_dir, ec.best_exporter_metric(), kTrainEvalResultFile);
  }
  auto latest = checkpointing::latest_checkpoint(model_dir);
  if (!latest) {
    throw CheckpointError(fmt::format("no checkpoint found in model_dir {}; train first or pass --checkpoint_path",
                                      model_dir));
  }
  return *latest;
}

std::string export_model(const ExportOptions& options) {
  if (const char* rank = std::getenv("RANK"); rank != nullptr && std::string(rank) != "0") {
    log::info("export runs on rank 0 only; rank {} has nothing to do", rank);
    return "";
  }
  if (options.export_dir.empty()) throw UsageError("--export_dir is required");
  if (fs::exists(options.export_dir)) {
    throw UsageError(fmt::format("--export_dir {} already exists; remove it or choose another directory",
                                 options.export_dir));
  }
  auto config = train::load_run_config(options.pipeline_config_path, {});
  check_export_switches();
  const EmbeddingQuant quant = quant_emb_from_environment();
  const auto assets = plan_assets(options.asset_files);
  nlohmann::ordered_json acc;
  acc["SPARSE_INT64"] = "1";
  acc["QUANT_EMB"] = quant_name(quant);
  const nlohmann::ordered_json base_acc = acc;  // TorchEasyRec's TDM packages get no additional_export_config
  if (!options.additional_export_config.empty()) {
    nlohmann::ordered_json extra;
    try {
      extra = nlohmann::ordered_json::parse(options.additional_export_config);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("--additional_export_config is not valid JSON ({}); pass an object such as "
                                   "'{{\"key\": \"value\"}}'", e.what()));
    }
    if (!extra.is_object()) throw UsageError("--additional_export_config must be a JSON object");
    for (const auto& [key, value] : extra.items()) acc[key] = value;
  }
  train::setup_runtime();

  const auto [ckpt_dir, step] = checkpoint_to_export(config, options.checkpoint_path);
  const bool use_ema = use_dense_ema_for_export(config);
  log::info("exporting {} (step {}){}, embedding tables {}", ckpt_dir, step, use_ema ? " with the dense EMA weights" : "",
            quant_name(quant));
  train::TrainingSession session(config, /*with_optimizers=*/false);
  const auto checkpoint = checkpointing::load_checkpoint(ckpt_dir);
  session.restore(checkpoint, /*restore_optimizer=*/false);
  if (use_ema) session.load_ema_weights(checkpoint, "export_config.use_dense_ema");

  const PackageInfo info{step, fs::absolute(ckpt_dir).lexically_normal().string(), use_ema, quant, &acc, &assets};
  const fs::path final_dir = fs::path(options.export_dir).lexically_normal();
  const fs::path staging = final_dir.parent_path() /
                           fmt::format(".{}.tmp-{}", final_dir.filename().string(), ::getpid());
  fs::remove_all(staging);
  fs::create_directories(staging);
  try {
    if (config.model_config().model_case() == protos::ModelConfig::kTdm) {
      // TorchEasyRec's TDM export: export_dir/embedding (the nodes' item embeddings, without the
      // asset files) and export_dir/model (the scorer).
      const protos::EasyRecConfig emb_config = tdm_embedding_config(config);
      auto emb_session_ptr = [&] {
        embedding::DeferTableAllocation defer;  // the package names its tables; the values are the trained ones
        return std::make_unique<train::TrainingSession>(emb_config, /*with_optimizers=*/false, nullptr, std::nullopt,
                                                        models::TDM::kEmbeddingTower);
      }();
      train::TrainingSession& emb_session = *emb_session_ptr;
      std::map<std::string, torch::Tensor> trained;
      for (auto& [name, tensor] : session.model_tensors()) trained.emplace(name, tensor);
      const embedding::EmbeddingGroupSet& full_tables = session.model().embeddings();
      const embedding::EmbeddingGroupSet& emb_tables = emb_session.model().embeddings();
      std::vector<std::pair<std::string, torch::Tensor>> tensors;
      for (const std::string& table : emb_tables.table_names()) {
        // The package's table is the scorer's SEQUENCE-group table of the same name.
        const std::string from =
            full_tables.parameter_name_of(std::string(embedding::EmbeddingGroupImpl::kSequenceTablePrefix) + table);
        auto it = trained.find(from);
        TORCH_CHECK(it != trained.end(), "the tdm model has no table ", from);
        tensors.emplace_back(emb_tables.parameter_name_of(table), it->second);
      }
      for (auto& [name, tensor] : emb_session.model_tensors()) {
        bool is_table = false;
        for (const auto& [n, t] : tensors) is_table = is_table || n == name;
        if (is_table) continue;
        throw NotSupportedError(fmt::format("TDM embedding package with the parameter {} (dense embeddings of query "
                                            "features)", name));
      }
      const std::vector<std::pair<fs::path, std::string>> no_assets;
      PackageInfo emb_info = info;
      emb_info.assets = &no_assets;
      emb_info.acc = &base_acc;
      PackageInfo model_info = info;
      model_info.acc = &base_acc;
      fs::create_directories(staging / "embedding");
      write_package(emb_config, emb_session.model(), tensors, models::TDM::kEmbeddingTower, emb_info,
                    staging / "embedding", fs::absolute(final_dir / "embedding").lexically_normal());
      fs::create_directories(staging / "model");
      write_package(config, session.model(), session.model_tensors(), "", model_info, staging / "model",
                    fs::absolute(final_dir / "model").lexically_normal());
    } else if (!models::is_match_model(config.model_config())) {
      write_package(config, session.model(), session.model_tensors(), "", info, staging,
                    fs::absolute(final_dir).lexically_normal());
    } else {
      // TorchEasyRec's match models: one package per tower, export_dir/user and export_dir/item.
      std::map<std::string, torch::Tensor> trained;
      for (auto& [name, tensor] : session.model_tensors()) trained.emplace(name, tensor);
      for (const auto& [tower, tower_groups] : models::match_towers(config.model_config())) {
        protos::EasyRecConfig tower_config = tower_package_config(config, tower_groups);
        // HSTUMatch's item package embeds one item per row from plain features.
        if (config.model_config().has_hstu_match() && tower == models::MatchModel::kItemTower) {
          tower_config = models::HSTUMatch::item_package_config(tower_config);
        }
        embedding::DeferTableAllocation defer;  // the tower's model names its tensors; the values are the trained ones
        train::TrainingSession tower_session(tower_config, /*with_optimizers=*/false, nullptr, std::nullopt, tower);
        // Its tensors: dense ones by state-dict name, tables (not allocated here) by their names.
        std::set<std::string> names;
        for (auto& [name, unused] : tower_session.model_tensors()) names.insert(name);
        const embedding::EmbeddingGroupSet& tables = tower_session.model().embeddings();
        for (const std::string& table : tables.table_names()) names.insert(tables.parameter_name_of(table));
        std::vector<std::pair<std::string, torch::Tensor>> tensors;
        for (const std::string& name : names) {
          auto it = trained.find(name);
          TORCH_CHECK(it != trained.end(), "the model has no tensor ", name, " of its tower ", tower);
          tensors.emplace_back(name, it->second);
        }
        const std::string dir = tower.substr(0, tower.find('_'));  // "user" / "item"
        fs::create_directories(staging / dir);
        write_package(tower_config, tower_session.model(), tensors, tower, info, staging / dir,
                      fs::absolute(final_dir / dir).lexically_normal());
      }
    }
  } catch (...) {
    fs::remove_all(staging);
    throw;
  }
  std::error_code ec;
  fs::rename(staging, final_dir, ec);
  if (ec) {
    fs::remove_all(staging);
    throw IoError(fmt::format("cannot create export_dir {}: {}", final_dir.string(), ec.message()));
  }
  log::info("exported to {}", final_dir.string());
  return ckpt_dir;
}

}  // namespace tzrec::exporting
