#include "train/zch_to_dynamicemb.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <regex>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "checkpoint/checkpoint.h"
#include "config/pipeline_config.h"
#include "feature/features.h"
#include "train/model_dynamic_tables.h"
#include "train/run_config.h"

namespace tzrec::train {
// Helpers in a named namespace: the library is compiled as a unity build.
namespace zch_to_dynamicemb_detail {

// State-dict names (docs/tzrec-compatibility.md §5.12, §5.13), below a collection's path:
//   zch:     <group>.mc_ebc | <group>.mc_ec_dict.<dim>
//              ._managed_collision_collection._managed_collision_modules.<table>.<buffer>
//              ._embedding_module.embedding_bags.<table>.weight (mc_ec_dict: .embeddings.)
//   dynamic: as model_dynamic_tables.h says
constexpr const char* kMchModules = "._managed_collision_collection._managed_collision_modules.";
constexpr const char* kSortedIds = "._mch_sorted_raw_ids";
const std::regex& zch_collection_suffix() {
  static const std::regex re(R"(^(.*)\.(mc_ebc|mc_ec_dict\.[0-9]+)$)");
  return re;
}

std::string describe(const torch::Tensor& t) {
  if (!t.defined()) return "missing";
  return fmt::format("{} {}", format_shape(t.sizes().vec()), c10::toString(t.scalar_type()));
}

// A zch table of the source checkpoint.
struct SourceZch {
  std::string group;       // the collection's path without its last segment(s)
  std::string table;
  std::string module;      // "<collection>._managed_collision_collection._managed_collision_modules.<table>"
  std::string weight;      // the weight's name ("" when the checkpoint lacks it)
};

// The zch tables of `source`, by (group, table): every "<P>.<mch modules>.<table>._mch_sorted_raw_ids".
std::map<std::pair<std::string, std::string>, SourceZch> find_source_zch(
    const std::map<std::string, torch::Tensor>& source) {
  std::map<std::pair<std::string, std::string>, SourceZch> out;
  const std::string modules = kMchModules;
  const std::string sorted = kSortedIds;
  for (const auto& [name, tensor] : source) {
    if (name.size() <= sorted.size() || name.compare(name.size() - sorted.size(), sorted.size(), sorted) != 0) continue;
    const size_t at = name.rfind(modules);
    if (at == std::string::npos) continue;
    SourceZch z;
    const std::string collection = name.substr(0, at);
    z.table = name.substr(at + modules.size(), name.size() - sorted.size() - at - modules.size());
    z.module = name.substr(0, name.size() - sorted.size());
    std::smatch m;
    z.group = std::regex_match(collection, m, zch_collection_suffix()) ? m[1].str() : collection;
    for (const char* tables : {"embedding_bags", "embeddings"}) {
      const std::string weight = fmt::format("{}._embedding_module.{}.{}.weight", collection, tables, z.table);
      if (source.count(weight) > 0) z.weight = weight;
    }
    out.emplace(std::make_pair(z.group, z.table), std::move(z));
  }
  return out;
}

// A tensor of the target model that model_dynamic_tables named (a programmer error if absent).
torch::Tensor& target_tensor(std::map<std::string, torch::Tensor>& live, const std::string& name) {
  auto it = live.find(name);
  TORCH_CHECK(it != live.end(), "zch_to_dynamicemb: the target model has no tensor ", name);
  return it->second;
}

torch::Tensor optional_tensor(const std::map<std::string, torch::Tensor>& source, const std::string& name) {
  auto it = source.find(name);
  return it == source.end() ? torch::Tensor() : it->second;
}

}  // namespace zch_to_dynamicemb_detail

ZchTableConversion convert_zch_table(const ZchTableState& source, embedding::DynamicTable& table,
                                     torch::Tensor weight, const std::string& where) {
  using zch_to_dynamicemb_detail::describe;
  const auto check_places = [&](const torch::Tensor& t, const char* name, int64_t places) {
    if (!t.defined() || t.dim() != 1 || t.scalar_type() != torch::kInt64 || (places >= 0 && t.size(0) != places)) {
      throw CheckpointError(fmt::format("{}: {} is {}, expected [{}] int64 (the zch module's places); the checkpoint "
                                        "is not a zero-collision hashed table's state",
                                        where, name, describe(t), places >= 0 ? std::to_string(places) : "S"));
    }
  };
  check_places(source.sorted_raw_ids, "_mch_sorted_raw_ids", -1);
  const int64_t places = source.sorted_raw_ids.size(0);
  check_places(source.remapped_ids_mapping, "_mch_remapped_ids_mapping", places);
  if (source.counts.defined()) check_places(source.counts, "_mch_counts", places);
  if (source.last_access_iter.defined()) check_places(source.last_access_iter, "_mch_last_access_iter", places);
  TORCH_CHECK(weight.dim() == 2, "convert_zch_table: the target weight must be [R + 2, dim]");
  if (!source.weight.defined() || source.weight.dim() != 2 || source.weight.size(1) != weight.size(1)) {
    throw CheckpointError(fmt::format("{}: the zch table's weight is {}, expected [{}, {}]", where,
                                      describe(source.weight), places, weight.size(1)));
  }

  ZchTableConversion result;
  const embedding::DynamicScoreStrategy strategy = table.options().score_strategy;
  torch::Tensor scores;
  if (strategy == embedding::DynamicScoreStrategy::kLfu && source.counts.defined()) {
    scores = source.counts.contiguous();
    result.score_source = "_mch_counts";
  } else if (strategy == embedding::DynamicScoreStrategy::kStep && source.last_access_iter.defined()) {
    scores = source.last_access_iter.contiguous();
    result.score_source = "_mch_last_access_iter";
  }
  const torch::Tensor ids = source.sorted_raw_ids.contiguous();
  const torch::Tensor mapping = source.remapped_ids_mapping.contiguous();
  const int64_t* id = ids.data_ptr<int64_t>();
  const int64_t* row = mapping.data_ptr<int64_t>();
  const int64_t* score = scores.defined() ? scores.data_ptr<int64_t>() : nullptr;
  const int64_t source_rows = source.weight.size(0);
  embedding::DynamicTableState state;
  // Every place but the last (the sentinel: its row is shared by the ids not in the table) that is
  // not empty (INT64_MAX).
  for (int64_t i = 0; i + 1 < places; ++i) {
    if (id[i] == std::numeric_limits<int64_t>::max()) continue;
    if (row[i] < 0 || row[i] >= source_rows) {
      throw CheckpointError(fmt::format("{}: id {} has row {} (_mch_remapped_ids_mapping), outside the weight's {} "
                                        "rows",
                                        where, id[i], row[i], source_rows));
    }
    state.keys.push_back(id[i]);
    state.rows.push_back(row[i]);
    state.scores.push_back(score != nullptr ? score[i] : 0);
  }
  result.held = static_cast<int64_t>(state.keys.size());
  const embedding::DynamicTableLoadResult loaded = load_dynamic_table_rows(table, state, source.weight, weight);
  result.dropped = loaded.dropped;
  result.loaded = result.held - result.dropped;
  return result;
}

ZchToDynamicembReport convert_zch_to_dynamicemb(TrainingSession& target, const std::string& target_config,
                                                const std::map<std::string, torch::Tensor>& source,
                                                const std::string& source_name) {
  using namespace zch_to_dynamicemb_detail;
  const auto zch = find_source_zch(source);
  if (zch.empty()) {
    throw CheckpointError(fmt::format(
        "{} holds no zero-collision hashed table (no '...{}<table>{}' tensor); --source_checkpoint_path must be a "
        "checkpoint of a model with zch features",
        source_name, kMchModules, kSortedIds));
  }
  std::vector<std::string> zch_names;
  for (const auto& [key, z] : zch) zch_names.push_back(z.group + "/" + z.table);
  const std::vector<ModelDynamicTable> dynamic = model_dynamic_tables(target);
  if (dynamic.empty()) {
    throw ConfigError(fmt::format("{}: no feature has dynamicemb {{ }}; the target config must swap zch {{ }} for "
                                  "dynamicemb {{ }} on the features to convert",
                                  target_config));
  }
  // Match before changing anything.
  std::set<std::string> converted_names;
  std::set<std::pair<std::string, std::string>> matched;
  for (const ModelDynamicTable& d : dynamic) {
    auto it = zch.find({d.group, d.table});
    if (it == zch.end()) {
      throw ConfigError(fmt::format(
          "{}: dynamic embedding table '{}' ({}) has no zch table of that name in {} (its zch tables: {}); give "
          "the table the name of the zch table it replaces (embedding_name), or drop dynamicemb from it",
          target_config, d.table, d.group, source_name, fmt::join(zch_names, ", ")));
    }
    const SourceZch& z = it->second;
    if (z.weight.empty()) {
      throw CheckpointError(fmt::format("{}: zch table '{}' ({}) has no weight tensor", source_name, z.table, z.group));
    }
    const torch::Tensor& w = source.at(z.weight);
    if (w.dim() != 2) {
      throw CheckpointError(fmt::format("{}: '{}' is {}, not a table", source_name, z.weight, describe(w)));
    }
    if (w.size(1) != d.embedding_dim) {
      throw ConfigError(fmt::format(
          "{}: dynamic embedding table '{}' ({}) has embedding_dim {}, but its zch table in {} has {} ('{}' is {}); "
          "give the feature the zch table's embedding_dim",
          target_config, d.table, d.group, d.embedding_dim, source_name, w.size(1), z.weight,
          format_shape(w.sizes().vec())));
    }
    matched.insert(it->first);
    converted_names.insert(d.weight);
  }

  ZchToDynamicembReport report;
  for (const auto& [key, z] : zch) {
    if (matched.count(key) == 0) report.unconverted.push_back(z.group + "/" + z.table);
  }
  // Every other tensor by name, before the indexes are rebuilt from the copied buffers.
  const auto tensors = target.model_tensors();
  std::map<std::string, torch::Tensor> live;
  {
    torch::NoGradGuard no_grad;
    for (const auto& [name, tensor] : tensors) {
      live.emplace(name, tensor);
      bool converted = converted_names.count(name) > 0;
      for (const ModelDynamicTable& d : dynamic) converted = converted || name.rfind(d.state_prefix, 0) == 0;
      if (converted) continue;
      auto it = source.find(name);
      if (it == source.end()) {
        report.missing.push_back(name);
      } else if (!it->second.sizes().equals(tensor.sizes()) || it->second.scalar_type() != tensor.scalar_type()) {
        report.mismatched.push_back(fmt::format("{} ({} here, {} in the source)", name, describe(tensor),
                                                describe(it->second)));
      } else {
        tensor.copy_(it->second);
        report.copied.push_back(name);
      }
    }
  }
  target.model().embeddings().reload_embedding_state();

  for (const ModelDynamicTable& d : dynamic) {
    const SourceZch& z = zch.at({d.group, d.table});
    ZchTableState state;
    state.sorted_raw_ids = source.at(z.module + kSortedIds);
    state.remapped_ids_mapping = optional_tensor(source, z.module + "._mch_remapped_ids_mapping");
    state.counts = optional_tensor(source, z.module + "._mch_counts");
    state.last_access_iter = optional_tensor(source, z.module + "._mch_last_access_iter");
    state.weight = source.at(z.weight);
    ZchToDynamicTable entry;
    entry.group = d.group;
    entry.table = d.table;
    entry.source_weight = z.weight;
    entry.target_weight = d.weight;
    entry.score_strategy = embedding::dynamic_score_strategy_name(d.index->options().score_strategy);
    entry.max_capacity = d.index->max_capacity();
    entry.result =
        convert_zch_table(state, *d.index, target_tensor(live, d.weight), fmt::format("{}: {}", source_name, z.module));
    // The step the table continues from: the zch module's, so that STEP scores (last access steps)
    // and the steps of later training stay on one scale.
    const torch::Tensor iter = optional_tensor(source, z.module + "._current_iter_tensor");
    if (iter.defined() && iter.numel() == 1 && iter.scalar_type() == torch::kInt64) {
      entry.step = std::max<int64_t>(0, iter.item<int64_t>());
    }
    target_tensor(live, d.state_prefix + "step").fill_(entry.step);

    const ZchTableConversion& r = entry.result;
    const std::string line = fmt::format(
        "zch_to_dynamicemb_convert: {} table '{}': {} id(s) held by the zch table, {} loaded into the dynamic table "
        "(max capacity {}, {}), {} dropped; step {}",
        d.group, d.table, r.held, r.loaded, entry.max_capacity, entry.score_strategy, r.dropped, entry.step);
    if (r.dropped > 0) {
      log::warning("{} (the table cannot hold every id: the highest scores of each full bucket stay)", line);
    } else {
      log::info("{}", line);
    }
    if (r.score_source.empty()) {
      log::info("zch_to_dynamicemb_convert: table '{}': scores start fresh (0): score_strategy {} has no counterpart "
                "in the zch state (LFU takes _mch_counts, STEP _mch_last_access_iter)",
                d.table, entry.score_strategy);
    } else {
      log::info("zch_to_dynamicemb_convert: table '{}': {} scores from {}", d.table, entry.score_strategy,
                r.score_source);
    }
    report.tables.push_back(std::move(entry));
  }

  log::info("zch_to_dynamicemb_convert: {} other tensor(s) copied from {} by name", report.copied.size(),
            source_name);
  if (!report.missing.empty()) {
    log::warning("zch_to_dynamicemb_convert: {} tensor(s) of the target not in {}, kept as initialised: {}",
                 report.missing.size(), source_name, fmt::join(report.missing, ", "));
  }
  if (!report.mismatched.empty()) {
    log::warning("zch_to_dynamicemb_convert: {} tensor(s) of the target differ in shape or dtype from {}, kept as "
                 "initialised: {}",
                 report.mismatched.size(), source_name, fmt::join(report.mismatched, ", "));
  }
  if (!report.unconverted.empty()) {
    log::info("zch_to_dynamicemb_convert: zch table(s) of the source without a dynamic table in the target, not "
              "converted: {}",
              fmt::join(report.unconverted, ", "));
  }
  return report;
}

std::string zch_to_dynamicemb_convert(const ZchToDynamicembOptions& options) {
  namespace fs = std::filesystem;
  if (options.world_size < 1) {
    throw UsageError(fmt::format("--world_size must be at least 1, got {}", options.world_size));
  }
  if (options.world_size > 1) {
    // TorchEasyRec writes per-rank files for W ranks; here a checkpoint's dynamic tables restore on
    // any world size (each rank takes the ids it owns, docs/tzrec-compatibility.md §5.13).
    log::info("zch_to_dynamicemb_convert: the converted checkpoint restores on any world size, {} ranks included",
              options.world_size);
  }
  const std::string out_dir = checkpointing::checkpoint_dir(options.save_dir, 0);
  std::error_code ec;
  if (fs::exists(out_dir, ec)) {
    throw CheckpointError(fmt::format("{} already exists; remove it or choose another --save_dir", out_dir));
  }
  const auto latest = checkpointing::latest_checkpoint(options.source_checkpoint_path);
  if (!latest) {
    throw CheckpointError(fmt::format("--source_checkpoint_path '{}' holds no checkpoint; give a model.ckpt-N "
                                      "directory or a model_dir with model.ckpt-* inside",
                                      options.source_checkpoint_path));
  }
  ConfigOverrides no_overrides;
  no_overrides.require_model_dir = false;
  const protos::EasyRecConfig source_config = load_run_config(options.source_pipeline_config_path, no_overrides);
  const protos::EasyRecConfig target_config = load_run_config(options.target_pipeline_config_path, no_overrides);
  const auto source_features = feature::build_feature_infos(source_config);
  if (std::none_of(source_features.begin(), source_features.end(),
                   [](const feature::FeatureInfo& f) { return !f.zch_path.empty(); })) {
    throw ConfigError(fmt::format("{}: no feature has zch {{ }}; --source_pipeline_config_path must be the config the "
                                  "zch model was trained with",
                                  options.source_pipeline_config_path));
  }
  const auto target_features = feature::build_feature_infos(target_config);
  if (std::none_of(target_features.begin(), target_features.end(),
                   [](const feature::FeatureInfo& f) { return !f.dynamicemb.path.empty(); })) {
    throw ConfigError(fmt::format("{}: no feature has dynamicemb {{ }}; the target config must swap zch {{ }} for "
                                  "dynamicemb {{ }} on the features to convert",
                                  options.target_pipeline_config_path));
  }
  setup_runtime();

  const checkpointing::CheckpointData source = checkpointing::load_checkpoint(latest->first);
  if (!source.config_digest.empty() &&
      source.config_digest != checkpointing::digest_text(config::to_text(source_config))) {
    log::warning("zch_to_dynamicemb_convert: {} was trained with another config than {} (model_dir/pipeline.config "
                 "is the one it ran with); tables are matched by name",
                 latest->first, options.source_pipeline_config_path);
  }
  log::info("zch_to_dynamicemb_convert: converting {} (step {}) into {}", latest->first, source.step, out_dir);
  TrainingSession session(target_config, /*with_optimizers=*/false);
  convert_zch_to_dynamicemb(session, options.target_pipeline_config_path, source.model, latest->first);

  checkpointing::CheckpointData data;
  data.step = 0;
  for (auto& [name, tensor] : session.model_tensors()) data.model.emplace(name, tensor);
  data.config_digest = checkpointing::digest_text(config::to_text(target_config));
  checkpointing::save_checkpoint(options.save_dir, data);
  log::info("zch_to_dynamicemb_convert: wrote {} (model tensors only: the zch tables' optimizer state is not "
            "migrated and no other optimizer state is written, so train_eval --fine_tune_checkpoint {} starts its "
            "optimizers fresh)",
            out_dir, out_dir);
  return out_dir;
}

}  // namespace tzrec::train
