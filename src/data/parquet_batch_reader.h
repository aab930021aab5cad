// Parquet reader for one loader worker (no torch): reads its global row ranges in order and
// cuts exactly batch_size rows per RecordBatch (batches may span row groups, ranges and files;
// the last partial batch is kept unless drop_remainder), with the same contract as
// CsvBatchReader.
//
// Only the requested columns are decoded, and only the row groups (and, with an offset index,
// the pages) overlapping the ranges; memory stays bounded by about one row group of those
// columns plus one batch. Each requested column becomes one TypedColumn (record_batch.h), in
// the requested order. Origins are (file, 0-based row within the file), origin_unit "row".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batch_source.h"
#include "data/parquet_files.h"
#include "data/row_ranges.h"
#include "parquet/column_data.h"

namespace tzrec::parquet {
class FileReader;
class RowGroupStream;
}  // namespace tzrec::parquet

namespace tzrec::data {

class ParquetBatchReader : public BatchSource {
 public:
  // columns: top-level field names, in output order (checked per file: DataError naming the
  // file, column and type when missing or of a shape ParquetDataset does not read).
  // ranges: this worker's global row ranges (inside [0, files->total_rows())).
  // Throws ConfigError when batch_size < 1.
  ParquetBatchReader(std::shared_ptr<const ParquetFiles> files, std::vector<std::string> columns,
                     std::vector<RowRange> ranges, int64_t batch_size, bool drop_remainder);
  ~ParquetBatchReader() override;

  std::optional<SourcedBatch> next() override;

 private:
  // Moves to the next piece with rows (opening its file when it differs from the current one).
  // False when no piece is left.
  bool open_next_piece();
  // Reads the next row group of the current piece into chunk_; false at the end of the piece.
  bool load_chunk();

  std::shared_ptr<const ParquetFiles> files_;
  std::vector<std::string> columns_;
  std::vector<FilePiece> pieces_;
  int64_t batch_size_;
  bool drop_remainder_;

  size_t piece_pos_ = 0;  // next piece to open
  int32_t file_id_ = -1;  // file of reader_
  std::unique_ptr<parquet::FileReader> reader_;
  std::unique_ptr<parquet::RowGroupStream> stream_;
  // Per requested column: index of its first leaf in the read tables, and whether it is a map
  // (two leaves: keys, values).
  std::vector<int> first_leaf_;
  std::vector<bool> is_map_;
  std::vector<int> leaves_;  // leaf column indices read from the current file

  parquet::Table chunk_;     // the current row group's rows of the current piece
  int64_t chunk_first_ = 0;  // file row of chunk_ row 0
  int64_t chunk_pos_ = 0;    // next row of chunk_ to deliver
};

}  // namespace tzrec::data
