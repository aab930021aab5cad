// `tzrec zch_to_dynamicemb_convert`: a checkpoint of a model with zero-collision hashed tables
// (`zch`, docs/tzrec-compatibility.md §5.12) turned into a checkpoint of the same model with
// dynamic embedding tables (`dynamicemb`, §5.13) — TorchEasyRec's
// tzrec.tools.dynamicemb.zch_to_dynamicemb_convert. The target config swaps `zch { }` for
// `dynamicemb { }` on some features; the result is `{save_dir}/model.ckpt-0/`, a regular
// checkpoint of the target model for `train_eval --fine_tune_checkpoint`.
//
// Tables are matched by their place in the model and their name (TorchEasyRec's (group, table)
// key): the zch table `<group>.mc_ebc` / `<group>.mc_ec_dict.<dim>` table T of the source and the
// dynamic table `<group>.dynamicemb_ebc` / `<group>.dynamicemb_ec_dict.<dim>` table T of the
// target, both with the same embedding_dim. What is migrated per table:
// - the ids the zch table holds: its sorted raw ids other than the empty places (INT64_MAX) and the
//   sentinel (the last place, whose row is shared by every id not in the table);
// - each id's embedding row (`_mch_remapped_ids_mapping` says which row of the zch weight);
// - its score where the target's score_strategy has a counterpart in the zch state: LFU ←
//   `_mch_counts` (lfu / distance_lfu sources), STEP ← `_mch_last_access_iter` (lru /
//   distance_lfu); otherwise every score starts at 0 (TorchEasyRec writes no scores then and
//   dynamicemb starts them afresh);
// - the table's step: the zch module's `_current_iter_tensor`, so STEP scores and later steps stay
//   comparable.
// The entries go through DynamicTable::load with DynamicRowMode::kCompact: rows 0, 1, ... in index
// order; a table whose max capacity (or bucket layout) cannot hold every id keeps what load keeps
// (the highest scores of each bucket) and the rest are dropped. The admission counter starts empty.
// Every other tensor of the target is copied from the source checkpoint where the source has it
// under the same state-dict name with the same shape and dtype, and keeps its initial value
// otherwise. The zch tables' optimizer state is not migrated, and here no optimizer state is
// written at all: a fine-tune from the result starts its optimizers fresh (TorchEasyRec copies the
// other parameters' optimizer state along).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/dynamic_table.h"
#include "train/training_session.h"

namespace tzrec::train {

// One zero-collision hashed table's state as a checkpoint holds it (TorchRec's buffer names,
// docs/tzrec-compatibility.md §5.12), S = zch_size.
struct ZchTableState {
  torch::Tensor sorted_raw_ids;        // [S] int64 `_mch_sorted_raw_ids`: ascending, INT64_MAX = empty
  torch::Tensor remapped_ids_mapping;  // [S] int64 `_mch_remapped_ids_mapping`: each place's row
  torch::Tensor counts;                // [S] int64 `_mch_counts` (lfu, distance_lfu); undefined: none
  torch::Tensor last_access_iter;      // [S] int64 `_mch_last_access_iter` (lru, distance_lfu); or none
  torch::Tensor weight;                // [S, dim] the table's embedding rows
};

// What convert_zch_table did with one table.
struct ZchTableConversion {
  int64_t held = 0;     // ids the zch table holds
  int64_t loaded = 0;   // of them, ids the dynamic table kept
  int64_t dropped = 0;  // ids that did not fit the dynamic table
  // The zch buffer the scores came from ("_mch_counts", "_mch_last_access_iter"); "" when they
  // start at 0.
  std::string score_source;
};

// Loads the ids `source` holds into `table` (DynamicTable::load, kCompact, an empty admission
// counter) and copies each kept id's row of source.weight into `weight` [R + 2, dim] at the row
// the table gave it. Scores as the file comment says for table.options().score_strategy. Throws
// CheckpointError naming `where` for tensors of the wrong dtype or shape (sorted ids and rows of
// different lengths, a weight of another width than `weight`, a row outside source.weight), and
// DataError from DynamicTable::load (an id given twice, a negative score).
ZchTableConversion convert_zch_table(const ZchTableState& source, embedding::DynamicTable& table,
                                     torch::Tensor weight, const std::string& where);

// One converted table, for the report.
struct ZchToDynamicTable {
  std::string group;           // "embedding_group.emb_impls.__BASE__", "...seq_emb_impls.__BASE__"
  std::string table;           // the table's name
  std::string source_weight;   // state-dict names of the weights
  std::string target_weight;
  std::string score_strategy;  // the target's ("LFU", "STEP", ...)
  int64_t max_capacity = 0;    // the dynamic table's
  int64_t step = 0;            // the step the dynamic table continues from
  ZchTableConversion result;
};

struct ZchToDynamicembReport {
  std::vector<ZchToDynamicTable> tables;
  std::vector<std::string> copied;      // target tensors copied from the source as they are
  std::vector<std::string> missing;     // target tensors absent from the source: kept as built
  std::vector<std::string> mismatched;  // in the source with another shape / dtype: kept as built
  std::vector<std::string> unconverted;  // source zch tables ("<group>/<table>") with no dynamic twin
};

// Fills `target`'s model (single process, built from the target config) from `source`, the model
// tensors of a checkpoint (`source_name` names it in messages), as the file comment says, then
// rebuilds the zch and dynamic tables' indexes; target.model_tensors() then holds the converted
// state. Errors, each one line: CheckpointError when `source` holds no zch table; ConfigError
// naming `target_config` when the target has no dynamic table, or has one without a zch table of
// the same name in the same group of the source (the source's zch tables are listed), or of
// another embedding_dim than its zch table.
ZchToDynamicembReport convert_zch_to_dynamicemb(TrainingSession& target, const std::string& target_config,
                                                const std::map<std::string, torch::Tensor>& source,
                                                const std::string& source_name);

struct ZchToDynamicembOptions {
  std::string source_checkpoint_path;       // a model.ckpt-N dir, or a model_dir (its latest)
  std::string source_pipeline_config_path;  // the zch config
  std::string target_pipeline_config_path;  // the dynamicemb config
  std::string save_dir;                     // writes {save_dir}/model.ckpt-0/
  int world_size = 1;                       // ranks of the job that loads it (>= 1; any restores it)
};

// The command: checks the options (UsageError for world_size < 1, CheckpointError
// when {save_dir}/model.ckpt-0 exists or no checkpoint is at the source path, ConfigError for a
// config that does not load or validate, a source config without any zch feature and a target
// config without any dynamicemb feature), builds the target model on one process without
// optimizers, converts (convert_zch_to_dynamicemb, one log line per table and one per kind of
// tensor left as built) and saves the target's model tensors as checkpoint step 0 with no
// optimizer state. Returns the checkpoint directory.
std::string zch_to_dynamicemb_convert(const ZchToDynamicembOptions& options);

}  // namespace tzrec::train
