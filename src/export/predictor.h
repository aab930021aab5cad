// `tzrec predict` (docs/tzrec-compatibility.md §3.4): model outputs for every row of an input, written as
// <predict_output_path>/part-<RANK>.parquet|csv (data/prediction_writer.h).
//
// Two sources of the model, as in TorchEasyRec:
//   --scripted_model_path DIR: an export directory of `tzrec export` (export/export_dir.h);
//   --pipeline_config_path (takes precedence): the config's model restored from
//     --checkpoint_path (default: the latest checkpoint of model_dir), model weights only.
// Each process predicts alone: under torchrun every rank holds the whole model, reads its share of
// the input (RANK / WORLD_SIZE, as training shards it) and writes its own part file.
//
// Columns: the selected model outputs (--output_columns, default all, sorted by name; float32,
// [B, k] outputs as list<float>, [B, K, D] ones as list<float> of K·D values, row-major; int64
// outputs — the SID models' codes — as int64 / list<int64>), then the
// reserved input columns (--reserved_columns, names or
// ALL_COLUMNS / ALL_EFFECTIVE_COLUMNS), then with --debug_level > 0 the `__features__` column: each
// row's parsed features as text (feature/parsed_features_text.h). Labels are not needed in the input.
#pragma once

#include <cstdint>
#include <string>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::exporting {

struct PredictOptions {
  std::string scripted_model_path;
  std::string pipeline_config_path;
  std::string checkpoint_path;
  std::string predict_input_path;   // required
  std::string predict_output_path;  // required
  std::string reserved_columns;     // comma list
  std::string output_columns;       // comma list; empty: all outputs
  int64_t batch_size = 0;           // > 0: sets data_config.batch_size and eval_batch_size
  int predict_threads = 0;
  bool is_profiling = false;        // trace of batches 2..11 under <predict_output_path>/predict_trace
  int debug_level = 0;              // > 0: the __features__ column
  std::string dataset_type;         // DatasetType name; empty: data_config.dataset_type
  std::string writer_type;          // empty: from the dataset type (ParquetDataset → ParquetWriter)
  std::string edit_config_json;
  int64_t predict_steps = 0;        // > 0: stop after this many batches
};

struct PredictSummary {
  int64_t batches = 0;
  int64_t rows = 0;
  std::string output_file;  // empty when this rank had no rows
};

// Errors: UsageError for missing / contradictory flags, unknown output columns, dataset or writer
// types; the loader's DataErrors; the model-loading errors of export/exported_model.h or
// train/checkpoint.h; NotSupportedError for writers other than Parquet / CSV.
PredictSummary predict(const PredictOptions& options);

// --batch_size (> 0: data_config.batch_size and eval_batch_size; < 0: UsageError) and
// --dataset_type (a DatasetType name, empty: keep) applied to `config`; shared by predict and
// tdm_retrieval.
void apply_data_flags(int64_t batch_size, const std::string& dataset_type, protos::EasyRecConfig& config);

// --debug_level: UsageError when negative; shared by predict and tdm_retrieval.
void check_debug_level(int debug_level);

}  // namespace tzrec::exporting
