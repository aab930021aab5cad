// `tzrec gen_data --pipeline_config_path P --output_dir D`: synthetic data for any pipeline
// config. Writes D/train.parquet and D/eval.parquet with every column the config reads
// (column_plan.h; values per row_generator.h, labels per hidden_model.h; generative-
// recommendation configs such as DlrmHSTU's get users with histories, candidates and
// per-candidate labels per generative_rows.h), the tables of its negative sampler
// (sampler_tables.h), and D/pipeline.config pointing at them (output_config.h). The config is
// parsed without the engine's validation, so configs with features or models this build does not
// run still get their data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datagen/column_plan.h"

namespace tzrec::datagen {

struct GenDataOptions {
  std::string pipeline_config_path;
  std::string output_dir;
  int64_t num_rows = 200000;
  int64_t num_eval_rows = 50000;
  uint64_t seed = 2024;
  int64_t row_group_rows = 65536;
  // Generative-recommendation configs (generative_rows.h): the longest history per channel and
  // the most candidates per row, each capped by the sequence's sequence_length.
  int max_history_length = 256;
  int max_candidates = 8;
};

struct GenDataResult {
  std::string train_path;
  std::string eval_path;    // empty when num_eval_rows is 0
  std::string config_path;  // D/pipeline.config
  std::vector<std::string> table_paths;
  ColumnPlan plan;
};

// Throws ConfigError (config does not parse, a column cannot be inferred), NotSupportedError,
// UsageError (bad counts, output_dir not writable) or IoError, each one line naming the field
// path or file.
GenDataResult generate_data(const GenDataOptions& options);

}  // namespace tzrec::datagen
