// Columnar batch of input rows as read from an input file (no torch).
//
// Text sources (CSV) give StringColumns: one (possibly empty) byte string per row; empty means
// null/missing. Typed sources (Parquet) give TypedColumns that keep the file's types: scalars,
// lists, lists of lists and maps, decoded by the Parquet library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/column_data.h"

namespace tzrec::data {

// One text column: cell i is bytes[offsets[i], offsets[i + 1]).
struct StringColumn {
  std::string name;
  std::string bytes;
  std::vector<int64_t> offsets{0};

  int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  std::string_view cell(int64_t row) const {
    return std::string_view(bytes).substr(offsets[row], offsets[row + 1] - offsets[row]);
  }
  void append(std::string_view cell) {
    bytes.append(cell.data(), cell.size());
    offsets.push_back(static_cast<int64_t>(bytes.size()));
  }
};

// One typed column (a top-level field of a Parquet file) with exactly num_rows rows:
//   scalar:           values = the leaf column (max_rep 0);
//   list / list<list>: values = the leaf column with 1 / 2 list levels;
//   map:              values = the keys leaf (1 list level, one map per row) and map_values =
//                     the values leaf (same list offsets).
struct TypedColumn {
  std::string name;
  parquet::ColumnData values;
  std::optional<parquet::ColumnData> map_values;

  bool is_map() const { return map_values.has_value(); }
  // Nesting depth: 0 scalar, 1 list or map, 2 list of lists.
  int list_depth() const { return static_cast<int>(values.lists.size()); }
};

// Where a row came from, for error messages ("file.csv line 12", "file.parquet row 7").
struct RowOrigin {
  int32_t file_index = 0;  // into RecordBatch::files
  int64_t line = 0;        // CSV: 1-based physical line of the row's first character;
                           // Parquet: 0-based row index within the file
};

struct RecordBatch {
  std::vector<StringColumn> columns;       // text sources
  std::vector<TypedColumn> typed_columns;  // typed sources
  std::vector<std::string> files;
  std::vector<RowOrigin> origins;  // one per row
  // How RowOrigin::line counts: "line" (1-based, text files) or "row" (0-based, Parquet).
  std::string origin_unit = "line";

  int64_t num_rows() const { return static_cast<int64_t>(origins.size()); }
  // Index into `columns`; -1 when absent.
  int column_index(std::string_view name) const {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
  // nullptr when absent.
  const TypedColumn* typed_column(std::string_view name) const {
    for (const auto& c : typed_columns) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
  // "path/to/file.csv line 12" / "path/to/file.parquet row 7"
  std::string describe_row(int64_t row) const {
    const auto& o = origins[row];
    return files[o.file_index] + " " + origin_unit + " " + std::to_string(o.line);
  }
};

}  // namespace tzrec::data
