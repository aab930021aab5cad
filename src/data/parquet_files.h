// The input Parquet files of a dataset (no torch): footers opened once, row counts, the global
// row space (all rows of all files concatenated in input order) and column checks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/row_ranges.h"
#include "parquet/schema.h"

namespace tzrec::data {

// Local rows [begin, end) of input file `file_id`.
struct FilePiece {
  int32_t file_id = 0;
  int64_t begin = 0;
  int64_t end = 0;
  bool operator==(const FilePiece& o) const { return file_id == o.file_id && begin == o.begin && end == o.end; }
};

class ParquetFiles {
 public:
  // Reads the footer of every file. Throws IoError when a file cannot be read and DataError
  // naming the file when it is not a valid Parquet file (truncated, corrupt footer).
  static std::shared_ptr<ParquetFiles> open(std::vector<std::string> paths);

  const std::vector<std::string>& paths() const { return paths_; }
  const std::string& path(int32_t file_id) const { return paths_[static_cast<size_t>(file_id)]; }
  int32_t num_files() const { return static_cast<int32_t>(paths_.size()); }
  // Rows per file, in input order.
  const std::vector<int64_t>& file_rows() const { return file_rows_; }
  int64_t file_rows(int32_t file_id) const { return file_rows_[static_cast<size_t>(file_id)]; }
  // Global index of the first row of a file; file_offset(num_files()) == total_rows().
  int64_t file_offset(int32_t file_id) const { return offsets_[static_cast<size_t>(file_id)]; }
  int64_t total_rows() const { return offsets_.back(); }
  const parquet::Schema& schema(int32_t file_id) const { return schemas_[static_cast<size_t>(file_id)]; }

  // The per-file pieces of a global row range, in order; files without rows in it are skipped.
  // Throws UsageError when the range is not inside [0, total_rows()].
  std::vector<FilePiece> pieces(const RowRange& range) const;
  std::vector<FilePiece> pieces(const std::vector<RowRange>& ranges) const;

  // Checks that every needed column (a top-level field name) exists in every file with a shape
  // ParquetDataset reads, the same in every file: INT32/INT64/FLOAT/DOUBLE/BYTE_ARRAY (string or
  // binary) scalars (and BOOLEAN scalars, read as 0/1), lists and lists of lists of those, and
  // maps with string/int64/int32 keys and int32/int64/float/double/string values.
  // Throws DataError naming the file, the column and its type (for a missing column: the
  // available columns).
  void check_columns(const std::vector<std::string>& names) const;

 private:
  std::vector<std::string> paths_;
  std::vector<int64_t> file_rows_;
  std::vector<int64_t> offsets_{0};
  std::vector<parquet::Schema> schemas_;
};

// How a top-level field of a Parquet schema is read into a data::TypedColumn.
struct ColumnShape {
  enum class Kind { kScalar, kList, kMap };
  Kind kind = Kind::kScalar;
  int list_depth = 0;       // 0 scalar, 1 list or map, 2 list of lists
  std::vector<int> leaves;  // leaf column indices: one, or key and value for a map
  // "int64", "list<string>", "map<string,float>", ... (comparable across files)
  std::string type_name;
};

// The shape of top-level field `name` of `schema`. Throws DataError naming `file`, the column
// and its type when the field is missing or has a shape ParquetDataset does not read.
ColumnShape column_shape(const parquet::Schema& schema, const std::string& name, const std::string& file);

}  // namespace tzrec::data
