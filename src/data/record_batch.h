// Columnar batch of raw text cells as read from an input file (no torch).
// A cell is an (possibly empty) byte string; empty means null/missing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::data {

// One column: cell i is bytes[offsets[i], offsets[i + 1]).
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

// Where a row came from, for error messages ("file.csv line 12").
struct RowOrigin {
  int32_t file_index = 0;  // into RecordBatch::files
  int64_t line = 0;        // 1-based physical line of the row's first character
};

struct RecordBatch {
  std::vector<StringColumn> columns;
  std::vector<std::string> files;
  std::vector<RowOrigin> origins;  // one per row

  int64_t num_rows() const { return static_cast<int64_t>(origins.size()); }
  // -1 when absent.
  int column_index(std::string_view name) const {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
  // "path/to/file.csv line 12"
  std::string describe_row(int64_t row) const {
    const auto& o = origins[row];
    return files[o.file_index] + " line " + std::to_string(o.line);
  }
};

}  // namespace tzrec::data
