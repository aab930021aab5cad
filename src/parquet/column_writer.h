// Encoding of one column chunk for the writer: shreds ColumnData rows into repetition /
// definition levels and values, chooses dictionary or PLAIN encoding, cuts pages at row
// boundaries and compresses them. Internal to writer.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parquet/column_data.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace tzrec::parquet {

struct WriterOptions;

// Rows [row_begin, row_end) of a column.
struct ColumnSegment {
  const ColumnData* column = nullptr;
  int64_t row_begin = 0;
  int64_t row_end = 0;
};

struct EncodedChunk {
  std::string bytes;                 // dictionary page (if any) then data pages, headers included
  ColumnMetaData meta;               // offsets relative to the chunk start (the writer adds its position)
  std::vector<PageLocation> pages;   // data pages; offsets relative to the chunk start
};

EncodedChunk encode_column_chunk(const ColumnDescriptor& column, const std::vector<ColumnSegment>& segments,
                                 const WriterOptions& options);

}  // namespace tzrec::parquet
