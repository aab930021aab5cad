// `tzrec create_online_infer_data` (TorchEasyRec's tools/create_online_infer_data, the same flags):
// a request and the answers an online service must give for it, to check a deployed model
// against the offline one. From an export directory (export/export_dir.h):
//
//   1. the first --batch_size rows of the config's train_input_path, read as the pipeline reads
//      it (data_config's dataset type, delimiter, fields), every column (CSV columns typed int64,
//      double or string as pyarrow infers them, data/csv_value_types.h); the columns of user-side
//      FG inputs (side "user", and every input of a grouped sequence) take the first row's value
//      in every row — one user scored against batch_size items, as an online request;
//   2. writes them as <dir>/debug_data/part-0.parquet and as <dir>/debug_data/data.json:
//      {"<column>": {"values": [...], "dtype": "BIGINT"}, ...} in the table's column order, user
//      columns with their one value, and "item_ids" (a copy of the --item_id column's entry)
//      right after that column; dtypes as MaxCompute names them (BIGINT, INT, FLOAT, DOUBLE,
//      STRING, ARRAY<…>, ARRAY<ARRAY<…>>);
//   3. predicts them (export/predictor.h, --debug_level 1, the --item_id column reserved) into
//      <dir>/debug_result/part-0.parquet;
//   4. writes <dir>/debug_result/fgout.json — per item id (as text; "mock_id" without --item_id)
//      the parsed features of its row, {"<feature>": "<value>"} (feature/parsed_features_text.h)
//      — and <dir>/debug_result/result.json, {"<output>": [per row]} for every model output.
// The JSON files are written as Python's json.dump(..., indent=4) writes them (base/python_json.h).
//
// Deviations from TorchEasyRec (docs/tzrec-compatibility.md §3.5): a table with fewer rows than
// --batch_size gives a request of that many rows (TorchEasyRec fails); a value holding ':' (weighted ids "3:0.5") stays
// whole in fgout.json (TorchEasyRec's split fails on it); NaN values are null in data.json.
//
// Errors: UsageError for a missing --scripted_model_path / pipeline.config, --batch_size below 1,
// or above 1 without --item_id (TorchEasyRec: an embedding model is predicted one row at a time);
// ConfigError for fg_mode other than FG_NORMAL / FG_DAG (the request carries raw inputs); DataError
// for an empty table, an --item_id that is not a column, a column type without a MaxCompute name;
// NotSupportedError for map columns (the Parquet writer writes none); the predict errors.
#pragma once

#include <cstdint>
#include <string>

namespace tzrec::exporting {

struct OnlineInferDataOptions {
  std::string scripted_model_path;  // required: an export directory
  std::string item_id;              // the item id column; empty: one row, "mock_id"
  int64_t batch_size = 512;
};

struct OnlineInferDataSummary {
  int64_t rows = 0;
  std::string data_dir;    // <dir>/debug_data
  std::string result_dir;  // <dir>/debug_result
};

OnlineInferDataSummary create_online_infer_data(const OnlineInferDataOptions& options);

}  // namespace tzrec::exporting
