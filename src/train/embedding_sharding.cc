#include "train/embedding_sharding.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "base/error.h"
#include "base/logging.h"
#include "config/feature_util.h"
#include "base/stable_hash.h"
#include "checkpoint/distributed_checkpoint.h"
#include "embedding/fused_row_optimizer.h"
#include "dist/process_group_id_exchange.h"
#include "embedding/sharded_lookup.h"
#include "embedding/zch_sharding.h"
#include "feature/features.h"
#include "models/model.h"
#include "train/optimizer_builder.h"
#include "train/pooling_factors.h"
#include "train/remapped_shard_checkpoint.h"

namespace tzrec::train {
namespace {

using google::protobuf::Message;

// Allowed sharding types of a ParameterConstraints message; empty = no constraint.
std::vector<dist::ShardingType> constraint_types(const protos::ParameterConstraints& c,
                                                 const std::string& path) {
  std::vector<dist::ShardingType> out;
  for (int i = 0; i < c.sharding_types_size(); ++i) {
    const std::string& name = c.sharding_types(i);
    const std::string field = fmt::format("{}.sharding_types[{}]", path, i);
    if (name == "table_column_wise" || name == "grid_shard") {
      throw NotSupportedError(fmt::format("{}: sharding type \"{}\"; use data_parallel, table_wise, "
                                          "row_wise, table_row_wise or column_wise",
                                          field, name));
    }
    out.push_back(dist::parse_sharding_type(name, field));
  }
  for (int i = 0; i < c.compute_kernels_size(); ++i) {
    const std::string& k = c.compute_kernels(i);
    if (k != "fused" && k != "dense") {
      throw NotSupportedError(fmt::format("{}.compute_kernels[{}]: \"{}\" (the CPU engine has the fused "
                                          "kernel only; use \"fused\")",
                                          path, i, k));
    }
  }
  return out;
}

struct FeatureConstraint {
  std::string feature;
  std::string path;
  std::vector<dist::ShardingType> types;
};

// A feature message (id_feature, raw_feature, ...) with its name and config path.
struct FeatureMessage {
  const Message* message;
  std::string name;
  std::string path;
};

// Every feature message of the config, with the sub-features of a grouped sequence_feature as
// "<sequence_name>__<feature_name>".
std::vector<FeatureMessage> feature_messages(const protos::EasyRecConfig& config) {
  std::vector<FeatureMessage> out;
  auto add = [&out](const Message& holder, const std::string& path, const std::string& name_prefix) {
    const auto* oneof = holder.GetDescriptor()->FindOneofByName("feature");
    const auto* set = oneof == nullptr ? nullptr : holder.GetReflection()->GetOneofFieldDescriptor(holder, oneof);
    if (set == nullptr) return;
    const Message& m = holder.GetReflection()->GetMessage(holder, set);
    const auto* name_field = m.GetDescriptor()->FindFieldByName("feature_name");
    if (name_field == nullptr) return;
    out.push_back({&m, name_prefix + m.GetReflection()->GetString(m, name_field), path + "." + set->name()});
  };
  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const protos::FeatureConfig& fc = config.feature_configs(i);
    const std::string path = fmt::format("feature_configs[{}]", i);
    if (fc.has_sequence_feature()) {
      const protos::SequenceFeature& seq = fc.sequence_feature();
      for (int k = 0; k < seq.features_size(); ++k) {
        add(seq.features(k), fmt::format("{}.sequence_feature.features[{}]", path, k), config::grouped_sequence_prefix(seq.sequence_name()));
      }
    } else {
      add(fc, path, "");
    }
  }
  return out;
}

// The embedding_name of a feature (embedding/table_name.h: base_table_name) → the constraint of
// the first feature that sets one on it. A table is looked up by its TableConfig::base_name, so
// its wide twin "{name}_wide", its embedding_name_suffix variants and a sequence group's table
// "sequence.{name}" share the features' constraint.
std::map<std::string, FeatureConstraint> table_constraints(const protos::EasyRecConfig& config) {
  std::map<std::string, FeatureConstraint> out;
  for (const FeatureMessage& f : feature_messages(config)) {
    const Message& m = *f.message;
    const auto* d = m.GetDescriptor();
    const auto* constraints_field = d->FindFieldByName("embedding_constraints");
    if (constraints_field == nullptr || !m.GetReflection()->HasField(m, constraints_field)) continue;
    const std::string path = f.path + ".embedding_constraints";
    const auto& c = static_cast<const protos::ParameterConstraints&>(
        m.GetReflection()->GetMessage(m, constraints_field));
    std::string table;
    if (const auto* e = d->FindFieldByName("embedding_name"); e != nullptr && m.GetReflection()->HasField(m, e)) {
      table = m.GetReflection()->GetString(m, e);
    }
    if (table.empty()) table = f.name + "_emb";
    FeatureConstraint fcons{f.name, path, constraint_types(c, path)};
    std::sort(fcons.types.begin(), fcons.types.end());
    auto it = out.find(table);
    if (it != out.end() && it->second.types != fcons.types) {
      throw ConfigError(fmt::format("{} and {} set different sharding_types for the shared embedding "
                                    "table '{}'; give them the same embedding_constraints",
                                    it->second.path, path, table));
    }
    out.emplace(table, fcons);
  }
  return out;
}

std::vector<dist::ShardingType> intersect(const std::vector<dist::ShardingType>& a,
                                          const std::vector<dist::ShardingType>& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  std::vector<dist::ShardingType> out;
  for (auto t : a) {
    if (std::find(b.begin(), b.end(), t) != b.end()) out.push_back(t);
  }
  return out;
}

// Sparse optimizer state bytes per row: per-element slots ([rows, dim]) and row-wise slots ([rows],
// kept whole by every column block).
std::pair<double, double> state_bytes_per_row(const embedding::FusedOptimizerOptions& optimizer, int64_t dim) {
  const auto layout = embedding::state_layout(optimizer.kind);
  double full = 0, row = 0;
  for (auto w : {layout.momentum1, layout.momentum2}) {
    if (w == embedding::StateWidth::kFull) full += 4.0 * static_cast<double>(dim);
    if (w == embedding::StateWidth::kRow) row += 4.0;
  }
  return {full, row};
}

// A seed for one shard's initial values: the same on every rank for the same (table, shard).
uint64_t shard_seed(const std::string& table, int shard_index) {
  return fnv1a64(table) ^ (static_cast<uint64_t>(shard_index) * kGolden64);
}

}  // namespace

namespace {

// The row blocks of every table of a zero-collision hashed collection in `plan` (row_wise, each
// block of at least 2 rows; ConfigError otherwise).
std::vector<std::vector<int64_t>> zch_row_blocks(const std::string& prefix, const embedding::ZchEmbeddingBagCollection& mc,
                                                 const dist::ShardingPlan& plan) {
  std::vector<std::vector<int64_t>> out;
  for (const embedding::ZchTableConfig& t : mc->zch_table_configs()) {
    const dist::TableSharding& ts = plan.table(prefix + t.table.name);
    if (ts.type != dist::ShardingType::kRowWise) {
      throw ConfigError(fmt::format("the sharding plan shards zero-collision hashed table '{}' {}; it must be "
                                    "row_wise (a plan from FORCE_LOAD_SHARDING_PLAN?)",
                                    ts.table, dist::sharding_type_name(ts.type)));
    }
    std::vector<int64_t> b;
    for (const dist::Shard& shard : ts.shards) b.push_back(shard.row_offset);
    b.push_back(ts.num_embeddings);
    embedding::check_zch_row_blocks(b, t.zch.field_path);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

void attach_remapping_sharding(const embedding::EmbeddingGroupSet& group, const dist::ShardingPlan& plan,
                               std::shared_ptr<dist::ProcessGroup> pg) {
  auto exchange = std::make_shared<dist::ProcessGroupIdExchange>(std::move(pg));
  for (auto& [prefix, mc] : group.zch_collections()) mc->attach_sharded(exchange, zch_row_blocks(prefix, mc, plan));
  for (auto& [prefix, d] : group.dynamic_collections()) {
    for (const embedding::DynamicEmbTableConfig& t : d->dynamic_table_configs()) {
      // Rank r's block is its R + 2 rows (the plan was made for these shapes, so only a forced
      // plan from elsewhere can differ).
      const dist::TableSharding& ts = plan.table(prefix + t.table.name);
      const int64_t block = t.table.num_embeddings / plan.world_size;
      for (size_t r = 0; r < ts.shards.size(); ++r) {
        if (ts.type != dist::ShardingType::kRowWise || ts.shards[r].row_offset != static_cast<int64_t>(r) * block ||
            ts.shards[r].rows != block) {
          throw ConfigError(fmt::format("the sharding plan shards dynamic embedding table '{}' otherwise than in "
                                        "row_wise blocks of {} rows (a plan from FORCE_LOAD_SHARDING_PLAN?)",
                                        ts.table, block));
        }
      }
    }
    d->attach_sharded(exchange);
  }
}

std::vector<embedding::BagConfig> planner_bags(const embedding::EmbeddingGroupSet& group) {
  std::vector<embedding::BagConfig> out;
  for (const auto& c : group.collections()) {
    for (embedding::BagConfig b : c.ebc->bag_configs()) {
      b.table_name = c.prefix + b.table_name;
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::vector<dist::PlannerTable> planner_table_sizes(const embedding::EmbeddingGroupSet& group,
                                                    const embedding::FusedOptimizerOptions& optimizer) {
  std::map<std::string, int> readers;
  for (const embedding::BagConfig& b : planner_bags(group)) ++readers[b.table_name];
  std::vector<dist::PlannerTable> out;
  for (const auto& c : group.collections()) {
    for (const embedding::TableConfig& t : c.ebc->table_configs()) {
      dist::PlannerTable p;
      p.name = c.prefix + t.name;
      p.num_embeddings = t.num_embeddings;
      p.embedding_dim = t.embedding_dim;
      p.bytes_per_value = t.dtype == torch::kFloat16 ? 2 : 4;
      p.trainable = t.trainable;
      const auto [full, row] = state_bytes_per_row(optimizer, t.embedding_dim);
      p.optimizer_bytes_per_row = t.trainable ? full : 0;
      p.optimizer_rowwise_bytes_per_row = t.trainable ? row : 0;
      p.num_features = std::max(1, readers[p.name]);
      p.pooling_factor = static_cast<double>(p.num_features);
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<dist::PlannerTable> planner_tables(const protos::EasyRecConfig& config,
                                               const embedding::EmbeddingGroupSet& group,
                                               const embedding::FusedOptimizerOptions& optimizer) {
  const auto constraints = table_constraints(config);
  std::vector<dist::ShardingType> global;
  if (config.train_config().has_global_embedding_constraints()) {
    global = constraint_types(config.train_config().global_embedding_constraints(),
                              "train_config.global_embedding_constraints");
  }
  std::vector<dist::PlannerTable> out = planner_table_sizes(group, optimizer);
  size_t i = 0;
  for (const auto& c : group.collections()) {
    for (const embedding::TableConfig& t : c.ebc->table_configs()) {
      dist::PlannerTable& p = out[i++];
      // embedding_constraints apply to the features' embedding_name (without the prefix, "_wide" or
      // embedding_name_suffix).
      auto it = constraints.find(t.base_name.empty() ? t.name : t.base_name);
      p.allowed = intersect(it == constraints.end() ? std::vector<dist::ShardingType>() : it->second.types, global);
      if (p.allowed.empty() && (it != constraints.end() && !it->second.types.empty()) && !global.empty()) {
        throw ConfigError(fmt::format("{} and train_config.global_embedding_constraints allow no common sharding "
                                      "type for embedding table '{}'",
                                      it->second.path, p.name));
      }
      if (!c.remapping.empty()) {
        // Zero-collision hashed and dynamic tables are sharded row-wise only: each rank owns the
        // ids of its row block (embedding/zch_sharding.h, dynamic_embedding_bag_collection.h).
        if (!p.allowed.empty() &&
            std::find(p.allowed.begin(), p.allowed.end(), dist::ShardingType::kRowWise) == p.allowed.end()) {
          throw ConfigError(fmt::format("{}: embedding table '{}' has {}, which is sharded row_wise only; add "
                                        "\"row_wise\" to its sharding_types",
                                        it != constraints.end() ? it->second.path
                                                                : std::string("train_config.global_embedding_constraints"),
                                        p.name, c.remapping));
        }
        p.allowed = {dist::ShardingType::kRowWise};
        p.forced_reason = fmt::format("row_wise by rule ({}: each rank owns the ids of its row block)", c.remapping);
      } else if (config.train_config().has_delta_embedding_dump_config()) {
        // A delta embedding dump publishes a row from the rank that holds it whole (TorchEasyRec's
        // dump refuses column-wise sharding): any other type may be chosen.
        const std::vector<dist::ShardingType> whole_rows = {dist::ShardingType::kDataParallel,
                                                            dist::ShardingType::kTableWise, dist::ShardingType::kRowWise,
                                                            dist::ShardingType::kTableRowWise};
        const std::vector<dist::ShardingType> before = p.allowed;
        p.allowed = intersect(before, whole_rows);
        if (p.allowed.empty()) {
          throw ConfigError(fmt::format(
              "{}: embedding table '{}' may only be sharded column_wise, but train_config.delta_embedding_dump_config "
              "needs each row on one rank; allow table_wise, row_wise, table_row_wise or data_parallel",
              it != constraints.end() && !it->second.types.empty() ? it->second.path
                                                                    : std::string("train_config.global_embedding_constraints"),
              p.name));
        }
      }
    }
  }
  return out;
}

void check_tables_fit_one_process(const protos::EasyRecConfig& config, const embedding::EmbeddingGroupSet& group,
                                  const embedding::FusedOptimizerOptions& optimizer) {
  const auto tables = planner_table_sizes(group, optimizer);
  if (tables.empty()) return;
  dist::plan_sharding(tables, dist::topology_from_env(1, 1, std::max<int64_t>(1, config.data_config().batch_size())));
}

dist::ShardingPlan plan_embedding_sharding(const protos::EasyRecConfig& config,
                                           const embedding::EmbeddingGroupSet& group,
                                           const embedding::FusedOptimizerOptions& optimizer,
                                           dist::ProcessGroup& pg,
                                           const std::optional<dist::ShardingPlan>& saved,
                                           const std::map<std::string, double>& pooling_factors) {
  auto tables = planner_tables(config, group, optimizer);
  apply_pooling_factors(pooling_factors, &tables);
  std::string plan_json;
  if (pg.rank() == 0) {
    dist::ShardingPlan plan;
    bool reuse = false;
    if (saved) {
      reuse = saved->world_size == pg.world_size();
      // A dynamic table's rows depend on the world size (W · per-rank rows + 2 per rank).
      const std::set<std::string> dynamic = dynamic_table_names(group);
      for (const auto& t : tables) {
        bool found = false;
        for (const auto& s : saved->tables) {
          if (s.table == t.name) {
            found = (s.num_embeddings == t.num_embeddings || (!reuse && dynamic.count(t.name))) &&
                    s.embedding_dim == t.embedding_dim;
          }
        }
        if (!found) {
          throw CheckpointError(fmt::format(
              "the saved sharding plan has no embedding table '{}' of shape [{}, {}]; the checkpoint was "
              "trained with another config",
              t.name, t.num_embeddings, t.embedding_dim));
        }
      }
      if (!reuse && checkpointing::sharding_plan_forced()) {
        throw ConfigError(fmt::format(
            "FORCE_LOAD_SHARDING_PLAN is set but the saved sharding plan is for {} ranks and this job has "
            "{}; unset it to re-plan (checkpoints reshard), or run with {} ranks",
            saved->world_size, pg.world_size(), saved->world_size));
      }
      if (!reuse) {
        log::info("the saved sharding plan is for {} ranks, this job has {}: planning again (tables are "
                  "resharded when the checkpoint is loaded)",
                  saved->world_size, pg.world_size());
      }
    }
    if (reuse) {
      plan = *saved;
    } else {
      const auto topology = dist::topology_from_env(pg.world_size(), pg.env().local_world_size,
                                                    config.data_config().batch_size());
      plan = dist::plan_sharding(tables, topology);
      log::info("embedding sharding plan:\n{}", dist::format_plan(plan, tables, topology));
    }
    plan_json = plan.to_json().dump();
  }
  plan_json = pg.broadcast_string(plan_json, 0, "sharding plan");
  return dist::ShardingPlan::from_json(nlohmann::json::parse(plan_json), "the sharding plan of rank 0");
}

std::unique_ptr<ShardedTables> attach_sharded_tables(const embedding::EmbeddingGroupSet& group,
                                                     const embedding::FusedOptimizerOptions& optimizer,
                                                     const dist::ShardingPlan& plan,
                                                     std::shared_ptr<dist::ProcessGroup> pg, bool with_optimizer) {
  std::vector<std::shared_ptr<dist::ShardedEmbeddingBags>> members;
  for (auto& c : group.collections()) {
    const std::vector<embedding::TableConfig>& tables = c.ebc->table_configs();
    if (tables.empty()) continue;  // e.g. no DEEP / WIDE table: the collection looks nothing up
    // This collection's part of the plan; its tables keep their prefixed names.
    dist::ShardingPlan part;
    part.world_size = plan.world_size;
    std::vector<dist::ShardedTableSpec> specs;
    std::map<std::string, const embedding::TableConfig*> by_name;
    for (const embedding::TableConfig& t : tables) {
      const std::string name = c.prefix + t.name;
      specs.push_back({name, t.num_embeddings, t.embedding_dim, with_optimizer && t.trainable, t.dtype, t.rows_on_demand});
      by_name[name] = &t;
      part.tables.push_back(plan.table(name));
    }
    std::vector<embedding::FusedFeatureSpec> features;
    for (const embedding::BagConfig& b : c.ebc->bag_configs()) {
      features.push_back({b.feature_name, c.prefix + b.table_name, b.pooling});
    }
    auto sharded = std::make_shared<dist::ShardedEmbeddingBags>(std::move(specs), std::move(features), optimizer,
                                                                std::move(part), pg);
    // Initial values from a seed per (table, shard) — the same on every rank for a replicated
    // table — with the global generator's state restored afterwards (not for rows_on_demand
    // tables, whose rows are drawn when they are handed out).
    for (const auto& ls : sharded->local_shards()) {
      if (by_name.at(ls.table)->rows_on_demand) continue;
      const dist::TableSharding& ts = plan.table(ls.table);
      const int seed_index = ts.type == dist::ShardingType::kDataParallel ? 0 : ls.shard_index;
      torch::Tensor w = ls.weight;
      auto gen = at::detail::getDefaultCPUGenerator();
      const torch::Tensor saved_state = gen.get_state();
      gen.set_current_seed(shard_seed(ls.table, seed_index));
      embedding::init_table_weight(*by_name.at(ls.table), w);
      gen.set_state(saved_state);
    }
    c.ebc->attach_sharded(sharded);
    members.push_back(std::move(sharded));
  }
  attach_remapping_sharding(group, plan, pg);
  return std::make_unique<ShardedTables>(plan, std::move(members));
}

JobPlan plan_job(const protos::EasyRecConfig& config, int world_size, int local_world_size, bool measure) {
  const auto features = feature::build_feature_infos(config);
  std::shared_ptr<models::Model> model;
  {
    embedding::DeferTableAllocation defer(world_size);  // the plan needs table shapes only
    model = models::create_model(config, features);
  }
  const embedding::EmbeddingGroupSet& group = model->embeddings();
  JobPlan out;
  out.tables = planner_tables(config, group, sparse_optimizer_options(config.train_config().sparse_optimizer()));
  if (measure) apply_pooling_factors(measure_pooling_factors(config, planner_bags(group), nullptr), &out.tables);
  out.topology = dist::topology_from_env(world_size, local_world_size, config.data_config().batch_size());
  out.plan = dist::plan_sharding(out.tables, out.topology);
  for (const auto& [prefix, mc] : group.zch_collections()) zch_row_blocks(prefix, mc, out.plan);
  return out;
}

}  // namespace tzrec::train
