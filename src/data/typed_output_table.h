// Rows of typed columns built one value at a time and written through a PredictionWriter
// (Parquet keeps the types, CSV prints them; data/prediction_writer.h), for the tools that write
// tables of their own (evaluate_sid_quality, resolve_sid_collisions), no torch. Every column is
// required (no nulls); lists have required elements.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/prediction_writer.h"
#include "parquet/writer.h"

namespace tzrec::data {

struct TypedOutputColumn {
  std::string name;
  parquet::PhysicalType type = parquet::PhysicalType::kInt64;  // INT32, INT64, DOUBLE or BYTE_ARRAY (text)
  int list_depth = 0;                                           // 0: scalar, 1: list
};

class TypedOutputTable {
 public:
  explicit TypedOutputTable(const std::vector<TypedOutputColumn>& columns);

  // Column i's builder: append one value (or one list) per row to every column.
  parquet::ColumnBuilder& operator[](size_t i) { return builders_[i]; }
  // Appends the list v[0, n) to int64 list column i.
  void append_list(size_t i, const int64_t* v, int64_t n);
  // Writes the `rows` rows built since the last flush to `writer`, then starts again.
  void flush(PredictionWriter& writer, int64_t rows);

 private:
  std::vector<std::unique_ptr<parquet::Schema>> schemas_;  // each builder reads its schema's descriptor
  std::vector<std::string> names_;
  std::vector<parquet::ColumnBuilder> builders_;
};

}  // namespace tzrec::data
