// `tzrec create_dynamicemb_init_ckpt`: TorchEasyRec's tools/dynamicemb/create_dynamicemb_init_ckpt
// (docs/tzrec-compatibility.md §5.13). Features whose `dynamicemb` names an `init_table` get
// their dynamic tables filled from it (dynamicemb_init_table.h: ids and embeddings), and the
// result is written as `{save_dir}/model.ckpt-0/`, a checkpoint holding only those tables, for
// `train_eval --fine_tune_checkpoint {save_dir}/model.ckpt-0` — which loads them and leaves every
// other parameter as the training run initialises it (TorchEasyRec's init checkpoint has
// load_model false for the same reason). Training itself does not read init_table.
//
// Per table (a feature's table in each DEEP / SEQUENCE group and nested sequence group, also one
// made distinct by an embedding_name_suffix; not a WIDE group's twin, whose width is
// wide_embedding_dim — TorchEasyRec initialises no WIDE table either): the init table's ids go
// into the table with score 0 and the table's step 0, through DynamicTable::load (kCompact: rows
// 0, 1, ...), and each kept id's row gets its embedding. A table that cannot hold every id (more
// ids than max_capacity, or a full bucket) keeps what load keeps — equal scores, so the later
// rows of the init table — and the number dropped is logged. Rows are handed out per table, so
// the checkpoint holds a one-process table; `--fine_tune_checkpoint` restores it on any world size,
// each rank taking the ids it owns (§5.13 "Restoring on any world size").
#pragma once

#include <map>
#include <string>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

// The init_table of every feature that sets one: config path of its DynamicEmbedding message
// ("feature_configs[2].id_feature.dynamicemb", "feature_configs[4].sequence_feature.features[0]
// .id_feature.dynamicemb") → the path.
std::map<std::string, std::string> dynamicemb_init_tables(const protos::EasyRecConfig& config);

struct DynamicembInitCkptOptions {
  std::string pipeline_config_path;
  std::string save_dir = "./";  // writes {save_dir}/model.ckpt-0/
  int world_size = 1;           // ranks of the job that loads it (>= 1; any restores it)
  int reader_worker_num = 0;    // reader threads per init table; 0: one per file, at most the cores
  std::string reader_type;      // CsvReader | ParquetReader; empty: from the file names
  std::string separator = ",";  // between the numbers of a text embedding
};

// The command. Errors, each one line: UsageError for world_size < 1, reader_worker_num < 0 or an
// empty separator; CheckpointError when {save_dir}/model.ckpt-0 exists; ConfigError for a config
// that does not load or validate, without any init_table, with two features of one table naming
// different init tables, or with an init_table feature that has no table to fill (in no group, or
// only in WIDE groups); DataError from read_init_table. Returns the checkpoint directory.
std::string create_dynamicemb_init_ckpt(const DynamicembInitCkptOptions& options);

}  // namespace tzrec::train
