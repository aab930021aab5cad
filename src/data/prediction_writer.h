// Prediction output files (TorchEasyRec's ParquetWriter / CsvWriter for `predict`), no torch.
//
// Each rank writes one file, <output_dir>/part-<rank>.parquet or .csv (the directory is created
// by the first write if missing; an existing file is replaced). Columns: the model outputs first, in the order
// given, then the reserved input columns, in their order. The file is created by the first
// write() (its columns fix the file's schema); a writer never written creates no file.
//
// Outputs are float32 arrays, row-major [rows, width]: width 1 is a scalar float column, width > 1
// a list<float> column of `width` values per row; with row_offsets, a list<float> column of a
// variable number of items per row (list<float>, or list<list<float>> for items of width > 1;
// CSV: the items joined by ",", or their values by "," and the items by ";").
// Reserved columns come as a data::RecordBatch (e.g. feature::LoadedBatch::reserved): its text
// columns (CSV input) and then its typed columns (Parquet input); then the text columns the caller
// appends after them (predict's `__features__`, feature/parsed_features_text.h).
//
// ParquetWriter: outputs FLOAT (required) or LIST<FLOAT> (required, required elements), INT64 /
//   LIST<INT64> for int64 outputs; text
//   reserved columns STRING, an empty cell written as null; typed reserved columns keep their
//   physical type (boolean, int32, int64, float, double, byte array) and list depth. Map columns
//   are refused (NotSupportedError naming the column).
// CsvWriter: a header line, then one line per row; delimiter ',' (options.csv_delimiter); a field
//   holding the delimiter, '"', '\n' or '\r' is quoted (RFC 4180: "..." with '"' doubled).
//   Numbers are printed in the shortest form that reads back to the same float32 / float64
//   (fmt's "{}"), booleans as true / false, null as an empty field. A list<float> output is its
//   values joined by "," in one field (hence quoted with the default delimiter), e.g.
//   "0.25,0.75". Typed reserved lists are their elements joined by ","; lists of lists join the
//   inner lists by ";" (e.g. "1,2;3"); maps are key:value entries joined by ",".
//
// Errors: IoError when the directory or file cannot be created or written; DataError for a batch
// that does not fit (columns differing from the first batch's, a name used twice or by both an
// output and a reserved column, row counts that differ between columns, write after close);
// NotSupportedError for an unknown writer type or a column type the writer cannot write.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/record_batch.h"
#include "parquet/writer.h"

namespace tzrec::data {

struct OutputColumn {
  std::string name;
  int64_t width = 1;          // values per row: 1 -> float column, > 1 -> list<float> column
  std::vector<float> values;  // [rows * width], row-major
  // Non-empty: a column of a variable number of items per row — row r holds items
  // row_offsets[r] .. row_offsets[r + 1] (a generative model's outputs per candidate), each item
  // `width` values: list<float> for width 1, list<list<float>> otherwise.
  std::vector<int64_t> row_offsets;
  bool is_list() const { return width > 1 || !row_offsets.empty(); }
  // An int64 output (the SID models' codes): its values here instead of in `values`; written as
  // INT64 / LIST<INT64> (Parquet) and as integers (CSV).
  bool int64 = false;
  std::vector<int64_t> int64_values;
  int64_t num_values() const { return static_cast<int64_t>(int64 ? int64_values.size() : values.size()); }
};

struct PredictionWriterOptions {
  char csv_delimiter = ',';
  parquet::WriterOptions parquet;  // compression, row group size, ...
};

// The columns of one write() call, checked: outputs then reserved columns, `rows` rows each.
struct PredictionBatch {
  int64_t rows = 0;
  const std::vector<OutputColumn>* outputs = nullptr;
  std::vector<const StringColumn*> text;  // reserved text columns
  std::vector<const TypedColumn*> typed;  // reserved typed columns
  std::vector<const StringColumn*> appended;  // text columns after the reserved ones
};

class PredictionWriter {
 public:
  virtual ~PredictionWriter();
  PredictionWriter(const PredictionWriter&) = delete;
  PredictionWriter& operator=(const PredictionWriter&) = delete;

  // Appends one batch (see the file comment). Every call must have the same columns (names,
  // order and types) as the first one.
  // `appended`: text columns written after the reserved ones (they count as reserved columns in
  // the checks).
  void write(const std::vector<OutputColumn>& outputs, const RecordBatch& reserved = {},
             const std::vector<StringColumn>& appended = {});
  // Finishes the file (Parquet footer, CSV flush). Idempotent. Without close() the file is
  // incomplete: the destructor does not finish it, so that write errors are not lost.
  void close();

  const std::string& path() const { return path_; }
  int64_t rows_written() const { return rows_written_; }

 protected:
  explicit PredictionWriter(std::string path) : path_(std::move(path)) {}
  // `first`: the first batch (create the file from its columns).
  virtual void write_batch(const PredictionBatch& batch, bool first) = 0;
  // Called once by close() after at least one write.
  virtual void finish() = 0;

 private:
  std::string path_;
  std::vector<std::string> columns_;  // "name: type" of the first batch
  int64_t rows_written_ = 0;
  bool closed_ = false;
};

// The type of a typed column as compared across batches and named in messages: "int64",
// "list<string>", "list<list<float>>", "map<string,double>" (string and binary are both "string").
std::string typed_column_type(const TypedColumn& column);

// writer_type "ParquetWriter" -> <output_dir>/part-<rank>.parquet, "CsvWriter" ->
// <output_dir>/part-<rank>.csv (created by the first write). Throws NotSupportedError for other types
// (e.g. OdpsWriter), IoError when the directory cannot be created.
std::unique_ptr<PredictionWriter> make_prediction_writer(
    const std::string& writer_type, const std::string& output_dir, int rank,
    const PredictionWriterOptions& options = {});

// TorchEasyRec's default writer of a dataset type: "Dataset" replaced by "Writer"
// (ParquetDataset -> ParquetWriter, CsvDataset -> CsvWriter, OdpsDataset -> OdpsWriter).
std::string default_writer_type(const std::string& dataset_type_name);

}  // namespace tzrec::data
