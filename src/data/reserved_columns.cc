#include "data/reserved_columns.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "base/error.h"
#include "data/csv_record_stream.h"
#include "data/dataset_sources.h"
#include "parquet/file_reader.h"

namespace tzrec::data {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::vector<std::string> input_file_columns(const protos::DataConfig& dc, const std::string& file) {
  switch (dc.dataset_type()) {
    case protos::CsvDataset: {
      CsvOptions options = csv_options(dc);
      if (!options.with_header) return std::move(options.input_fields);
      CsvRecordStream stream(file, options.delimiter);
      std::vector<std::string_view> header;
      if (!stream.next(&header)) return {};
      return std::vector<std::string>(header.begin(), header.end());
    }
    case protos::ParquetDataset: {
      const auto reader = parquet::FileReader::open(file);
      const parquet::Schema& schema = reader->schema();
      std::vector<std::string> out;
      for (int f : schema.fields()) out.push_back(schema.nodes()[static_cast<size_t>(f)].name);
      return out;
    }
    default:
      throw NotSupportedError(
          fmt::format("data_config.dataset_type {}", protos::DatasetType_Name(dc.dataset_type())));
  }
}

std::vector<std::string> resolve_reserved_columns(
    const protos::DataConfig& dc, const std::vector<std::string>& files,
    const std::vector<std::string>& requested, const std::vector<std::string>& effective_columns) {
  if (requested.empty()) return {};
  const bool csv_without_header = dc.dataset_type() == protos::CsvDataset && !dc.with_header();
  // Columns per file; a CSV file without any line has no header and no rows: nothing to check.
  std::vector<std::pair<const std::string*, std::vector<std::string>>> file_columns;
  for (const auto& file : files) {
    auto columns = input_file_columns(dc, file);
    if (columns.empty() && !csv_without_header) continue;
    file_columns.emplace_back(&file, std::move(columns));
    if (csv_without_header) break;  // every file has data_config.input_fields
  }

  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (!contains(out, name)) out.push_back(name);
  };
  for (const auto& name : requested) {
    if (name == kAllColumns) {
      if (!file_columns.empty()) {
        for (const auto& c : file_columns.front().second) add(c);
      }
    } else if (name == kAllEffectiveColumns) {
      for (const auto& c : effective_columns) add(c);
    } else {
      add(name);
    }
  }
  for (const auto& [file, columns] : file_columns) {
    for (const auto& name : out) {
      if (contains(columns, name)) continue;
      if (csv_without_header) {
        throw DataError(fmt::format(
            "{}: reserved column '{}' is not in data_config.input_fields (columns: {}); the CSV "
            "files have no header, so drop it from the reserved columns or add it to "
            "input_fields",
            *file, name, fmt::join(columns, ", ")));
      }
      throw DataError(fmt::format(
          "{}: reserved column '{}' is not in the input (columns: {}); drop it from the "
          "reserved columns or fix the input",
          *file, name, fmt::join(columns, ", ")));
    }
  }
  return out;
}

RecordBatch select_columns(const RecordBatch& batch, const std::vector<std::string>& names) {
  RecordBatch out;
  out.files = batch.files;
  out.origins = batch.origins;
  out.origin_unit = batch.origin_unit;
  for (const auto& name : names) {
    const int text = batch.column_index(name);
    if (text >= 0) {
      out.columns.push_back(batch.columns[static_cast<size_t>(text)]);
    } else if (const TypedColumn* typed = batch.typed_column(name)) {
      out.typed_columns.push_back(*typed);
    } else {
      std::vector<std::string> have;
      for (const auto& c : batch.columns) have.push_back(c.name);
      for (const auto& c : batch.typed_columns) have.push_back(c.name);
      throw DataError(fmt::format("reserved column '{}' is not in the batch read (columns: {})",
                                  name, fmt::join(have, ", ")));
    }
  }
  return out;
}

}  // namespace tzrec::data
