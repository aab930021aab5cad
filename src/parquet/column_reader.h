// Reads the pages of one column chunk and appends the rows of a row range to a ColumnData.
// Internal to the reader (file_reader.cc drives one per column and row group).
#pragma once

#include <cstdint>
#include <vector>

#include "parquet/column_data.h"
#include "parquet/errors.h"
#include "parquet/page_decoder.h"
#include "parquet/schema.h"

namespace tzrec::parquet {

// Safety limits: what a page may claim before we refuse to allocate for it.
struct ReadLimits {
  bool verify_crc = true;
  size_t max_page_bytes = size_t{1} << 30;        // uncompressed page size
  int64_t max_page_values = int64_t{1} << 28;     // level entries per page
};

// A contiguous run of a column chunk's pages, in memory.
struct PageRange {
  const uint8_t* data = nullptr;
  size_t size = 0;
  int64_t first_row = 0;   // row (within the row group) at which its first data page starts
  int64_t first_page = 0;  // ordinal of its first page within the chunk (for messages)
};

class ColumnChunkReader {
 public:
  ColumnChunkReader(const ColumnDescriptor& column, Compression codec, int64_t row_group_rows, ErrorContext context,
                    const ReadLimits& limits);

  // Appends rows [row_begin, row_end) of the row group to *out. The dictionary page, if any,
  // must be in ranges[0]. Throws DataError naming file, row group, column and page.
  void read(const std::vector<PageRange>& ranges, int64_t row_begin, int64_t row_end, ColumnData* out);

 private:
  void read_range(const PageRange& range, ColumnData* out);
  void read_dictionary(const PageHeader& h, const uint8_t* body);
  void read_data_page(const PageHeader& h, const uint8_t* body, ColumnData* out);
  void append_flat(int64_t first_row, ColumnData* out);
  void append_nested(ColumnData* out);
  void append_value(int64_t value_index, bool valid, ColumnData* out);

  const ColumnDescriptor& column_;
  Compression codec_;
  int64_t row_group_rows_;
  ErrorContext context_;
  ReadLimits limits_;
  int width_;  // bytes per fixed-width value, 0 for BYTE_ARRAY

  int64_t row_begin_ = 0;
  int64_t row_end_ = 0;
  int64_t rows_started_ = 0;  // rows begun so far in the chunk (index of the next row)
  bool in_range_ = false;     // the current row is in [row_begin_, row_end_)
  bool done_ = false;
  bool seen_data_page_ = false;
  Dictionary dict_;
  PageData page_;
};

}  // namespace tzrec::parquet
