#include "data/prediction_writer.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/ranges.h>

#include "base/error.h"
#include "data/csv_prediction_writer.h"
#include "data/parquet_prediction_writer.h"

namespace tzrec::data {
namespace {

// Leaf type name of a supported physical type; nullptr for the others.
const char* leaf_name(parquet::PhysicalType type) {
  switch (type) {
    case parquet::PhysicalType::kBoolean:
      return "bool";
    case parquet::PhysicalType::kInt32:
      return "int32";
    case parquet::PhysicalType::kInt64:
      return "int64";
    case parquet::PhysicalType::kFloat:
      return "float";
    case parquet::PhysicalType::kDouble:
      return "double";
    case parquet::PhysicalType::kByteArray:
      return "string";
    default:
      return nullptr;
  }
}

std::string leaf_type(const parquet::ColumnData& c) {
  const char* name = leaf_name(c.type());
  return name ? name : parquet::to_string(c.type());
}

void check_writable(const TypedColumn& c, const std::string& path) {
  const bool ok = leaf_name(c.values.type()) && (!c.is_map() || leaf_name(c.map_values->type()));
  if (!ok) {
    throw NotSupportedError(fmt::format(
        "{}: reserved column '{}' of type {}; prediction writers write bool, int32, int64, float, "
        "double and string values and lists of them: drop it from the reserved columns",
        path, c.name, typed_column_type(c)));
  }
}

void create_parent_directory(const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw IoError(fmt::format("cannot create the output directory {}: {}; check the path and its permissions",
                              dir.string(), ec ? ec.message() : "a file of that name exists"));
  }
}

}  // namespace

std::string typed_column_type(const TypedColumn& c) {
  if (c.is_map()) return "map<" + leaf_type(c.values) + "," + leaf_type(*c.map_values) + ">";
  std::string t = leaf_type(c.values);
  for (int d = 0; d < c.list_depth(); ++d) t = "list<" + t + ">";
  return t;
}

PredictionWriter::~PredictionWriter() = default;

void PredictionWriter::write(const std::vector<OutputColumn>& outputs, const RecordBatch& reserved,
                             const std::vector<StringColumn>& appended) {
  if (closed_) throw DataError(fmt::format("prediction writer {}: write after close", path_));
  PredictionBatch batch;
  batch.outputs = &outputs;
  std::vector<std::string> columns;  // "name: type"
  std::vector<std::string> output_names, reserved_names;
  std::string rows_from;
  auto add_rows = [&](const std::string& name, int64_t rows) {
    if (rows_from.empty()) {
      batch.rows = rows;
      rows_from = name;
    } else if (rows != batch.rows) {
      throw DataError(fmt::format(
          "{}: column '{}' has {} rows but column '{}' has {}; every column of a batch needs the "
          "same rows",
          path_, name, rows, rows_from, batch.rows));
    }
  };
  auto add_reserved = [&](const std::string& name) {
    if (std::find(output_names.begin(), output_names.end(), name) != output_names.end()) {
      throw DataError(fmt::format(
          "{}: '{}' is both a model output and a reserved input column; drop it from the "
          "reserved columns (--reserved_columns) or from the outputs (--output_columns)",
          path_, name));
    }
    if (std::find(reserved_names.begin(), reserved_names.end(), name) != reserved_names.end()) {
      throw DataError(fmt::format("{}: reserved column '{}' is given twice", path_, name));
    }
    reserved_names.push_back(name);
  };
  for (const auto& o : outputs) {
    if (std::find(output_names.begin(), output_names.end(), o.name) != output_names.end()) {
      throw DataError(fmt::format("{}: output '{}' is given twice", path_, o.name));
    }
    output_names.push_back(o.name);
    const auto size = o.num_values();
    if (!o.row_offsets.empty()) {
      const bool ok = o.width >= 1 && o.row_offsets.front() == 0 && o.row_offsets.back() * o.width == size &&
                      std::is_sorted(o.row_offsets.begin(), o.row_offsets.end());
      if (!ok) {
        throw DataError(fmt::format("{}: output '{}' has {} values that its row offsets do not split into rows",
                                    path_, o.name, size));
      }
      add_rows(o.name, static_cast<int64_t>(o.row_offsets.size()) - 1);
      columns.push_back(o.name + (o.width == 1 ? ": list<float>" : fmt::format(": list<list<float>[{}]>", o.width)));
      continue;
    }
    if (o.width < 1 || size % o.width != 0) {
      throw DataError(fmt::format("{}: output '{}' has {} values, not rows x width {}", path_,
                                  o.name, size, o.width));
    }
    add_rows(o.name, size / o.width);
    columns.push_back(
        o.name + ": " +
        (o.width == 1 ? std::string(o.int64 ? "int64" : "float")
                      : fmt::format("list<{}>[{}]", o.int64 ? "int64" : "float", o.width)));
  }
  for (const auto& c : reserved.columns) {
    add_reserved(c.name);
    add_rows(c.name, c.size());
    columns.push_back(c.name + ": string");
    batch.text.push_back(&c);
  }
  for (const auto& c : reserved.typed_columns) {
    add_reserved(c.name);
    check_writable(c, path_);
    add_rows(c.name, c.values.num_rows);
    columns.push_back(c.name + ": " + typed_column_type(c));
    batch.typed.push_back(&c);
  }
  for (const auto& c : appended) {
    add_reserved(c.name);
    add_rows(c.name, c.size());
    columns.push_back(c.name + ": string");
    batch.appended.push_back(&c);
  }
  if (columns.empty()) {
    throw DataError(fmt::format(
        "{}: a batch without columns; select at least one output or reserved column", path_));
  }
  if (columns_.empty()) {
    create_parent_directory(path_);
    write_batch(batch, /*first=*/true);
    columns_ = std::move(columns);  // only once the file exists
  } else if (columns != columns_) {
    throw DataError(fmt::format(
        "{}: this batch has columns [{}] but the first batch had [{}]; every batch must have the "
        "same outputs and reserved columns",
        path_, fmt::join(columns, ", "), fmt::join(columns_, ", ")));
  } else {
    write_batch(batch, /*first=*/false);
  }
  rows_written_ += batch.rows;
}

void PredictionWriter::close() {
  if (closed_) return;
  closed_ = true;
  if (!columns_.empty()) finish();
}

std::unique_ptr<PredictionWriter> make_prediction_writer(const std::string& writer_type,
                                                         const std::string& output_dir, int rank,
                                                         const PredictionWriterOptions& options) {
  const char* extension = writer_type == "ParquetWriter" ? "parquet"
                          : writer_type == "CsvWriter"   ? "csv"
                                                         : nullptr;
  if (!extension) {
    throw NotSupportedError(fmt::format(
        "writer_type {} (this build writes ParquetWriter and CsvWriter; pass one of them as "
        "--writer_type)",
        writer_type));
  }
  if (rank < 0) throw UsageError(fmt::format("prediction writer: rank {} < 0", rank));
  const std::string path = fmt::format("{}/part-{}.{}", output_dir, rank, extension);
  if (writer_type == "ParquetWriter") {
    return std::make_unique<ParquetPredictionWriter>(path, options.parquet);
  }
  return std::make_unique<CsvPredictionWriter>(path, options.csv_delimiter);
}

std::string default_writer_type(const std::string& dataset_type_name) {
  std::string out = dataset_type_name;
  const auto pos = out.find("Dataset");
  if (pos != std::string::npos) out.replace(pos, 7, "Writer");
  return out;
}

}  // namespace tzrec::data
