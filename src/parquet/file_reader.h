// Parquet file reader: footer and schema, column projection, row-range reads that skip whole row
// groups and pages using metadata (row-group row counts, the offset index, page headers), and a
// row-group stream with bounded memory. Columns are decoded in parallel on a small thread pool.
//
//   ReaderOptions options;
//   options.num_threads = 2;
//   auto reader = FileReader::open("part-0.parquet", options);
//   Table t = reader->read({"label", "c1"}, 1000, 2000);   // rows [1000, 2000)
//   const ColumnData& label = t.column("label");
//
// Errors: IoError when the file cannot be read; DataError for corrupt or unsupported content,
// naming the file, row group, column and page.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parquet/column_data.h"
#include "parquet/column_reader.h"
#include "parquet/io.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace tzrec::parquet {

class ThreadPool;

struct ReaderOptions {
  int num_threads = 1;           // threads decoding columns (counting the caller)
  bool use_offset_index = true;  // skip pages of partially read row groups using the page index
  ReadLimits limits;
};

// Reads may be issued from several threads at once (decoding jobs are then serialized on the
// reader's pool when num_threads > 1).
class FileReader {
 public:
  static std::unique_ptr<FileReader> open(const std::string& path, const ReaderOptions& options = {});
  static std::unique_ptr<FileReader> open(std::shared_ptr<RandomAccessFile> file, const ReaderOptions& options = {});
  ~FileReader();

  const std::string& path() const { return file_->name(); }
  const FileMetaData& metadata() const { return metadata_; }
  const Schema& schema() const { return schema_; }
  int64_t num_rows() const { return num_rows_; }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }
  int64_t row_group_num_rows(int row_group) const;
  // Index of the first row of each row group; size num_row_groups() + 1 (last = num_rows()).
  const std::vector<int64_t>& row_group_starts() const { return row_group_starts_; }

  // Leaf column indices for names that are top-level fields (all their leaves) or leaf paths
  // ("a.list.element"); all columns when `names` is empty. Throws DataError naming the missing
  // column and the available ones.
  std::vector<int> resolve_columns(const std::vector<std::string>& names) const;

  // Rows [row_begin, row_end) of the named columns (see resolve_columns; all when empty);
  // row_end < 0: to the end.
  Table read(const std::vector<std::string>& names = {}, int64_t row_begin = 0, int64_t row_end = -1);
  // The same for leaf column indices.
  Table read_columns(const std::vector<int>& columns, int64_t row_begin = 0, int64_t row_end = -1);
  // The same into *into, reusing the buffers of its columns (reset_column).
  void read_columns(const std::vector<int>& columns, int64_t row_begin, int64_t row_end,
                    Table* into);
  Table read_row_group(int row_group, const std::vector<int>& columns);

 private:
  FileReader(std::shared_ptr<RandomAccessFile> file, const ReaderOptions& options);
  void read_footer();
  // Appends rows [lo, hi) (row-group relative) of one column chunk to *out.
  void read_chunk(int row_group, int column, int64_t lo, int64_t hi, ColumnData* out) const;

  std::shared_ptr<RandomAccessFile> file_;
  ReaderOptions options_;
  FileMetaData metadata_;
  Schema schema_;
  int64_t num_rows_ = 0;
  int64_t data_end_ = 0;  // where the footer starts: column data must end before it
  std::vector<int64_t> row_group_starts_;
  std::unique_ptr<ThreadPool> pool_;
};

// Reads a row range of a file one row group at a time: each next() returns the rows of the
// next row group inside [row_begin, row_end), so memory stays bounded by one row group of the
// projected columns. The reader must outlive the stream.
class RowGroupStream {
 public:
  RowGroupStream(FileReader* reader, std::vector<int> columns, int64_t row_begin = 0, int64_t row_end = -1);
  // The next batch, or nullopt at the end of the range.
  std::optional<Table> next();
  // The same into *out, reusing the buffers of its columns (the previous batch's); false at the
  // end.
  bool next(Table* out);
  // Absolute index of the first row the next batch will hold.
  int64_t position() const { return position_; }

 private:
  FileReader* reader_;
  std::vector<int> columns_;
  int64_t position_;
  int64_t end_;
};

}  // namespace tzrec::parquet
