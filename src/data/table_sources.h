// Tables that tools read by themselves rather than through a pipeline's data_config (hitrate's
// embedding tables, dynamicemb init tables): CSV whose first line names the columns — as
// TorchEasyRec's CsvReader reads them, its column names from the header — or Parquet, chosen by
// the tool's --reader_type or from the file names (no torch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset_sources.h"

namespace tzrec::data {

enum class TableFormat { kCsv, kParquet };

// The format of the table at `path` (a comma list of files / globs): from `reader_type`
// ("CsvReader" | "ParquetReader") or, when it is empty, from the path: names ending in .csv or .txt
// are CSV, anything else Parquet. `command` names the tool in errors: NotSupportedError for
// OdpsReader (MaxCompute tables), UsageError for any other value.
TableFormat table_format(const std::string& reader_type, const std::string& path, const std::string& command);

// Readers of `columns` (in output order) of the table at `path`, batches of `batch_size` rows:
// `workers` sources on rank `rank` of `world_size`, the files / rows split as a dataset's
// (dataset_sources.h). DataError for missing files or columns.
DatasetSources open_table(TableFormat format, const std::string& path, const std::vector<std::string>& columns,
                          int64_t batch_size, int workers, int rank, int world_size);

// The column names of the first file of the table at `path`, in file order (the CSV header, the
// Parquet file's top-level fields). DataError when the path matches no file (expand_input_path).
std::vector<std::string> table_columns(TableFormat format, const std::string& path);

// Checks that the table at `path` has every one of `fields`: UsageError "<what> ['a', 'b'] not
// found in input '<path>' (its columns: x, y)" naming the missing ones.
void require_table_columns(TableFormat format, const std::string& path, const std::vector<std::string>& fields,
                           const std::string& what);

}  // namespace tzrec::data
