// The embedding tables of a distributed job: planner inputs from the pipeline config, the plan
// (planned, or the one saved with a checkpoint), and the model's collection switched to sharded
// tables that hold only this rank's shards; and the planner's memory rule applied to a
// single-process job (check_tables_fit_one_process).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dist/planner.h"
#include "dist/process_group.h"
#include "dist/sharded_embedding_bags.h"
#include "embedding/embedding_group_set.h"
#include "feature/feature_info.h"
#include "models/model.h"
#include "train/sharded_tables.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

// One PlannerTable per table of `group` (every collection, named as in EmbeddingGroupSet::tables();
// built under embedding::DeferTableAllocation): sizes, fp32
// values, the optimizer state bytes per row of `optimizer`, the number of features reading it,
// a pooling factor estimated as 1 id per feature reading it (apply_pooling_factors in
// train/pooling_factors.h replaces it by measured values), and the allowed sharding types from the features' embedding_constraints intersected
// with train_config.global_embedding_constraints. A constraint naming an unknown or unsupported
// sharding type (table_column_wise, grid_shard) → ConfigError / NotSupportedError with the field
// path; features of one table with different constraints → ConfigError naming both.
std::vector<dist::PlannerTable> planner_tables(const protos::EasyRecConfig& config,
                                               const embedding::EmbeddingGroupSet& group,
                                               const embedding::FusedOptimizerOptions& optimizer);

// planner_tables without the sharding constraints (every sharding type allowed): the sizes and
// optimizer state of the tables, which is all the memory rule needs.
std::vector<dist::PlannerTable> planner_table_sizes(const embedding::EmbeddingGroupSet& group,
                                                    const embedding::FusedOptimizerOptions& optimizer);

// The memory rule of a single-process job, the planner's for one rank (dist::plan_sharding with
// world_size 1: the weights and `optimizer` state of every table of `group` within MemTotal minus
// STORAGE_RESERVE_PERCENT, dist/planner.h): a job whose tables do not fit is refused before they
// are allocated, with the planner's ConfigError "embedding table '<t>' needs N bytes ... ; add ranks
// ...", instead of being killed for memory. `group` is built under DeferTableAllocation.
// TrainingSession applies it before a single-process session allocates its tables (train_eval,
// eval, export, predict) and in check_construction.
void check_tables_fit_one_process(const protos::EasyRecConfig& config, const embedding::EmbeddingGroupSet& group,
                                  const embedding::FusedOptimizerOptions& optimizer);

// The bags of every collection of `group`, their table names as in tables() (for
// measure_pooling_factors).
std::vector<embedding::BagConfig> planner_bags(const embedding::EmbeddingGroupSet& group);

// The plan for this job: `saved` when given (a checkpoint's plan, checked against the tables and
// the world size — a plan for another world size is re-planned with a log line, since checkpoints
// reshard), otherwise planned with `pooling_factors` (table → measured ids per sample, see
// measure_pooling_factors; tables not in it keep the estimate). Rank 0 plans and broadcasts, so
// every rank runs the same plan.
dist::ShardingPlan plan_embedding_sharding(const protos::EasyRecConfig& config,
                                           const embedding::EmbeddingGroupSet& group,
                                           const embedding::FusedOptimizerOptions& optimizer,
                                           dist::ProcessGroup& pg,
                                           const std::optional<dist::ShardingPlan>& saved,
                                           const std::map<std::string, double>& pooling_factors = {});

// The plan of a job of `world_size` ranks, `local_world_size` per node (`tzrec plan`,
// `tzrec check_config --world_size`): the tables of the config's model, built here without
// allocating them, with pooling factors measured on train_input_path when `measure`.
struct JobPlan {
  std::vector<dist::PlannerTable> tables;
  dist::PlannerTopology topology;
  dist::ShardingPlan plan;
};
JobPlan plan_job(const protos::EasyRecConfig& config, int world_size, int local_world_size, bool measure);

// Gives every zero-collision hashed and dynamic collection of `group` its row blocks from `plan`
// (row_wise; ConfigError otherwise) and the id exchange over `pg` (embedding/zch_sharding.h,
// dynamic_embedding_bag_collection.h). Called by attach_sharded_tables.
void attach_remapping_sharding(const embedding::EmbeddingGroupSet& group, const dist::ShardingPlan& plan,
                               std::shared_ptr<dist::ProcessGroup> pg);

// Builds this rank's shards for `plan`, initialises them with each table's init_fn (a replicated
// table identically on every rank; other shards from a seed of table and shard, so runs are
// reproducible), and attaches them to each collection of `group` (and the zero-collision hashed
// collections their row blocks: attach_remapping_sharding). with_optimizer=false (evaluation) freezes
// them.

std::unique_ptr<ShardedTables> attach_sharded_tables(const embedding::EmbeddingGroupSet& group,
                                                     const embedding::FusedOptimizerOptions& optimizer,
                                                     const dist::ShardingPlan& plan,
                                                     std::shared_ptr<dist::ProcessGroup> pg, bool with_optimizer);

}  // namespace tzrec::train
