// Reserved columns: input columns passed through unchanged with each batch, so that a prediction
// run can write them next to the model outputs (TorchEasyRec's `predict --reserved_columns`).
// No torch.
//
// A request is a list of input column names, with two special values:
//   "ALL_COLUMNS"           every column of the input, in file order (CSV: the header of the
//                           first file that has one, or data_config.input_fields without
//                           header; Parquet: the top-level fields of the first file);
//   "ALL_EFFECTIVE_COLUMNS" the columns the feature parser reads (its input_columns() order),
//                           followed by any other names of the request.
// A name given twice is kept once, at its first position.
#pragma once

#include <string>
#include <vector>

#include "data/record_batch.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::data {

inline constexpr char kAllColumns[] = "ALL_COLUMNS";
inline constexpr char kAllEffectiveColumns[] = "ALL_EFFECTIVE_COLUMNS";

// The column names of one input file of data_config.dataset_type, in file order: the CSV header
// (empty for an empty file), data_config.input_fields for CSV without header, or the top-level
// fields of a Parquet file. Throws DataError / IoError when the file cannot be read,
// NotSupportedError for other dataset types.
std::vector<std::string> input_file_columns(const protos::DataConfig& data_config,
                                            const std::string& file);

// Resolves `requested` (see above) against `files` (the expanded input path), where
// `effective_columns` are the parser's input columns. Every resolved column must be in every
// file: otherwise DataError naming the column, the file and the columns it has (this reads the
// header / footer of every file once more, only for a non-empty request). Returns the resolved
// names ({} for an empty request).
std::vector<std::string> resolve_reserved_columns(
    const protos::DataConfig& data_config, const std::vector<std::string>& files,
    const std::vector<std::string>& requested, const std::vector<std::string>& effective_columns);

// A batch with only the named columns of `batch` (text or typed, whichever it holds), in the
// given order, and the same rows, files and origins. Throws DataError naming a missing column.
RecordBatch select_columns(const RecordBatch& batch, const std::vector<std::string>& names);

}  // namespace tzrec::data
