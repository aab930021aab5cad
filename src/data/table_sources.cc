#include "data/table_sources.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text.h"
#include "base/error.h"
#include "data/input_files.h"
#include "data/reserved_columns.h"

namespace tzrec::data {
namespace {

protos::DataConfig table_data_config(TableFormat format, int workers) {
  protos::DataConfig dc;
  const bool csv = format == TableFormat::kCsv;
  dc.set_dataset_type(csv ? protos::CsvDataset : protos::ParquetDataset);
  dc.set_with_header(csv);
  dc.set_num_workers(workers);
  return dc;
}

}  // namespace

TableFormat table_format(const std::string& reader_type, const std::string& path, const std::string& command) {
  if (reader_type == "CsvReader") return TableFormat::kCsv;
  if (reader_type == "ParquetReader") return TableFormat::kParquet;
  if (reader_type == "OdpsReader") {
    throw NotSupportedError(fmt::format("{} --reader_type OdpsReader (MaxCompute tables)", command));
  }
  if (!reader_type.empty()) {
    throw UsageError(fmt::format("{} --reader_type {}: use CsvReader or ParquetReader", command, reader_type));
  }
  return ends_with(path, ".csv") || ends_with(path, ".txt") ? TableFormat::kCsv : TableFormat::kParquet;
}

DatasetSources open_table(TableFormat format, const std::string& path, const std::vector<std::string>& columns,
                          int64_t batch_size, int workers, int rank, int world_size) {
  BatchOptions batch;
  batch.batch_size = batch_size;
  return make_dataset_sources(table_data_config(format, workers), path, columns, batch, nullptr, rank, world_size,
                              /*log_worker_changes=*/false);
}

std::vector<std::string> table_columns(TableFormat format, const std::string& path) {
  return input_file_columns(table_data_config(format, 1), expand_input_path(path).front());
}

void require_table_columns(TableFormat format, const std::string& path, const std::vector<std::string>& fields,
                           const std::string& what) {
  const std::vector<std::string> columns = table_columns(format, path);
  std::vector<std::string> missing;
  for (const std::string& f : fields) {
    if (std::find(columns.begin(), columns.end(), f) == columns.end()) missing.push_back("'" + f + "'");
  }
  if (!missing.empty()) {
    throw UsageError(fmt::format("{} [{}] not found in input '{}' (its columns: {})", what, fmt::join(missing, ", "),
                                 path, fmt::join(columns, ", ")));
  }
}

}  // namespace tzrec::data
