// Arrow record batches in the engine's columnar form: one parquet::ColumnData per leaf, exactly
// as the Parquet reader gives the same column read from a Parquet file that pyarrow wrote from
// the Arrow data (same descriptors, list levels, validity and values; see parquet/column_data.h
// and data/record_batch.h TypedColumn).
//
// Column shapes (a top-level field of the schema):
//   scalar          values = the leaf (no list level)
//   list^k<T>       values = the leaf with k list levels (list and large_list alike; k >= 1)
//   map<K, V>       values = the keys leaf, map_values = the values leaf; both have one list
//                   level (one map per row) with the same offsets and validity
// with T, K, V among the primitive types below. Other types (struct, union, dictionary-encoded,
// run-end encoded, list views, fixed-size lists, decimals, dates, times, timestamps, durations,
// intervals, fixed-size binary, string/binary views, null; maps inside lists, lists or maps as
// map keys / values) are refused with NotSupportedError.
//
// Descriptors are those of the Parquet schema pyarrow writes for the field (parquet_schema()):
//   tags: list<int64>  -> optional group tags (LIST) { repeated group list { optional int64
//                         element } }: leaf path "tags.list.element", field_name "tags"
//   m: map<string, float> -> optional group m (MAP) { repeated group key_value { required
//                         binary key (STRING); optional float value } }: "m.key_value.key" and
//                         "m.key_value.value"
//   list<list<T>>      -> "x.list.element.list.element"
// with `optional` for nullable fields / elements / values and `required` otherwise.
//
// Primitive types, as Parquet physical types (widened where Parquet has no narrower type):
//   bool -> BOOLEAN (one byte 0/1 per value)
//   int8, int16 -> INT32 annotated INT(8/16, signed) (sign-extended)
//   uint8, uint16 -> INT32 annotated INT(8/16, unsigned) (zero-extended; the values fit)
//   int32 -> INT32;  int64 -> INT64
//   uint32 -> INT64 without annotation (zero-extended: every value fits)
//   uint64 -> INT64 annotated INT(64, unsigned): the same 64 bits, as Parquet stores UINT_64, so
//             values of 2^63 and above read as negative where the annotation is ignored
//   float16 -> FLOAT (exactly);  float -> FLOAT;  double -> DOUBLE
//   string, large_string -> BYTE_ARRAY annotated STRING;  binary, large_binary -> BYTE_ARRAY
// Null slots hold zeros / empty strings and null lists no elements, whatever bytes the Arrow
// buffers had behind them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/ipc_schema.h"
#include "parquet/column_data.h"
#include "parquet/schema.h"

namespace tzrec::arrow {

// One top-level field's data.
struct ArrowColumn {
  std::string name;
  parquet::ColumnData values;
  std::optional<parquet::ColumnData> map_values;

  bool is_map() const { return map_values.has_value(); }
};

struct ArrowBatch {
  int64_t num_rows = 0;
  std::vector<ArrowColumn> columns;  // in schema order (the columns that were read)

  // nullptr when absent.
  const ArrowColumn* find(std::string_view name) const;
};

// The Parquet schema of `schema`'s fields as described above (leaf column indices count the
// leaves of these fields in order). Throws NotSupportedError naming the first field whose type is
// not supported.
parquet::Schema parquet_schema(const ArrowSchema& schema);

// Empty columns (no rows) of `schema`'s fields with their descriptors set, e.g. for
// parquet::ColumnBuilder. Throws NotSupportedError like parquet_schema().
std::vector<ArrowColumn> empty_columns(const ArrowSchema& schema);

// The Arrow field of a column in the form above (descriptor to type: INT32 annotated INT(8) to
// int8, ..., INT64 to int64, INT64 annotated INT(64, unsigned) to uint64, BYTE_ARRAY to string
// when is_string() else binary; list levels to list<...>, map_values to map<K, V>; nullability
// from the descriptor). Throws DataError for a column of another shape or physical type.
ArrowField field_of(const ArrowColumn& column);

// A parquet::Table of the batch's leaves (keys then values for maps) in column order, e.g. for
// parquet::row_to_json with parquet_schema() of the same fields.
parquet::Table to_parquet_table(const ArrowBatch& batch);

// Rows [begin, end) of every column of `batch` (parquet::slice_rows).
ArrowBatch slice_batch(const ArrowBatch& batch, int64_t begin, int64_t end);

// The schema of the batch's columns (field_of each).
ArrowSchema schema_of(const ArrowBatch& batch);

// The inverse: a table's leaves (in schema order, as parquet::FileReader::read gives them) as
// the columns of their top-level fields — a one-leaf field as it is, a map's key and value
// leaves as one map column. Throws NotSupportedError for other fields of several leaves
// (structs).
ArrowBatch batch_of_table(const parquet::Table& table);

}  // namespace tzrec::arrow
