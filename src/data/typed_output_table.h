// A table of typed columns built one row at a time and written through a PredictionWriter
// (Parquet keeps the types, CSV prints them; data/prediction_writer.h) to <dir>/part-0.<ext>, for
// the tools that write tables of their own (evaluate_sid_quality, resolve_sid_collisions), no
// torch. Every column is required (no nulls); lists have required elements. The rows go to the
// writer in pieces of at most kPieceRows rows or about kPieceValues list values.
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
  static constexpr int64_t kPieceRows = 100000;
  static constexpr int64_t kPieceValues = 1000000;

  // writer_type: ParquetWriter | CsvWriter (make_prediction_writer, rank 0).
  TypedOutputTable(const std::string& writer_type, const std::string& dir,
                   const std::vector<TypedOutputColumn>& columns);

  // Column i's builder: append one value (or one list) to every column, then end_row().
  parquet::ColumnBuilder& operator[](size_t i) { return builders_[i]; }
  // Appends the list v[0, n) to int64 list column i.
  void append_list(size_t i, const int64_t* v, int64_t n);
  // Ends the row; `values`: how many list values it holds (for the piece size).
  void end_row(int64_t values = 1);
  // Writes the rows left and finishes the file; returns the rows written in all.
  int64_t close();

 private:
  void flush();

  std::unique_ptr<PredictionWriter> writer_;
  std::vector<std::unique_ptr<parquet::Schema>> schemas_;  // each builder reads its schema's descriptor
  std::vector<std::string> names_;
  std::vector<parquet::ColumnBuilder> builders_;
  int64_t rows_ = 0, pending_rows_ = 0, pending_values_ = 0;
};

}  // namespace tzrec::data
