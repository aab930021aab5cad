// Checkpoints of a multi-rank job (layout of train/checkpoint.h plus sharded tables):
//
//   model_dir/model.ckpt-<step>/
//     model.safetensors, optimizer.safetensors   rank 0: dense parameters and their optimizer
//                                                state (identical on every rank)
//     model-RRRRRR-of-WWWWWW.safetensors         rank R: its embedding table shards
//     optimizer-RRRRRR-of-WWWWWW.safetensors     rank R: the sparse optimizer state of its shards
//     plan.json                                  the sharding plan (ShardingPlan::to_json)
//     manifest.json, dataloader_state.json       rank 0 ("world_size": W in the manifest)
//
// Block files are train/sharded_checkpoint.h's: a restore on any world size reads the blocks each
// rank now needs, and a single process assembles whole tables (load_checkpoint).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/process_group.h"
#include "dist/sharding_plan.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/sharded_checkpoint.h"

namespace tzrec::checkpointing {

// This rank's shard blocks: table weights ("model" files) and sparse optimizer state
// ("optimizer" files).
struct ShardBlocks {
  std::vector<TensorBlock> model;
  std::vector<TensorBlock> optimizer;
};

// Collective: every rank calls it for the same step. Everything is written into one staging
// directory, which rank 0 moves into place once all ranks have written (atomically, as
// save_checkpoint). A rank that fails makes the others fail in the next collective.
void save_distributed_checkpoint(const std::string& model_dir, const CheckpointData& data,
                                 const ShardBlocks& blocks, const nlohmann::json& plan,
                                 dist::ProcessGroup& pg);

// The plan saved with a checkpoint (plan.json), nullopt when it has none (single-process
// checkpoints). FORCE_LOAD_SHARDING_PLAN=<path to a plan.json or a checkpoint directory> takes
// that plan instead. A corrupt file → CheckpointError naming it.
std::optional<dist::ShardingPlan> load_sharding_plan(const std::string& ckpt_dir);

// FORCE_LOAD_SHARDING_PLAN is set (1 / true / a path): the saved plan must be used as it is; a
// plan for another world size is an error instead of a re-plan.
bool sharding_plan_forced();

}  // namespace tzrec::checkpointing
