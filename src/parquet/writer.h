// Parquet file writer: flat columns (BOOLEAN, INT32, INT64, FLOAT, DOUBLE, STRING/BYTE_ARRAY)
// and LIST columns (list_depth 1: LIST<T>, 2: LIST<LIST<T>>, in the standard three-level form),
// with nulls; PLAIN or dictionary encoding (RLE_DICTIONARY with a PLAIN dictionary page, falling
// back to PLAIN when the dictionary grows too large); UNCOMPRESSED, SNAPPY, GZIP or ZSTD;
// DATA_PAGE v1 with RLE levels; page CRCs; an offset index per column chunk.
//
//   FileWriter w(path, {{"label", PhysicalType::kInt64}, {"tags", PhysicalType::kByteArray, ...}});
//   ColumnBuilder label(w.schema().column(0));
//   label.append<int64_t>(1); label.append_null();
//   ...
//   Table t; t.num_rows = 2; t.columns = {label.finish(), tags.finish()};
//   w.write(t);      // rows are buffered and cut into row groups of options.row_group_rows
//   w.close();       // writes the last row group and the footer
//
// Input columns have the layout the reader returns (column_data.h), one per field in order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "base/version.h"
#include "parquet/column_data.h"
#include "parquet/io.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace tzrec::parquet {

class ThreadPool;

struct WriterField {
  std::string name;
  PhysicalType type = PhysicalType::kInt64;  // BOOLEAN, INT32, INT64, FLOAT, DOUBLE or BYTE_ARRAY
  bool nullable = true;          // the value (flat) or the list (list_depth > 0) may be null
  int list_depth = 0;            // 0: flat, 1: LIST<T>, 2: LIST<LIST<T>>
  bool element_nullable = true;  // list elements (and inner lists) may be null
  bool string = true;            // BYTE_ARRAY annotated STRING (UTF-8)
  // INT32 / INT64 annotated as an integer of this many bits (8, 16, 32 or 64; 0: none), e.g. 8
  // unsigned for Arrow's uint8.
  int integer_bits = 0;
  bool integer_signed = true;
};

struct WriterOptions {
  Compression compression = Compression::kSnappy;
  int64_t row_group_rows = 64 * 1024;
  int64_t page_bytes = 1 << 20;            // target encoded (uncompressed) size of a data page
  bool dictionary = true;
  int64_t dictionary_max_bytes = 1 << 20;  // PLAIN-encoded dictionary size above which PLAIN is used
  bool page_crc = true;
  bool offset_index = true;
  int num_threads = 1;                     // columns encoded in parallel (counting the caller)
  std::string created_by = std::string("tzrec-cpp version ") + kVersion;
  std::vector<KeyValue> key_value_metadata;
};

class FileWriter {
 public:
  // Creates the file and writes its leading magic. Throws IoError, or DataError for an invalid
  // field list (duplicate names, unsupported types).
  FileWriter(const std::string& path, std::vector<WriterField> fields, WriterOptions options = {});
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Descriptors of the leaf columns (one per field), for building input with ColumnBuilder.
  const Schema& schema() const { return schema_; }

  // Appends the rows of `table`: one column per field, in field order. Full row groups are
  // written as they fill. Throws DataError when a column does not match its field (type, list
  // depth, nulls in a non-nullable field, inconsistent offsets).
  void write(const Table& table);
  void write(Table&& table);  // the same, without copying the buffered rows
  // Writes buffered rows as a last row group, the offset indexes and the footer; closes the file.
  void close();

  int64_t rows_written() const { return rows_written_; }

 private:
  void flush_row_group(int64_t rows);
  void validate(const Table& table) const;

  std::string path_;
  std::vector<WriterField> fields_;
  WriterOptions options_;
  Schema schema_;
  FileMetaData metadata_;
  std::unique_ptr<OutputFile> out_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<Table> pending_;      // buffered input
  int64_t pending_consumed_ = 0;    // rows of pending_[0] already written
  int64_t pending_rows_ = 0;        // rows buffered and not yet written
  int64_t rows_written_ = 0;
  std::vector<std::vector<OffsetIndex>> offset_indexes_;  // [row group][column]
  bool closed_ = false;
};

// The schema a FileWriter of `fields` writes (its descriptors, for building columns before a file
// exists). Throws DataError for fields a FileWriter refuses.
Schema writer_schema(const std::vector<WriterField>& fields);

// Builds one ColumnData row by row, for writer input and tests.
//   flat:   append(v) / append_null()            (one row each)
//   lists:  begin_list() ... end_list()          (one row at the outermost level)
//           append_null_list()                   (a null list: a row, or an element of an outer list)
//           inside a list, append(v) / append_null() add elements
class ColumnBuilder {
 public:
  explicit ColumnBuilder(const ColumnDescriptor& descriptor);

  // T: int32_t, int64_t, float or double, matching the column's physical type.
  template <typename T>
  void append(T value) {
    static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> || std::is_same_v<T, float> ||
                      std::is_same_v<T, double>,
                  "append<T>: T must be int32_t, int64_t, float or double");
    check_type(std::is_same_v<T, int32_t>   ? PhysicalType::kInt32
               : std::is_same_v<T, int64_t> ? PhysicalType::kInt64
               : std::is_same_v<T, float>   ? PhysicalType::kFloat
                                            : PhysicalType::kDouble);
    begin_value();
    std::memcpy(column_.values.grow(sizeof(T)), &value, sizeof(T));
    end_value(true);
  }
  void append(bool value);
  void append_string(std::string_view value);
  void append_null();
  void begin_list();
  void end_list();
  void append_null_list();

  int64_t num_rows() const { return column_.num_rows; }
  ColumnData finish();

 private:
  void begin_value();
  void end_value(bool valid);
  void begin_slot();  // a new slot at the current depth
  void check_type(PhysicalType type) const;

  ColumnData column_;
  int depth_ = 0;  // open lists
};

}  // namespace tzrec::parquet
