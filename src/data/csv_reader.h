// CSV reader for one loader worker: reads its files in order and cuts exactly batch_size rows
// per RecordBatch (batches may span files; the last partial batch is kept unless
// drop_remainder). Only the requested columns are kept, in the requested order (no torch).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batch_source.h"
#include "data/csv_record_stream.h"
#include "data/input_files.h"

namespace tzrec::data {

struct CsvOptions {
  char delimiter = ',';
  // true: the first non-empty line of every file names the columns.
  bool with_header = false;
  // Column names in file order, used when with_header is false (data_config.input_fields).
  std::vector<std::string> input_fields;
};

class CsvBatchReader : public BatchSource {
 public:
  // columns: the needed columns, in output order. The last batch of the stream may be short;
  // it is dropped when drop_remainder is set.
  // Throws ConfigError when batch_size < 1 or, without header, when a needed column is not in
  // options.input_fields.
  CsvBatchReader(CsvOptions options, std::vector<std::string> columns, std::vector<FileSlice> files,
                 int64_t batch_size, bool drop_remainder);
  ~CsvBatchReader() override;

  std::optional<SourcedBatch> next() override;

 private:
  // Opens files_[file_pos_], reads the header, skips resumed rows. False when no file is left.
  bool open_next_file();

  CsvOptions options_;
  std::vector<std::string> columns_;
  std::vector<FileSlice> files_;
  int64_t batch_size_;
  bool drop_remainder_;

  size_t file_pos_ = 0;  // next file to open
  std::unique_ptr<CsvRecordStream> stream_;
  int32_t current_file_id_ = -1;
  std::vector<int> column_map_;  // needed column i -> field index in the current file
  size_t expected_fields_ = 0;
  std::vector<std::string_view> fields_;
};

}  // namespace tzrec::data
