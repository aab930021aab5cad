#include "train/dynamicemb_init_ckpt.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/descriptor.h>

#include "base/error.h"
#include "base/logging.h"
#include "checkpoint/checkpoint.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "data/input_files.h"
#include "embedding/table_name.h"
#include "feature/features.h"
#include "train/dynamicemb_init_table.h"
#include "train/model_dynamic_tables.h"
#include "train/remapped_shard_checkpoint.h"
#include "train/run_config.h"

namespace tzrec::train {
namespace dynamicemb_init_ckpt_detail {

namespace pb = google::protobuf;

// The init_table of feature message `m` at `path`, when its dynamicemb sets one.
void add_init_table(const pb::Message& m, const std::string& path, std::map<std::string, std::string>* out) {
  const pb::FieldDescriptor* field = m.GetDescriptor()->FindFieldByName("dynamicemb");
  if (field == nullptr || !m.GetReflection()->HasField(m, field)) return;
  const auto& d = static_cast<const protos::DynamicEmbedding&>(m.GetReflection()->GetMessage(m, field));
  if (d.has_init_table()) (*out)[path + ".dynamicemb"] = d.init_table();
}

// One table to fill, and the init table it is filled from.
struct InitTarget {
  ModelDynamicTable table;
  std::string init_table;  // the path
  std::string field;       // the config path of init_table
  std::string feature;
};

int default_workers(const std::string& path) {
  const auto files = static_cast<int>(data::expand_input_path(path).size());
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min(files, cores));
}

}  // namespace dynamicemb_init_ckpt_detail

std::map<std::string, std::string> dynamicemb_init_tables(const protos::EasyRecConfig& config) {
  using dynamicemb_init_ckpt_detail::add_init_table;
  std::map<std::string, std::string> out;
  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const protos::FeatureConfig& f = config.feature_configs(i);
    const std::string path = fmt::format("feature_configs[{}].{}", i, config::feature_type_name(f));
    if (f.has_sequence_feature()) {
      const auto* oneof = protos::SeqFeatureConfig::descriptor()->FindOneofByName("feature");
      for (int j = 0; j < f.sequence_feature().features_size(); ++j) {
        const protos::SeqFeatureConfig& s = f.sequence_feature().features(j);
        const auto* field = s.GetReflection()->GetOneofFieldDescriptor(s, oneof);
        if (field == nullptr) continue;
        add_init_table(s.GetReflection()->GetMessage(s, field), fmt::format("{}.features[{}].{}", path, j, field->name()),
                       &out);
      }
    } else if (const google::protobuf::Message* m = config::feature_message(f)) {
      add_init_table(*m, path, &out);
    }
  }
  return out;
}

std::string create_dynamicemb_init_ckpt(const DynamicembInitCkptOptions& options) {
  using namespace dynamicemb_init_ckpt_detail;
  namespace fs = std::filesystem;
  if (options.world_size < 1) {
    throw UsageError(fmt::format("--world_size must be at least 1, got {}", options.world_size));
  }
  if (options.reader_worker_num < 0) {
    throw UsageError(fmt::format("--reader_worker_num must be at least 0 (0: one per file), got {}",
                                 options.reader_worker_num));
  }
  if (options.separator.empty()) throw UsageError("--separator must not be empty");
  const std::string out_dir = checkpointing::checkpoint_dir(options.save_dir, 0);
  std::error_code ec;
  if (fs::exists(out_dir, ec)) {
    throw CheckpointError(fmt::format("{} already exists; remove it or choose another --save_dir", out_dir));
  }
  ConfigOverrides no_overrides;
  no_overrides.require_model_dir = false;
  const protos::EasyRecConfig config = load_run_config(options.pipeline_config_path, no_overrides);
  const std::map<std::string, std::string> init_tables = dynamicemb_init_tables(config);
  if (init_tables.empty()) {
    throw ConfigError(fmt::format("{}: no feature's dynamicemb {{ }} sets init_table; give the features to "
                                  "initialise dynamicemb {{ init_table: \"<csv or parquet path>\" }}",
                                  options.pipeline_config_path));
  }
  for (const auto& [path, table] : init_tables) {
    if (table.empty()) {
      throw ConfigError(fmt::format("{}.init_table is empty; give the path of a CSV or Parquet table of ids and "
                                    "embeddings, or leave init_table out",
                                    path));
    }
  }
  const bool hashed_ids = config.data_config().fg_mode() != protos::FG_NONE;

  // The features with an init table, by table (embedding_name); one init table per table.
  struct TableInit {
    std::string init_table, field, feature;
    bool filled = false;
  };
  std::map<std::string, TableInit> by_table;
  for (const feature::FeatureInfo& info : feature::build_feature_infos(config)) {
    auto it = init_tables.find(info.dynamicemb.path);
    if (info.dynamicemb.path.empty() || it == init_tables.end()) continue;
    const std::string field = it->first + ".init_table";
    auto [entry, added] = by_table.emplace(info.embedding_name, TableInit{it->second, field, info.name, false});
    if (!added && entry->second.init_table != it->second) {
      throw ConfigError(fmt::format("{}: features '{}' and '{}' share embedding table '{}' but name different init "
                                    "tables ('{}' at {}); give both the same init_table, or set it on one of them",
                                    field, entry->second.feature, info.name, info.embedding_name,
                                    entry->second.init_table, entry->second.field));
    }
  }
  // A WIDE group's twin of a table: "<table>_wide[_<suffix>]" (embedding/table_name.h).
  std::set<std::string> wide_suffixes;
  for (const auto& g : config.model_config().feature_groups()) {
    if (g.group_type() == protos::WIDE) wide_suffixes.insert(g.embedding_name_suffix());
  }
  const auto is_wide_twin = [&](const ModelDynamicTable& t) {
    embedding::FeatureSpec spec;
    spec.embedding_name = t.base_name;
    return std::any_of(wide_suffixes.begin(), wide_suffixes.end(), [&](const std::string& suffix) {
      return embedding::group_table_name(spec, /*wide=*/true, suffix) == t.table;
    });
  };

  setup_runtime();
  if (options.world_size > 1) {
    log::info("create_dynamicemb_init_ckpt: the checkpoint restores on any world size, {} ranks included",
              options.world_size);
  }
  TrainingSession session(config, /*with_optimizers=*/false);
  std::vector<InitTarget> targets;
  for (ModelDynamicTable& t : model_dynamic_tables(session)) {
    auto it = by_table.find(t.base_name);
    if (it == by_table.end() || is_wide_twin(t)) continue;
    it->second.filled = true;
    targets.push_back({t, it->second.init_table, it->second.field, it->second.feature});
  }
  for (const auto& [name, init] : by_table) {
    if (!init.filled) {
      throw ConfigError(fmt::format("{}: feature '{}' has no dynamic table to initialise: it is in no DEEP or "
                                    "SEQUENCE feature group (WIDE groups' tables, wide_embedding_dim wide, are not "
                                    "initialised from init tables)",
                                    init.field, init.feature));
    }
  }

  // Each init table is read once, for every table it fills.
  std::map<std::string, InitTableRows> read;
  std::vector<std::string> written;
  std::map<std::string, torch::Tensor> live;  // the model's tensors by state-dict name
  for (auto& [name, tensor] : session.model_tensors()) live.emplace(name, tensor);
  for (InitTarget& t : targets) {
    auto rows = read.find(t.init_table);
    if (rows == read.end()) {
      InitTableOptions o;
      o.path = t.init_table;
      o.format = data::table_format(options.reader_type, t.init_table, "create_dynamicemb_init_ckpt");
      o.separator = options.separator;
      o.embedding_dim = t.table.embedding_dim;
      o.hashed_ids = hashed_ids;
      o.workers = options.reader_worker_num > 0 ? options.reader_worker_num : default_workers(t.init_table);
      o.owner = fmt::format("init table of '{}' ({})", t.table.base_name, t.field);
      log::info("create_dynamicemb_init_ckpt: reading {} with {} worker(s)", t.init_table, o.workers);
      rows = read.emplace(t.init_table, read_init_table(o)).first;
    }
    const InitTableRows& r = rows->second;
    if (r.values.size(1) != t.table.embedding_dim) {
      throw ConfigError(fmt::format("{}: table '{}' ({}) has embedding_dim {}, but its init table '{}' was read for "
                                    "embedding_dim {}; give the tables sharing an init table one embedding_dim",
                                    t.field, t.table.table, t.table.group, t.table.embedding_dim, t.init_table,
                                    r.values.size(1)));
    }
    embedding::DynamicTableState state;
    state.keys = r.ids;
    state.rows.resize(r.ids.size());
    std::iota(state.rows.begin(), state.rows.end(), int64_t{0});
    state.scores.assign(r.ids.size(), 0);
    auto weight = live.find(t.table.weight);
    TORCH_CHECK(weight != live.end(), "create_dynamicemb_init_ckpt: the model has no tensor ", t.table.weight);
    const embedding::DynamicTableLoadResult loaded = load_dynamic_table_rows(*t.table.index, state, r.values,
                                                                             weight->second);
    const auto kept = static_cast<int64_t>(r.ids.size()) - loaded.dropped;
    const std::string line = fmt::format(
        "create_dynamicemb_init_ckpt: {} table '{}': {} id(s) in {} (columns '{}', '{}'), {} loaded (max capacity {}), "
        "{} dropped",
        t.table.group, t.table.table, r.ids.size(), t.init_table, r.id_column, r.embedding_column, kept,
        t.table.index->max_capacity(), loaded.dropped);
    if (loaded.dropped > 0) {
      log::warning("{} (the table cannot hold every id: with equal scores the later rows of each full bucket stay)",
                   line);
    } else {
      log::info("{}", line);
    }
    written.push_back(t.table.weight);
  }

  // The filled tables only, each cut to its rows in use (embedding/dynamic_checkpoint_layout.h).
  checkpointing::CheckpointData data;
  data.step = 0;
  for (auto& [name, tensor] : session.model_tensors()) data.model.emplace(name, tensor);
  const DynamicRowsInUse rows = dynamic_rows_in_use(session.model(), session.model().embeddings(), nullptr);
  add_dynamic_layout_tensors(rows, data.model);
  cut_dynamic_tables_to_rows_in_use(session.model().embeddings(), rows, data.model, data.optimizer);
  for (auto it = data.model.begin(); it != data.model.end();) {
    const bool keep = std::any_of(targets.begin(), targets.end(), [&](const InitTarget& t) {
      return it->first == t.table.weight || it->first.rfind(t.table.state_prefix, 0) == 0;
    });
    it = keep ? std::next(it) : data.model.erase(it);
  }
  data.config_digest = checkpointing::digest_text(config::to_text(config));
  checkpointing::save_checkpoint(options.save_dir, data);
  log::info("create_dynamicemb_init_ckpt: wrote {} ({} table(s): {}); train with train_eval --fine_tune_checkpoint "
            "{}, which loads these tables and initialises every other parameter as usual",
            out_dir, written.size(), fmt::join(written, ", "), out_dir);
  return out_dir;
}

}  // namespace tzrec::train
